"""Target prefixes: every search starts each output with its sentence's prefix and goes on."""

import numpy as np
import pytest
import tensorflow as tf

from common.special_tokens import EOS_ID, PAD_ID
from common.translation import Sampling
from decoding.beam import beam_search, n_best_search
from decoding.ensemble import Ensemble
from decoding.greedy import greedy_search
from decoding.options import SearchOptions
from decoding.sampling import sample_search
from decoding.scoring import force_score

# Short limits keep the tests fast: round(1.0 * source_length + 4) tokens.
OPTIONS = SearchOptions(beam_size=4, length_penalty=0.6, max_length_ratio=1.0, max_length_offset=4)
GREEDY = SearchOptions(beam_size=1, max_length_ratio=1.0, max_length_offset=4)


def _starts(ids: np.ndarray, lengths: list[int]) -> tf.Tensor:
    """Each row's first ``lengths[row]`` ids (none past an EOS), padded: a prefix."""
    rows = []
    for row, length in zip(ids, lengths, strict=True):
        rows.append([int(i) for i in row[:length] if i not in (PAD_ID, EOS_ID)])
    width = max(map(len, rows), default=0)
    return tf.constant([row + [PAD_ID] * (width - len(row)) for row in rows], tf.int32)


@pytest.mark.parametrize("members", [1, 2])
def test_the_start_of_a_searchs_own_output_gives_that_output_back(make_model, sources, members):
    models = [make_model(eos_bias=bias) for bias in (-2.0, -1.0)[:members]]
    model = models[0] if members == 1 else Ensemble(models)
    lengths = [2, 0, 1, 3, 1, 2]  # some sentences without a prefix
    greedy = greedy_search(model, sources, GREEDY).numpy()
    prefixed = greedy_search(model, sources, GREEDY, target_prefix=_starts(greedy, lengths))
    np.testing.assert_array_equal(prefixed, greedy)
    # Beam search is approximate: a prefix narrows the beam, which may then find a better
    # ending than the free search did. Forced through a whole translation it ends it at least
    # as well (the translation itself is among its hypotheses).
    beam, scores = (tensor.numpy() for tensor in beam_search(model, sources, OPTIONS))
    whole = _starts(beam, [beam.shape[1]] * len(beam))
    prefixed, prefixed_scores = beam_search(model, sources, OPTIONS, target_prefix=whole)
    assert np.all(prefixed_scores.numpy() >= scores - 1e-5)
    for row, own in enumerate(whole.numpy()):
        own = own[own != PAD_ID]
        np.testing.assert_array_equal(prefixed.numpy()[row, : len(own)], own)


def test_every_hypothesis_starts_with_the_prefix_and_scores_it_as_its_own(make_model, sources):
    model = make_model()
    prefix = tf.constant([[7, 8], [9, 0], [0, 0], [10, 11], [12, 0], [13, 14]], tf.int32)
    searches = {
        "eager": lambda ids, prefix: n_best_search(model, ids, OPTIONS, 4, target_prefix=prefix),
        "xla": tf.function(
            lambda ids, prefix: n_best_search(model, ids, OPTIONS, 4, target_prefix=prefix),
            jit_compile=True,
            autograph=False,
        ),
        "dynamic shapes": tf.function(
            lambda ids, prefix: n_best_search(
                model, ids, OPTIONS, 4, dynamic_shapes=True, target_prefix=prefix
            ),
            input_signature=[tf.TensorSpec([None, None], tf.int32)] * 2,
            autograph=False,
        ),
    }
    expected = searches["eager"](sources, prefix)
    for row, own in enumerate(prefix.numpy()):
        own = own[own != PAD_ID]
        assert np.all(expected.ids.numpy()[row, :, : len(own)] == own)
    batch, n, out_len = expected.ids.shape
    forced = force_score(
        model, tf.repeat(sources, n, axis=0), tf.reshape(expected.ids, [-1, out_len]), OPTIONS
    )
    np.testing.assert_allclose(
        tf.reshape(forced.scores, [batch, n]), expected.scores, rtol=1e-4, atol=1e-4
    )
    for name, search in searches.items():
        hypotheses = search(sources, prefix)
        np.testing.assert_array_equal(hypotheses.ids, expected.ids, err_msg=name)
        np.testing.assert_allclose(hypotheses.scores, expected.scores, rtol=1e-5, err_msg=name)
    for row in (1, 4):  # alone, unpadded, with its prefix alone
        source = sources[row : row + 1, : int(np.sum(sources[row] != PAD_ID))]
        alone = n_best_search(model, source, OPTIONS, 4, target_prefix=prefix[row : row + 1, :1])
        np.testing.assert_array_equal(alone.ids[0], expected.ids[row, :, : alone.ids.shape[2]])


def test_sampling_goes_on_from_the_prefix_and_a_long_one_is_cut_at_each_sentences_limit(
    make_model, sources
):
    model = make_model(scale=2.0)
    prefix = tf.fill([6, 3], 7)
    sampled = sample_search(
        model, sources, GREEDY, Sampling(temperature=1.5), tf.range(6), target_prefix=prefix
    ).numpy()
    assert np.all(sampled[:, :3] == 7) and sampled.shape[1] > 3
    long_prefix = tf.fill([6, 40], 7)  # longer than any sentence's output may be
    greedy = greedy_search(model, sources, GREEDY, target_prefix=long_prefix).numpy()
    beam, _ = beam_search(model, sources, OPTIONS, target_prefix=long_prefix)
    # Each cut at its own sentence's limit, as alone: round(1.0 * source_length + 4) tokens.
    own_limits = np.sum(np.asarray(sources) != PAD_ID, axis=1) + 4
    for ids in (greedy, beam.numpy()):
        assert np.all(np.sum(ids != PAD_ID, axis=1) == own_limits)
        assert np.all(ids[ids != PAD_ID] == 7)
