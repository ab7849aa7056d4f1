"""Alternatives at the first free position: the n most likely next tokens after each prefix,
each continued by the search."""

import numpy as np
import pytest
import tensorflow as tf

from common.special_tokens import BOS_ID, PAD_ID
from decoding.alternatives import alternatives_search
from decoding.ensemble import Ensemble
from decoding.greedy import greedy_search
from decoding.options import SearchOptions
from decoding.scoring import next_token_log_probs

GREEDY = SearchOptions(beam_size=1, length_penalty=0.6, max_length_ratio=1.0, max_length_offset=4)
PREFIX = [[7, 8], [9, 0], [0, 0], [10, 11], [12, 0], [13, 14]]


@pytest.mark.parametrize("members", [1, 2])
def test_each_alternative_is_a_most_likely_next_token_continued_by_the_search(
    make_model, sources, members
):
    models = [make_model(eos_bias=bias) for bias in (-2.0, -1.0)[:members]]
    model = models[0] if members == 1 else Ensemble(models)
    prefix = tf.constant(PREFIX, tf.int32)
    search = tf.function(
        lambda ids, prefix: alternatives_search(model, ids, GREEDY, 3, prefix), autograph=False
    )
    found = search(sources, prefix)
    ids, scores = found.ids.numpy(), found.scores.numpy()
    assert ids.shape[:2] == (6, 3)
    assert np.all(np.diff(scores, axis=1) <= 0)  # best first
    bos = tf.fill([6, 1], BOS_ID)
    next_log_probs = next_token_log_probs(model, sources, tf.concat([bos, prefix], axis=1))
    extended = []  # each alternative's prefix: the sentence's and the alternative's next token
    for row, own in enumerate(PREFIX):
        own = [token for token in own if token != PAD_ID]
        allowed = next_log_probs[row, len(own)].numpy()
        allowed[[PAD_ID, BOS_ID]] = -np.inf
        assert set(ids[row, :, len(own)]) == set(np.argsort(-allowed)[:3])  # each once
        for alternative in ids[row]:
            assert list(alternative[: len(own)]) == own
            extended.append([*own, alternative[len(own)]] + [PAD_ID] * (2 - len(own)))
    # Each is the search's own output for its extended prefix.
    searched = greedy_search(
        model, tf.repeat(sources, 3, axis=0), GREEDY, target_prefix=tf.constant(extended)
    ).numpy()
    flat = ids.reshape(18, -1)
    width = max(flat.shape[1], searched.shape[1])
    np.testing.assert_array_equal(
        np.pad(flat, [[0, 0], [0, width - flat.shape[1]]]),
        np.pad(searched, [[0, 0], [0, width - searched.shape[1]]]),
    )
    hypotheses_sum = np.sum(found.token_log_probs.numpy(), axis=2)
    np.testing.assert_allclose(hypotheses_sum, found.log_probs.numpy(), atol=1e-4)
