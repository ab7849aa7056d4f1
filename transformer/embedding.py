"""Token embeddings scaled by sqrt(d_model) plus the paper's sinusoidal positional encoding."""

from __future__ import annotations

import keras
import tensorflow as tf


def positional_encoding(
    positions: tf.Tensor, depth: int, dtype: tf.DType = tf.float32
) -> tf.Tensor:
    """Sinusoidal encoding of Vaswani et al. (2017), section 3.5.

    PE(pos, 2i) = sin(pos / 10000^(2i / depth)) and PE(pos, 2i + 1) = cos(pos / 10000^(2i / depth)):
    sines on even features, cosines on odd ones, interleaved as in the paper.

    Args:
        positions: integer positions, any shape ``P``.
        depth: the (even) model width.

    Returns:
        ``P + (depth,)`` encodings in ``dtype``.

    Example:
        >>> positional_encoding(tf.range(5), 512).shape
        TensorShape([5, 512])
    """
    if depth % 2:
        raise ValueError(f"the positional encoding needs an even depth, got {depth}.")
    inverse_frequencies = 10000.0 ** (-tf.range(0, depth, 2, dtype=tf.float32) / depth)
    angles = tf.cast(positions, tf.float32)[..., tf.newaxis] * inverse_frequencies  # P + (depth/2,)
    interleaved = tf.stack([tf.sin(angles), tf.cos(angles)], axis=-1)  # P + (depth/2, 2)
    return tf.cast(tf.reshape(interleaved, tf.concat([tf.shape(positions), [depth]], 0)), dtype)


class TokenEmbedding(keras.layers.Layer):
    """Embeds token ids, scales by sqrt(d_model), adds positional encodings.

    The same matrix can project decoder states back to vocabulary logits (:meth:`logits`), which
    ties the output layer to the embedding (Press & Wolf, 2017; the paper's section 3.4).

    Example:
        >>> embed = TokenEmbedding(vocab_size=8000, d_model=256)
        >>> embed(tf.constant([[5, 6, 7]])).shape
        TensorShape([1, 3, 256])
    """

    def __init__(self, vocab_size: int, d_model: int, **kwargs) -> None:
        super().__init__(**kwargs)
        self.vocab_size = vocab_size
        self.d_model = d_model
        self.embedding = keras.layers.Embedding(
            vocab_size,
            d_model,
            embeddings_initializer=keras.initializers.RandomNormal(stddev=d_model**-0.5),
            dtype=self.dtype_policy,
            name="embedding",
        )

    def build(self, token_ids_shape: tuple) -> None:
        self.embedding.build(token_ids_shape)
        self.built = True

    def call(self, token_ids: tf.Tensor, positions: tf.Tensor | None = None) -> tf.Tensor:
        """``(batch, length)`` ids -> ``(batch, length, d_model)``; default positions 0..len-1."""
        if positions is None:
            positions = tf.range(tf.shape(token_ids)[1])
        embedded = self.embedding(token_ids) * tf.cast(self.d_model**0.5, self.compute_dtype)
        return embedded + positional_encoding(positions, self.d_model, self.compute_dtype)

    def logits(self, states: tf.Tensor) -> tf.Tensor:
        """``(..., d_model)`` states -> ``(..., vocab_size)`` float32 logits (tied matrix)."""
        matrix = tf.cast(self.embedding.embeddings, states.dtype)  # (vocab_size, d_model)
        return tf.cast(tf.tensordot(states, matrix, [[-1], [1]]), tf.float32)

    def vocab_major_logits(
        self, states: tf.Tensor, output_ids: tf.Tensor | None = None
    ) -> tf.Tensor:
        """``(rows, d_model)`` states -> ``(vocab_size, rows)`` float32 logits: ``matrix @
        states^T``, the product a CPU computes without copying a transposed operand (a decoding
        step's few rows: 2x cheaper than ``states @ matrix^T``, with or without XLA).

        ``output_ids``: ``(n,)`` int32 token ids to score alone (a vocabulary shortlist): the
        logits are then ``(n, rows)``, row i token ``output_ids[i]``'s."""
        matrix = self.embedding.embeddings  # (vocab_size, d_model)
        if output_ids is not None:
            matrix = tf.gather(matrix, output_ids)  # (n, d_model)
        matrix = tf.cast(matrix, states.dtype)
        return tf.cast(tf.matmul(matrix, states, transpose_b=True), tf.float32)

    def get_config(self) -> dict:
        config = super().get_config()
        config.update(vocab_size=self.vocab_size, d_model=self.d_model)
        return config
