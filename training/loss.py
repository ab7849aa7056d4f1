"""Label-smoothed cross-entropy and accuracy with padding excluded."""

from __future__ import annotations

import tensorflow as tf


def label_smoothed_loss(
    logits: tf.Tensor, targets: tf.Tensor, label_smoothing: float, pad_id: int = 0
) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
    """Sums over non-padding target positions.

    The smoothed target puts ``1 - label_smoothing`` on the reference token and spreads
    ``label_smoothing`` uniformly over the whole vocabulary (Szegedy et al., 2016).

    Args:
        logits: float ``(batch, length, vocab)``.
        targets: int ``(batch, length)``; ``pad_id`` positions count for nothing.

    Returns:
        ``(loss_sum, correct_sum, token_count)`` float32 scalars; the mean loss is
        ``loss_sum / token_count``, accuracy ``correct_sum / token_count``.

    Example:
        >>> loss_sum, correct, count = label_smoothed_loss(logits, target_out, 0.1)
    """
    logits = tf.cast(logits, tf.float32)
    vocab_size = tf.shape(logits)[-1]
    log_probs = tf.nn.log_softmax(logits)
    reference = -tf.gather(log_probs, targets, batch_dims=2)  # (batch, length)
    uniform = -tf.reduce_mean(log_probs, axis=-1)
    per_token = (1.0 - label_smoothing) * reference + label_smoothing * uniform
    # Subtract the entropy of the smoothed target so that a perfect prediction scores 0.
    on = 1.0 - label_smoothing + label_smoothing / tf.cast(vocab_size, tf.float32)
    off = label_smoothing / tf.cast(vocab_size, tf.float32)
    entropy = -(
        on * tf.math.log(on) + (tf.cast(vocab_size, tf.float32) - 1.0) * tf.math.xlogy(off, off)
    )
    weights = tf.cast(targets != pad_id, tf.float32)
    predictions = tf.argmax(logits, axis=-1, output_type=targets.dtype)
    correct = tf.cast(predictions == targets, tf.float32) * weights
    return (
        tf.reduce_sum((per_token - entropy) * weights),
        tf.reduce_sum(correct),
        tf.reduce_sum(weights),
    )
