from dataclasses import replace

import numpy as np
import pytest
import tensorflow as tf

from common.special_tokens import BOS_ID, EOS_ID, PAD_ID
from decoding.common import output_length_limits
from decoding.greedy import greedy_search, reference_greedy_search
from decoding.options import SearchOptions

# Short limits keep the tests fast: round(1.0 * source_length + 4) tokens.
LENGTHS = SearchOptions(max_length_ratio=1.0, max_length_offset=4)


def limits(sources, **options):
    return output_length_limits(sources, replace(LENGTHS, **options))[0].numpy()


def row_lengths(ids):
    return np.sum(ids.numpy() != PAD_ID, axis=1)


@pytest.mark.parametrize("norm_first", [False, True])
def test_cached_greedy_equals_the_no_cache_reference(make_model, sources, norm_first):
    model = make_model(norm_first=norm_first)
    cached = greedy_search(model, sources, LENGTHS).numpy()
    np.testing.assert_array_equal(cached, reference_greedy_search(model, sources, LENGTHS))
    ended_with_eos = np.any(cached == EOS_ID, axis=1)
    assert ended_with_eos.any() and not ended_with_eos.all()  # both ways of finishing occur


def test_a_growing_cache_in_a_graph_changes_no_output(make_model, sources):
    """As ``ModelTranslator`` runs it without XLA: unknown shapes, the cache grows each step."""
    model = make_model()
    graph = tf.function(
        lambda ids: greedy_search(model, ids, LENGTHS, dynamic_shapes=True),
        input_signature=[tf.TensorSpec([None, None], tf.int32)],
        autograph=False,
    )
    np.testing.assert_array_equal(graph(sources), greedy_search(model, sources, LENGTHS))


def test_output_ends_at_eos_inclusive_then_padding(make_model, sources):
    ids = greedy_search(make_model(), sources, LENGTHS).numpy()
    assert ids.shape[1] == row_lengths(tf.constant(ids)).max()
    for row, limit in zip(ids, limits(sources), strict=True):
        length = np.argmax(row == EOS_ID) + 1 if EOS_ID in row else limit
        assert np.all(row[length:] == PAD_ID)
        assert not np.isin(row[:length], [PAD_ID, BOS_ID]).any()
        assert not np.any(row[: length - 1] == EOS_ID)


def test_a_sentence_decodes_the_same_alone_and_in_a_padded_batch(make_model, sources):
    model = make_model()
    batch = greedy_search(model, sources, LENGTHS).numpy()
    for row in (1, 4):  # short sentences among longer ones
        alone = sources[row : row + 1, : int(np.sum(sources[row] != PAD_ID))]
        ids = greedy_search(model, alone, LENGTHS).numpy()[0]
        np.testing.assert_array_equal(batch[row, : len(ids)], ids)
        assert np.all(batch[row, len(ids) :] == PAD_ID)


def test_works_compiled_with_xla(make_model, sources):
    model = make_model()
    compiled = tf.function(
        lambda ids: greedy_search(model, ids, LENGTHS), jit_compile=True, autograph=False
    )
    np.testing.assert_array_equal(compiled(sources), greedy_search(model, sources, LENGTHS))


def test_stops_after_one_step_when_every_sentence_emits_eos(
    make_model, sources, count_decode_steps
):
    model = make_model(eos_bias=100.0)
    steps = count_decode_steps(model)
    ids = greedy_search(model, sources)
    assert len(steps) == 1
    np.testing.assert_array_equal(ids, np.full([6, 1], EOS_ID))


def test_length_limits_are_respected(make_model, sources, count_decode_steps):
    model = make_model(eos_bias=-100.0)  # EOS never wins: every sentence reaches its limit
    steps = count_decode_steps(model)
    ids = greedy_search(model, sources, replace(LENGTHS, max_length=10))
    expected = limits(sources, max_length=10)  # min(10, length + 4)
    np.testing.assert_array_equal(row_lengths(ids), expected)
    assert ids.shape[1] == len(steps) == expected.max() == 10


def test_without_eos_id_every_sentence_decodes_to_its_limit(make_model, sources):
    ids = greedy_search(make_model(eos_bias=100.0), sources, replace(LENGTHS, eos_id=None))
    np.testing.assert_array_equal(row_lengths(ids), limits(sources))
    assert np.all(ids.numpy()[:, 0] == EOS_ID)  # EOS is then an ordinary token
