from dataclasses import replace

import numpy as np
import pytest
import tensorflow as tf

from decoding.beam import beam_search
from decoding.greedy import greedy_search
from decoding.options import SearchOptions
from decoding.search import decode

LENGTHS = SearchOptions(max_length_ratio=1.0, max_length_offset=4)


def test_a_beam_of_one_runs_greedy_search(make_model, sources):
    model = make_model()
    np.testing.assert_array_equal(
        decode(model, sources, replace(LENGTHS, beam_size=1)),
        greedy_search(model, sources, LENGTHS),
    )


def test_larger_beams_run_beam_search(make_model, sources):
    model = make_model()
    ids, _ = beam_search(model, sources, replace(LENGTHS, beam_size=3, length_penalty=1.0))
    np.testing.assert_array_equal(
        decode(model, sources, replace(LENGTHS, beam_size=3, length_penalty=1.0)), ids
    )


@pytest.mark.parametrize("beam_size", [1, 4])
def test_works_in_a_graph_of_unknown_batch_and_source_length(make_model, sources, beam_size):
    model = make_model()
    graph = tf.function(
        lambda ids: decode(model, ids, replace(LENGTHS, beam_size=beam_size)),
        input_signature=[tf.TensorSpec([None, None], tf.int32)],
        autograph=False,
    )
    np.testing.assert_array_equal(
        graph(sources), decode(model, sources, replace(LENGTHS, beam_size=beam_size))
    )


@pytest.mark.parametrize(("beam_size", "dynamic_shapes"), [(1, False), (4, True)])
def test_forbidden_ids_are_never_written_even_when_the_model_prefers_them(
    make_model, sources, beam_size, dynamic_shapes
):
    model = make_model()
    kernel, bias = model.output_projection.get_weights()
    bias[[4, 5]] += 30.0  # what a multilingual model's tags would be, made the likeliest
    model.output_projection.set_weights([kernel, bias])
    options = replace(LENGTHS, beam_size=beam_size)
    preferred = decode(model, sources, options, dynamic_shapes).numpy()
    assert np.isin(preferred, [4, 5]).mean() > 0.5  # without forbidding: mostly those ids
    ids = decode(model, sources, replace(options, forbidden_ids=(4, 5)), dynamic_shapes).numpy()
    assert not np.isin(ids, [4, 5]).any()
