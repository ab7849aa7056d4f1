"""Ensemble decoding: the log of the members' mean probabilities, each member with its own cache."""

from dataclasses import replace

import numpy as np
import pytest
import tensorflow as tf

from common.special_tokens import BOS_ID
from decoding.beam import beam_search
from decoding.ensemble import Ensemble
from decoding.greedy import greedy_search
from decoding.options import SearchOptions

# Short limits keep the tests fast: round(1.0 * source_length + 4) tokens.
LENGTHS = SearchOptions(max_length_ratio=1.0, max_length_offset=4)


@pytest.fixture
def two_models(make_model):
    """Two members of different shapes and weights (the same vocabulary)."""
    tf.keras.utils.set_random_seed(1)
    first = make_model()
    tf.keras.utils.set_random_seed(2)
    second = make_model(eos_bias=1.0, d_model=32, num_layers=1)
    return [first, second]


def test_each_step_gives_the_log_of_the_members_mean_probabilities(
    two_models, sources, mean_log_probs
):
    ids = np.random.default_rng(1).integers(4, 30, size=(sources.shape[0], 5))
    expected = mean_log_probs(two_models, sources, ids)
    ensemble = Ensemble(two_models)
    cache = ensemble.init_cache(*ensemble.encode(sources), max_length=5)
    tokens = tf.fill([sources.shape[0]], BOS_ID)
    for index in range(5):
        log_probs, cache = ensemble.decode_step(tokens, tf.constant(index), cache)
        np.testing.assert_allclose(log_probs.numpy().T, expected[:, index], atol=1e-4)
        tokens = tf.constant(ids[:, index], tf.int32)
    # The members disagree, so their mean is neither one of them.
    for member in two_models:
        assert np.abs(mean_log_probs([member], sources, ids) - expected).max() > 0.1


def test_beam_search_scores_its_outputs_with_the_mean_distribution(
    two_models, sources, teacher_forced_scores
):
    ensemble = Ensemble(two_models)
    options = replace(LENGTHS, beam_size=3, length_penalty=0.6)
    ids, scores = beam_search(ensemble, sources, options)
    expected = teacher_forced_scores(two_models, sources, ids.numpy(), alpha=0.6)
    np.testing.assert_allclose(scores.numpy(), expected, atol=1e-4)
    # Neither member alone gives those scores, nor finds those outputs.
    for member in two_models:
        alone = teacher_forced_scores([member], sources, ids.numpy(), alpha=0.6)
        assert np.abs(alone - scores.numpy()).max() > 0.1
        member_ids, _ = beam_search(member, sources, options)
        assert member_ids.numpy().tolist() != ids.numpy().tolist()
    # Under XLA the ensemble searches the same way.
    compiled = tf.function(
        lambda source_ids: beam_search(ensemble, source_ids, options)[0],
        jit_compile=True,
        autograph=False,
    )
    np.testing.assert_array_equal(compiled(sources).numpy(), ids.numpy())


def test_greedy_search_writes_the_mean_distributions_best_token_not_a_members(
    two_models, sources, mean_log_probs
):
    ensemble = Ensemble(two_models)
    ids = greedy_search(ensemble, sources, LENGTHS).numpy()
    log_probs = mean_log_probs(two_models, sources, ids)  # teacher-forced, no cache
    log_probs[..., LENGTHS.never_written] = -np.inf
    written = ids != LENGTHS.pad_id
    assert written.sum() > 2 * len(ids)  # (more than one token a sentence to check)
    chosen = np.take_along_axis(log_probs, ids[..., np.newaxis], -1)[..., 0]
    np.testing.assert_array_less(log_probs.max(-1)[written] - chosen[written], 1e-5)
    # Each member alone writes something else.
    for member in two_models:
        assert greedy_search(member, sources, LENGTHS).numpy().tolist() != ids.tolist()


def test_members_must_share_the_target_vocabulary(make_model):
    with pytest.raises(ValueError, match="target_vocab_size"):
        Ensemble([make_model(), make_model(target_vocab_size=31)])
    with pytest.raises(ValueError, match="at least one model"):
        Ensemble([])
