"""A Dense layer whose rank-3 inputs go through one 2-D matmul."""

from __future__ import annotations

import keras
import tensorflow as tf


class Dense(keras.layers.Dense):
    """``keras.layers.Dense`` that applies its kernel to ``(batch, length, features)`` inputs as
    one ``(batch * length, features)`` matmul.

    Keras applies a Dense layer to a rank-3 input with ``tf.tensordot``: about ten shape
    operations (shape, gathers, products, concatenations, a transposition) around one matmul.
    Outside XLA each costs an operation dispatch, more than the matmul itself at a decoding step's
    few rows, and a step runs 8 such layers per decoder layer. Here a rank-3 input costs two
    reshapes. Same weights, same results, same checkpoints as ``keras.layers.Dense``.

    Example:
        >>> Dense(8, name="projection")(tf.ones([2, 1, 4])).shape
        TensorShape([2, 1, 8])
    """

    def call(self, inputs: tf.Tensor, training: bool | None = None) -> tf.Tensor:
        if inputs.shape.rank != 3:
            return super().call(inputs, training=training)
        rows = tf.reshape(inputs, [-1, inputs.shape[-1]])  # (batch * length, features)
        outputs = super().call(rows, training=training)  # (batch * length, units)
        length = inputs.shape[1]
        if length is None:  # (batch, length) known only when run
            return tf.reshape(outputs, tf.concat([tf.shape(inputs)[:2], [self.units]], axis=0))
        return tf.reshape(outputs, [-1, length, self.units])
