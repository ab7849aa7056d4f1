"""Layer normalization (Ba et al., 2016) over the last axis, with a hand-written gradient.

``keras.layers.LayerNormalization`` leaves the backward pass to automatic differentiation, which
builds about twice as many elementwise passes over the activations as the closed form below. The
forward pass is the same formula; both run in float32 (float64 for float64 inputs), so bfloat16 and
float16 activations are normalized in full precision, and return the input dtype.
"""

from __future__ import annotations

import keras
import tensorflow as tf

from transformer.settings import LAYER_NORM_EPSILON


def layer_norm(
    x: tf.Tensor, gamma: tf.Tensor, beta: tf.Tensor, epsilon: float = LAYER_NORM_EPSILON
) -> tf.Tensor:
    """``gamma * (x - mean) / sqrt(variance + epsilon) + beta`` over the last axis of ``x``.

    Args:
        x: ``(..., features)``, any floating dtype; the result has the same dtype.
        gamma, beta: ``(features,)`` scale and offset.
        epsilon: added to the variance.

    Example:
        >>> layer_norm(tf.constant([[1.0, 3.0]]), tf.ones([2]), tf.zeros([2]))
        <tf.Tensor: ... numpy=array([[-0.999999...,  0.999999...]], dtype=float32)>
    """
    dtype = tf.float64 if x.dtype == tf.float64 else tf.float32  # never below float32

    @tf.custom_gradient
    def normalize(x: tf.Tensor, gamma: tf.Tensor, beta: tf.Tensor):
        wide = tf.cast(x, dtype)
        centered = wide - tf.reduce_mean(wide, axis=-1, keepdims=True)
        inverse_std = tf.math.rsqrt(
            tf.reduce_mean(tf.square(centered), axis=-1, keepdims=True) + epsilon
        )
        normalized = centered * inverse_std

        def gradient(upstream: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
            upstream = tf.cast(upstream, dtype)
            outer_axes = list(range(x.shape.rank - 1))
            d_normalized = upstream * gamma
            # d/dx of (x - mean) * inverse_std, applied to d_normalized, in closed form.
            d_x = inverse_std * (
                d_normalized
                - tf.reduce_mean(d_normalized, axis=-1, keepdims=True)
                - normalized * tf.reduce_mean(d_normalized * normalized, axis=-1, keepdims=True)
            )
            return (
                tf.cast(d_x, x.dtype),
                tf.reduce_sum(upstream * normalized, axis=outer_axes),
                tf.reduce_sum(upstream, axis=outer_axes),
            )

        return tf.cast(normalized * gamma + beta, x.dtype), gradient

    return normalize(x, tf.cast(gamma, dtype), tf.cast(beta, dtype))


class LayerNormalization(keras.layers.Layer):
    """Layer normalization over the last axis with learned ``gamma`` and ``beta``.

    The same weights (names included) and outputs as ``keras.layers.LayerNormalization(
    epsilon=epsilon)``; the backward pass is :func:`layer_norm`'s closed form.

    Args:
        epsilon: added to the variance.

    Example:
        >>> LayerNormalization()(tf.ones([2, 5, 8])).shape
        TensorShape([2, 5, 8])
    """

    def __init__(self, epsilon: float = LAYER_NORM_EPSILON, **kwargs) -> None:
        super().__init__(**kwargs)
        if not isinstance(epsilon, int | float) or epsilon <= 0:
            raise ValueError(f"epsilon must be a positive number, got {epsilon!r}.")
        self.epsilon = epsilon

    def build(self, input_shape: tuple) -> None:
        features = input_shape[-1]
        if features is None:
            raise ValueError(f"The last axis must have a known size; got shape {input_shape}.")
        # autocast=False: gamma and beta stay float32 under mixed precision.
        self.gamma = self.add_weight(
            name="gamma", shape=(features,), initializer="ones", autocast=False
        )
        self.beta = self.add_weight(
            name="beta", shape=(features,), initializer="zeros", autocast=False
        )
        self.built = True

    def call(self, inputs: tf.Tensor) -> tf.Tensor:
        gamma, beta = tf.convert_to_tensor(self.gamma), tf.convert_to_tensor(self.beta)
        return tf.cast(layer_norm(inputs, gamma, beta, self.epsilon), self.compute_dtype)

    def compute_output_shape(self, input_shape: tuple) -> tuple:
        return input_shape

    def get_config(self) -> dict:
        config = super().get_config()
        config.update(epsilon=self.epsilon)
        return config


__all__ = ["LayerNormalization", "layer_norm"]
