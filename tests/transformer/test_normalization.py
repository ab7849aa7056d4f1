import keras
import numpy as np
import pytest
import tensorflow as tf

from transformer.normalization import LayerNormalization


def keras_and_ours(features, epsilon=1e-6):
    reference = keras.layers.LayerNormalization(epsilon=epsilon)
    ours = LayerNormalization(epsilon)
    for layer in (reference, ours):
        layer.build((None, features))
    rng = np.random.default_rng(0)
    reference.gamma.assign(rng.normal(size=features))
    reference.beta.assign(rng.normal(size=features))
    ours.gamma.assign(reference.gamma)
    ours.beta.assign(reference.beta)
    return reference, ours


def output_and_gradients(layer, x, upstream):
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = layer(x)
        objective = tf.reduce_sum(tf.cast(y, tf.float32) * upstream)
    return y, tape.gradient(objective, [x, layer.gamma, layer.beta])


def test_matches_keras_layer_normalization_forward_and_backward():
    reference, ours = keras_and_ours(16)
    rng = np.random.default_rng(1)
    x = tf.constant(rng.normal(loc=2.0, scale=3.0, size=[4, 5, 16]), tf.float32)
    upstream = tf.constant(rng.normal(size=[4, 5, 16]), tf.float32)
    expected_y, expected_gradients = output_and_gradients(reference, x, upstream)
    y, gradients = output_and_gradients(ours, x, upstream)
    np.testing.assert_allclose(y, expected_y, atol=1e-5)
    for gradient, expected in zip(gradients, expected_gradients, strict=True):
        np.testing.assert_allclose(gradient, expected, atol=1e-4)


def test_gradient_matches_finite_differences():
    _, ours = keras_and_ours(6)
    x = tf.constant(np.random.default_rng(2).normal(size=[3, 6]), tf.float64)
    ours_64 = LayerNormalization(dtype="float64")
    ours_64.build((None, 6))
    ours_64.gamma.assign(tf.cast(ours.gamma, tf.float64))
    theoretical, numerical = tf.test.compute_gradient(ours_64, [x])
    np.testing.assert_allclose(theoretical[0], numerical[0], atol=1e-6)


def test_bfloat16_inputs_are_normalized_in_float32_and_returned_in_bfloat16():
    reference, _ = keras_and_ours(32)
    ours = LayerNormalization(dtype="mixed_bfloat16")
    ours.build((None, 32))
    ours.gamma.assign(reference.gamma)
    ours.beta.assign(reference.beta)
    x = tf.random.normal([8, 32]) * 100.0 + 1000.0  # large offset: a bfloat16 variance would fail
    y = ours(tf.cast(x, tf.bfloat16))
    assert y.dtype == tf.bfloat16 and ours.gamma.dtype == "float32"
    np.testing.assert_allclose(
        tf.cast(y, tf.float32), reference(tf.cast(tf.cast(x, tf.bfloat16), tf.float32)), atol=0.05
    )


def test_weights_are_named_like_keras_so_checkpoints_keep_loading():
    layer = LayerNormalization(name="feed_forward_norm")
    layer.build((None, 8))
    assert [w.path for w in layer.weights] == ["feed_forward_norm/gamma", "feed_forward_norm/beta"]


@pytest.mark.parametrize("epsilon", [0.0, -1e-6, "1e-6"])
def test_bad_epsilon_is_a_clear_error(epsilon):
    with pytest.raises(ValueError, match="epsilon must be a positive number"):
        LayerNormalization(epsilon)


def test_get_config_round_trip():
    clone = LayerNormalization.from_config(LayerNormalization(1e-5, name="norm").get_config())
    assert (clone.epsilon, clone.name) == (1e-5, "norm")
