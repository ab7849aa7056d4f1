import keras
import numpy as np
import pytest
import tensorflow as tf

from transformer.attention import MultiHeadAttention, masked_softmax, scaled_dot_product_attention


def numpy_attention(q, k, v, mask):
    """The paper's formula, written independently: softmax(q k^T / sqrt(d_k)) v, masked."""
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    scores = np.where(mask, scores, -np.inf)
    weights = np.exp(scores - scores.max(-1, keepdims=True))
    weights /= weights.sum(-1, keepdims=True)
    return weights @ v, weights


def random_mask(rng, shape):
    mask = rng.random(shape) > 0.4
    mask[..., 0] = True  # at least one visible key per query, so the reference has no 0/0
    return mask


def test_scaled_dot_product_attention_matches_numpy_reference():
    rng = np.random.default_rng(0)
    q, k = rng.normal(size=[2, 3, 5, 16]), rng.normal(size=[2, 3, 7, 16])
    v = rng.normal(size=[2, 3, 7, 8])  # d_v != d_k
    mask = random_mask(rng, [2, 3, 5, 7])
    output, weights = scaled_dot_product_attention(
        *(tf.constant(a, tf.float32) for a in (q, k, v)), tf.constant(mask)
    )
    expected_output, expected_weights = numpy_attention(q, k, v, mask)
    np.testing.assert_allclose(weights, expected_weights, atol=1e-5)
    np.testing.assert_allclose(output, expected_output, atol=1e-5)


