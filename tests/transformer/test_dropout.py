import keras
import numpy as np
import pytest
import tensorflow as tf

from transformer.dropout import Dropout, dropout, effective_rate


@pytest.mark.parametrize("rate", [0.0, 0.001, 0.05, 0.1, 0.2, 0.3, 0.5, 0.9, 0.995])
def test_effective_rate_is_a_multiple_of_1_256_within_1_512_of_the_request(rate):
    applied = effective_rate(rate)
    assert (applied * 256).is_integer() and 0.0 <= applied < 1.0
    assert abs(applied - rate) <= 1 / 512 + 1e-12


def test_effective_rate_of_the_configs_dropouts_and_the_largest_one():
    assert effective_rate(0.999) == 255 / 256  # never all dropped
    assert effective_rate(0.1) == 26 / 256
    assert effective_rate(0.2) == 51 / 256
    assert effective_rate(0.3) == 77 / 256


@pytest.mark.parametrize("rate", [0.1, 0.3])
def test_drops_the_effective_share_and_keeps_the_expectation(rate):
    x = tf.ones([501, 999])  # size not a multiple of 4: the last random word is only partly used
    y = dropout(x, rate, tf.constant([3, 4])).numpy()
    dropped = np.mean(y == 0)
    applied = effective_rate(rate)
    sigma = np.sqrt(applied * (1 - applied) / y.size)
    assert abs(dropped - applied) < 5 * sigma  # the share in effect, not the requested one
    np.testing.assert_allclose(np.unique(y), [0.0, 1 / (1 - applied)], rtol=1e-6)
    assert abs(y.mean() - 1.0) < 5 * sigma / (1 - applied)


def test_the_mask_depends_on_the_seed_and_on_every_element():
    x = tf.ones([64, 48])
    first = dropout(x, 0.5, tf.constant([1, 2])).numpy()
    np.testing.assert_array_equal(first, dropout(x, 0.5, tf.constant([1, 2])).numpy())
    assert not np.array_equal(first, dropout(x, 0.5, tf.constant([1, 3])).numpy())
    # The four elements that share a random word are independent: no repeating pattern.
    kept = (first != 0).reshape(-1, 4)
    assert 0.4 < kept.mean() < 0.6 and len({tuple(row) for row in kept}) == 16


def test_gradient_is_the_mask_times_the_scale():
    x = tf.random.normal([7, 33])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = dropout(x, 0.2, tf.constant([5, 6]))
    gradient = tape.gradient(y, x).numpy()
    multiplier = np.where(y.numpy() != 0, 1 / (1 - effective_rate(0.2)), 0.0)
    np.testing.assert_allclose(gradient, multiplier, rtol=1e-6)


def test_layer_is_identity_at_inference_and_new_masks_every_training_call():
    layer = Dropout(0.25)
    x = tf.ones([32, 40])
    np.testing.assert_array_equal(layer(x), x)
    np.testing.assert_array_equal(layer(x, training=False), x)
    first, second = layer(x, training=True), layer(x, training=True)
    assert not np.array_equal(first, second)
    np.testing.assert_array_equal(Dropout(0.0)(x, training=True), x)


def test_layer_keeps_the_mixed_precision_dtype_and_runs_under_xla():
    layer = Dropout(0.1, dtype="mixed_bfloat16")
    y = layer(tf.ones([3, 5, 7]), training=True)
    assert y.dtype == tf.bfloat16 and y.shape == (3, 5, 7)
    compiled = tf.function(lambda x: layer(x, training=True), jit_compile=True)
    z = compiled(tf.ones([3, 5, 7], tf.bfloat16))
    scale = float(tf.cast(256 / 230, tf.bfloat16))  # 1 / (1 - 26 / 256), rounded as Keras does
    assert z.shape == (3, 5, 7) and set(np.unique(tf.cast(z, tf.float32))) == {0.0, scale}


def test_same_global_seed_same_masks():
    masks = []
    for _ in range(2):
        keras.utils.set_random_seed(7)
        masks.append(Dropout(0.3)(tf.ones([16, 16]), training=True).numpy())
    np.testing.assert_array_equal(*masks)


@pytest.mark.parametrize("rate", [-0.1, 1.0, 1.5, "0.1", None])
def test_bad_rates_are_clear_errors(rate):
    with pytest.raises(ValueError, match=r"rate must be a number in \[0, 1\)"):
        Dropout(rate)


def test_get_config_round_trip():
    layer = Dropout(0.2, seed=3, name="drop")
    clone = Dropout.from_config(layer.get_config())
    assert (clone.rate, clone.seed, clone.name) == (0.2, 3, "drop")
