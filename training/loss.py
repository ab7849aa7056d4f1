"""Label-smoothed cross-entropy and accuracy with padding excluded."""

from __future__ import annotations

from collections.abc import Callable

import tensorflow as tf


# Compiled by XLA, which fuses the passes over the (batch, length, vocab) logits that the separate
# kernels make one by one: forward and backward 1.6x faster on a 2-core CPU, a training step 373
# instead of 407 ms (docs/PERFORMANCE.md, "What made the training step faster"). One compilation
# (0.2-0.5 s) per logits shape: ~50 shapes for Multi30k's bucketed batches, all in the first
# epoch; a run of a few steps meets a new shape at nearly every step (see loss_function).
@tf.function(jit_compile=True)
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
    num_classes = tf.shape(logits)[-1]
    vocab_size = tf.cast(num_classes, tf.float32)
    on = 1.0 - label_smoothing + label_smoothing / vocab_size
    off = label_smoothing / vocab_size
    # One fused op computes -sum(smoothed * log_softmax(logits)) and, already in the forward
    # pass, its gradient softmax - smoothed: fewer passes over the (batch, length, vocab) logits
    # than log_softmax, a gather and a mean, each with its own gradient.
    smoothed = tf.one_hot(targets, num_classes, on_value=on, off_value=off)
    per_token = tf.nn.softmax_cross_entropy_with_logits(labels=smoothed, logits=logits)
    # Subtract the entropy of the smoothed target so that a perfect prediction scores 0.
    entropy = -(on * tf.math.log(on) + (vocab_size - 1.0) * tf.math.xlogy(off, off))
    weights = tf.cast(targets != pad_id, tf.float32)
    predictions = tf.argmax(logits, axis=-1, output_type=targets.dtype)
    correct = tf.cast(predictions == targets, tf.float32) * weights
    return (
        tf.reduce_sum((per_token - entropy) * weights),
        tf.reduce_sum(correct),
        tf.reduce_sum(weights),
    )


def loss_function(compiled: bool = True) -> Callable[..., tuple[tf.Tensor, tf.Tensor, tf.Tensor]]:
    """``label_smoothed_loss`` compiled by XLA on its own, or (``compiled=False``) its plain
    Python function, traced into the caller's graph: no compilation per batch shape, which is
    what a run of a few dozen steps (configs/tiny.py) spends most of its step time on.

    Example:
        >>> loss_sum, correct, count = loss_function(compiled=False)(logits, target_out, 0.1)
    """
    return label_smoothed_loss if compiled else label_smoothed_loss.python_function
