import numpy as np
import pytest
import tensorflow as tf

from decoding.common import forbid_tokens, output_length_limits, trim_output


def limits_of(source_ids, **options):
    options = {"max_length": None, "max_length_ratio": 1.5, "max_length_offset": 10, **options}
    limits, buffer_length = output_length_limits(source_ids, pad_id=0, **options)
    return limits.numpy().tolist(), int(buffer_length)


def test_limits_use_the_real_source_length_and_the_buffer_the_padded_one():
    source = tf.constant([[5, 6, 7, 0], [5, 6, 7, 8], [0, 0, 0, 0]])
    assert limits_of(source) == ([14, 16, 10], 16)  # round(1.5 * n + 10)
    assert limits_of(source, max_length=15) == ([14, 15, 10], 15)
    assert limits_of(source, max_length_ratio=1.0, max_length_offset=0) == ([3, 4, 1], 4)


def test_limits_of_an_unknown_source_length_inside_a_graph():
    limits = tf.function(
        lambda source: output_length_limits(
            source, max_length=None, max_length_ratio=1.5, max_length_offset=10, pad_id=0
        ),
        input_signature=[tf.TensorSpec([None, None], tf.int32)],
    )
    computed, buffer_length = limits(tf.constant([[5, 6, 7, 0]]))
    assert computed.numpy().tolist() == [14] and int(buffer_length) == 16


@pytest.mark.parametrize(
    "options, message",
    [
        ({"max_length": 0}, "max_length must be a positive integer"),
        ({"max_length_ratio": -1.0}, "must not be negative"),
    ],
)
def test_bad_length_options_fail_with_clear_messages(options, message):
    with pytest.raises(ValueError, match=message):
        limits_of(tf.constant([[5]]), **options)


def test_forbidden_tokens_get_minus_infinity_scores():
    scores = forbid_tokens(tf.zeros([2, 5]), [0, 2]).numpy()
    assert np.all(np.isneginf(scores[:, [0, 2]])) and np.all(scores[:, [1, 3, 4]] == 0)


def test_trim_output_drops_padding_only_columns():
    ids = tf.constant([[7, 3, 0, 0], [7, 8, 3, 0]])
    assert trim_output(ids, pad_id=0).numpy().tolist() == [[7, 3, 0], [7, 8, 3]]
