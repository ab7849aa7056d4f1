"""Inverted dropout that draws one random byte per element instead of one 32-bit float.

Keras' ``Dropout`` draws a 32-bit uniform float for every element. On a CPU those random numbers
cost about a sixth of a whole training step of the small Transformer
(``benchmarks/train_step_parts.py``; the README has the figures). :class:`Dropout` splits every
random 32-bit word into four bytes, one decision per element, so it draws a quarter of the random
numbers and compares bytes instead of floats. The price is resolution: an element is dropped when
its byte is below ``k = round(256 * rate)``, so the rate in effect is ``k / 256``, at most 1/512
from the requested one (0.1 -> 26/256 = 0.1016, 0.2 -> 51/256 = 0.1992, 0.3 -> 77/256 = 0.3008).
Kept elements are scaled by ``256 / (256 - k)``, the exact inverse of the keep probability in
effect, so the expected output still equals the input.
"""

from __future__ import annotations

import keras
import tensorflow as tf

from transformer.settings import check_rate

_LEVELS = 256  # one byte of random bits per element


def effective_rate(rate: float) -> float:
    """The dropout rate :class:`Dropout` applies for a requested ``rate``: a multiple of 1/256.

    Example:
        >>> effective_rate(0.1)
        0.1015625
    """
    check_rate("rate", rate)
    return min(round(rate * _LEVELS), _LEVELS - 1) / _LEVELS


def dropout(inputs: tf.Tensor, rate: float, seed: tf.Tensor) -> tf.Tensor:
    """Zeroes each element with probability ``effective_rate(rate)`` and scales the others.

    Args:
        inputs: any floating tensor.
        rate: requested dropout rate in [0, 1).
        seed: int32 ``(2,)`` seed of the stateless random bits; the same seed, the same mask.

    Example:
        >>> dropout(tf.ones([2, 3]), 0.5, tf.constant([1, 2])).shape
        TensorShape([2, 3])
    """
    threshold = round(effective_rate(rate) * _LEVELS)
    if threshold == 0:
        return inputs
    size = tf.size(inputs)
    words = tf.random.stateless_uniform(
        [(size + 3) // 4], seed, minval=None, maxval=None, dtype=tf.uint32
    )
    random_bytes = tf.reshape(tf.bitcast(words, tf.uint8), [-1])[:size]  # 4 bytes a word
    keep = tf.reshape(random_bytes >= tf.constant(threshold, tf.uint8), tf.shape(inputs))
    # One multiplier tensor (0 or the scale): one elementwise op forward and one backward.
    scale = tf.constant(_LEVELS / (_LEVELS - threshold), inputs.dtype)
    return inputs * tf.where(keep, scale, tf.constant(0, inputs.dtype))


class Dropout(keras.layers.Layer):
    """Inverted dropout, active only with ``training=True``; see the module docstring for how it
    differs from ``keras.layers.Dropout`` (a quarter of the random numbers; the rate rounded to a
    multiple of 1/256).

    Args:
        rate: requested share of elements to drop, in [0, 1); ``effective_rate`` gives the one
            applied.
        seed: seeds the layer's ``keras.random.SeedGenerator`` (``None``: drawn from Keras'
            global seed, which ``keras.utils.set_random_seed`` fixes).

    Example:
        >>> layer = Dropout(0.1)
        >>> layer(tf.ones([2, 8]), training=True).shape
        TensorShape([2, 8])
    """

    def __init__(self, rate: float, seed: int | None = None, **kwargs) -> None:
        super().__init__(**kwargs)
        check_rate("rate", rate)
        self.rate, self.seed = rate, seed
        self.seed_generator = keras.random.SeedGenerator(seed) if rate > 0 else None
        self.built = True

    def call(self, inputs: tf.Tensor, training: bool = False) -> tf.Tensor:
        if not training or self.seed_generator is None:
            return inputs
        seed = tf.cast(tf.math.floormod(self.seed_generator.next(), tf.int32.max - 1), tf.int32)
        return dropout(inputs, self.rate, seed)

    def compute_output_shape(self, input_shape: tuple) -> tuple:
        return input_shape

    def get_config(self) -> dict:
        config = super().get_config()
        config.update(rate=self.rate, seed=self.seed)
        return config


__all__ = [
    "Dropout",
    "dropout",
    "effective_rate",
]
