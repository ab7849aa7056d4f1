import numpy as np
import tensorflow as tf

from decoding.common import forbid_tokens, output_length_limits, trim_output
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
    )
    computed, buffer_length = limits(tf.constant([[5, 6, 7, 0]]))
    assert computed.numpy().tolist() == [14] and int(buffer_length) == 16


def test_forbidden_tokens_get_minus_infinity_scores():
    scores = forbid_tokens(tf.zeros([2, 5]), [0, 2]).numpy()
    assert np.all(np.isneginf(scores[:, [0, 2]])) and np.all(scores[:, [1, 3, 4]] == 0)


def test_trim_output_drops_padding_only_columns():
    ids = tf.constant([[7, 3, 0, 0], [7, 8, 3, 0]])
    assert trim_output(ids, pad_id=0).numpy().tolist() == [[7, 3, 0], [7, 8, 3]]
