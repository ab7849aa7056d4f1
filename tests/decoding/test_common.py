import numpy as np
import pytest
import tensorflow as tf

from decoding.common import (
    forbid_tokens,
    output_length_limits,
    top_k_allowed,
    trim_output,
)
from decoding.options import SearchOptions


def limits_of(source_ids, **options):
    limits, buffer_length = output_length_limits(source_ids, SearchOptions(**options))
    return limits.numpy().tolist(), int(buffer_length)


def test_limits_use_the_real_source_length_and_the_buffer_the_padded_one():
    source = tf.constant([[5, 6, 7, 0], [5, 6, 7, 8], [0, 0, 0, 0]])
    assert limits_of(source) == ([14, 16, 10], 16)  # round(1.5 * n + 10)
    assert limits_of(source, max_length=15) == ([14, 15, 10], 15)
    assert limits_of(source, max_length_ratio=1.0, max_length_offset=0) == ([3, 4, 1], 4)


def test_limits_of_an_unknown_source_length_inside_a_graph():
    limits = tf.function(
        lambda source: output_length_limits(source, SearchOptions()),
        input_signature=[tf.TensorSpec([None, None], tf.int32)],
        autograph=False,
    )
    computed, buffer_length = limits(tf.constant([[5, 6, 7, 0]]))
    assert computed.numpy().tolist() == [14] and int(buffer_length) == 16


@pytest.mark.parametrize(
    "options",
    [{}, {"max_length": 20}, {"max_length_ratio": 1.25, "max_length_offset": 0.5}],  # ties: .5
)
def test_the_python_limit_equals_the_tensorflow_one(options):
    """CTranslate2's translator computes limits in Python; our searches in TensorFlow."""
    lengths = np.arange(0, 41)
    source = tf.constant((np.arange(40) < lengths[:, None]).astype(np.int32) * 5)
    expected, _ = limits_of(source, **options)
    computed = [SearchOptions(**options).output_length_limit(int(n)) for n in lengths]
    assert computed == expected


def test_forbidden_tokens_get_minus_infinity_scores():
    scores = forbid_tokens(tf.zeros([5, 2]), [0, 2]).numpy()  # (vocab, rows)
    assert np.all(np.isneginf(scores[[0, 2]])) and np.all(scores[[1, 3, 4]] == 0)


@pytest.mark.parametrize("vocab_size", [8000, 97, 6])  # blocks of 80; 97 is prime; fewer blocks
def test_top_k_allowed_equals_top_k_of_the_forbidden_scores(vocab_size):
    """Forbidden ids are the best scores of their blocks, and ties are frequent (rounded)."""
    rng = np.random.default_rng(0)
    scores = np.round(rng.normal(size=[16, vocab_size]), 1).astype(np.float32)
    scores[:, [0, 2]] = 10.0
    forbidden = [0, 2]
    values, ids = top_k_allowed(tf.constant(scores.T), 4, forbidden)  # vocabulary-major
    expected_values, expected_ids = tf.math.top_k(
        tf.transpose(forbid_tokens(tf.constant(scores.T), forbidden)), 4
    )
    np.testing.assert_array_equal(values, expected_values)
    np.testing.assert_array_equal(ids, expected_ids)


def test_trim_output_drops_padding_only_columns():
    ids = tf.constant([[7, 3, 0, 0], [7, 8, 3, 0]])
    assert trim_output(ids, pad_id=0).numpy().tolist() == [[7, 3, 0], [7, 8, 3]]