def split_heads(x, num_heads):
    batch, length, width = x.shape
    return x.reshape(batch, length, num_heads, width // num_heads).transpose(0, 2, 1, 3)


def test_multi_head_attention_matches_numpy_reference_with_per_head_scaling():
    rng = np.random.default_rng(1)
    num_heads, key_dim, value_dim = 4, 8, 6
    layer = MultiHeadAttention(num_heads, key_dim, value_dim)
    queries, keys = rng.normal(size=[2, 5, 12]), rng.normal(size=[2, 7, 10])
    values = rng.normal(size=[2, 7, 10])
    mask = random_mask(rng, [2, 1, 5, 7])
    output, weights = layer(
        *(tf.constant(a, tf.float32) for a in (queries, keys, values)),
        attention_mask=tf.constant(mask),
        return_attention_scores=True,
    )

    def dense(d, x):
        return x @ d.kernel.numpy() + d.bias.numpy()

    q = split_heads(dense(layer.W_q, queries), num_heads)
    k = split_heads(dense(layer.W_k, keys), num_heads)
    v = split_heads(dense(layer.W_v, values), num_heads)
    heads, expected_weights = numpy_attention(q, k, v, mask)  # scaled by 1/sqrt(key_dim = 8)
    concatenated = heads.transpose(0, 2, 1, 3).reshape(2, 5, num_heads * value_dim)
    np.testing.assert_allclose(weights, expected_weights, atol=1e-5)
    np.testing.assert_allclose(output, dense(layer.W_o, concatenated), atol=1e-4)
    assert output.shape == (2, 5, 12)  # output_dim defaults to the queries' width


def test_projection_kernels_have_the_documented_shapes():
    layer = MultiHeadAttention(num_heads=4, key_dim=8, value_dim=6, output_dim=20)
    layer(tf.ones([1, 3, 12]), tf.ones([1, 5, 10]), tf.ones([1, 5, 9]))
    assert layer.W_q.kernel.shape == (12, 32)
    assert layer.W_k.kernel.shape == (10, 32)
    assert layer.W_v.kernel.shape == (9, 24)
    assert layer.W_o.kernel.shape == (24, 20)


def test_multi_head_attention_equals_keras_layer_with_copied_weights():
    rng = np.random.default_rng(2)
    num_heads, key_dim, value_dim, output_dim = 3, 8, 5, 11
    ours = MultiHeadAttention(num_heads, key_dim, value_dim, output_dim=output_dim)
    reference = keras.layers.MultiHeadAttention(
        num_heads, key_dim, value_dim=value_dim, output_shape=output_dim
    )
    queries = tf.constant(rng.normal(size=[2, 4, 12]), tf.float32)
    keys = tf.constant(rng.normal(size=[2, 6, 10]), tf.float32)
    values = tf.constant(rng.normal(size=[2, 6, 7]), tf.float32)
    mask = tf.constant(random_mask(rng, [2, 4, 6]))  # Keras' rank-3 layout
    ours(queries, keys, values)
    reference(queries, values, key=keys)
    pairs = [
        (ours.W_q, reference._query_dense),
        (ours.W_k, reference._key_dense),
        (ours.W_v, reference._value_dense),
    ]
    for mine, theirs in pairs:
        mine.kernel.assign(tf.reshape(theirs.kernel, mine.kernel.shape))
        mine.bias.assign(tf.reshape(theirs.bias, mine.bias.shape))
    ours.W_o.kernel.assign(tf.reshape(reference._output_dense.kernel, ours.W_o.kernel.shape))
    ours.W_o.bias.assign(reference._output_dense.bias)

    output, weights = ours(queries, keys, values, attention_mask=mask, return_attention_scores=True)
    expected, expected_weights = reference(
        queries, values, key=keys, attention_mask=mask, return_attention_scores=True
    )
    np.testing.assert_allclose(output, expected, atol=1e-5)
    np.testing.assert_allclose(weights, expected_weights, atol=1e-6)


def test_masked_keys_and_values_have_no_influence():
    rng = np.random.default_rng(3)
    layer = MultiHeadAttention(num_heads=2, key_dim=4)
    queries = tf.constant(rng.normal(size=[1, 3, 8]), tf.float32)
    memory = rng.normal(size=[1, 5, 8])
    mask = tf.constant([[[[True, True, False, True, False]]]])
    changed = memory.copy()
    changed[:, [2, 4]] = rng.normal(size=[1, 2, 8]) * 1000.0
    before = layer(queries, tf.constant(memory, tf.float32), attention_mask=mask)
    after = layer(queries, tf.constant(changed, tf.float32), attention_mask=mask)
    np.testing.assert_array_equal(before, after)


def test_seed_tutorial_example_shape():
    layer = MultiHeadAttention(num_heads=8, key_dim=64, value_dim=64)
    rng = np.random.default_rng(4)
    x = [tf.constant(rng.random([64, 5, 512]), tf.float32) for _ in range(3)]
    assert layer(*x).shape == (64, 5, 512)


@pytest.mark.parametrize("dtype", [tf.float32, tf.float16, tf.bfloat16])
def test_masked_softmax_is_finite_for_large_logits_and_fully_masked_rows(dtype):
    logits = tf.constant([[6e4, -6e4, 3e4], [1.0, 2.0, 3.0], [5.0, 5.0, 5.0]], dtype)
    mask = tf.constant([[True, True, False], [False, False, False], [True, False, True]])
    weights = masked_softmax(logits, mask)
    assert weights.dtype == dtype
    weights = tf.cast(weights, tf.float32).numpy()
    assert np.all(np.isfinite(weights))
    np.testing.assert_allclose(weights, [[1, 0, 0], [0, 0, 0], [0.5, 0, 0.5]], atol=1e-3)


@pytest.mark.parametrize("policy", ["mixed_float16", "mixed_bfloat16"])
def test_mixed_precision_attention_stays_finite_with_fully_masked_rows(policy):
    keras.mixed_precision.set_global_policy(policy)
    layer = MultiHeadAttention(num_heads=2, key_dim=8)
    x = tf.constant(np.random.default_rng(5).normal(size=[2, 4, 16]) * 100.0, tf.float32)
    mask = tf.constant(np.array([[True, False, True, True], [False] * 4])[:, None, None, :])
    output, weights = layer(x, x, x, attention_mask=mask, return_attention_scores=True)
    assert output.dtype == layer.compute_dtype
    assert np.all(np.isfinite(tf.cast(output, tf.float32)))
    np.testing.assert_array_equal(tf.cast(weights[1], tf.float32), 0.0)  # fully masked row


def test_bad_arguments_fail_with_clear_messages():
    with pytest.raises(ValueError, match="num_heads must be a positive integer"):
        MultiHeadAttention(num_heads=0, key_dim=8)
    with pytest.raises(ValueError, match=r"dropout must be a number in \[0, 1\)"):
        MultiHeadAttention(num_heads=2, key_dim=8, dropout=-0.1)
    with pytest.raises(ValueError, match="attention_mask must have rank 4"):
        MultiHeadAttention(2, 4)(tf.ones([1, 3, 8]), attention_mask=tf.ones([3, 3], tf.bool))


def test_get_config_round_trip():
    layer = MultiHeadAttention(num_heads=3, key_dim=8, value_dim=5, output_dim=7, dropout=0.1)
    clone = MultiHeadAttention.from_config(layer.get_config())
    assert clone.get_config() == layer.get_config()
