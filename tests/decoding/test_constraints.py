"""Constrained beam search: every term in every hypothesis, no avoided phrase in any, sentences
without constraints searched as before, each sentence the same in any batch."""

import functools

import numpy as np
import pytest
import tensorflow as tf

from common.special_tokens import PAD_ID
from decoding.beam import n_best_search
from decoding.constraints import (
    Constraints,
    PhraseSet,
    advance,
    allocate,
    forbid_avoided,
    forbid_ends,
    forbid_glued,
    initial_progress,
)
from decoding.options import SearchOptions
from decoding.scoring import force_score

# Short limits keep the tests fast: round(1.0 * source_length + 4) tokens.
OPTIONS = SearchOptions(beam_size=4, length_penalty=0.6, max_length_ratio=1.0, max_length_offset=4)
# Six sentences' terms: two of two and one tokens, none, two sharing a first token, one term
# of six tokens (longer than the sentence's limit without terms), one of a token said twice.
TERMS = [[[7, 8], [9]], [], [[12, 13], [12, 15]], [[10, 11, 12, 13, 14, 15]], [[20]], [[5, 5]]]


def _padded(phrases: list[list[list[int]]], count: int = 0, width: int = 0) -> tf.Tensor:
    """Each sentence's phrases as ``(batch, count, width)`` ids padded with PAD (at least the
    given ``count`` and ``width``)."""
    count = max([count, *map(len, phrases)])
    width = max([width, *(len(phrase) for row in phrases for phrase in row)])
    rows = [[phrase + [PAD_ID] * (width - len(phrase)) for phrase in row] for row in phrases]
    rows = [row + [[PAD_ID] * width] * (count - len(row)) for row in rows]
    return tf.constant(rows, tf.int32, shape=[len(phrases), count, width])


def _constraints(terms, avoided=None, **padding) -> Constraints:
    avoided = avoided if avoided is not None else [[] for _ in terms]
    return Constraints.of(_padded(terms, **padding), _padded(avoided), PAD_ID)


def _contains(ids, phrase: list[int]) -> bool:
    ids = [int(i) for i in ids if i != PAD_ID]
    return any(ids[i : i + len(phrase)] == phrase for i in range(len(ids) - len(phrase) + 1))


_IDS = tf.TensorSpec([None, None], tf.int32)
_PHRASES = PhraseSet(tf.TensorSpec([None, None, None], tf.int32), _IDS)


@functools.cache
def _searcher(model, n: int):
    """``model``'s constrained n-best search in the graph, traced once for every shape."""

    def search(ids: tf.Tensor, terms: PhraseSet, avoided: PhraseSet):
        constraints = Constraints(terms, avoided, None)
        return n_best_search(model, ids, OPTIONS, n, True, constraints=constraints)

    return tf.function(search, input_signature=[_IDS, _PHRASES, _PHRASES], autograph=False)


def _search(model, sources, constraints, n=4):
    return _searcher(model, n)(sources, constraints.terms, constraints.avoided)


def test_every_hypothesis_holds_every_term_and_scores_it_as_its_own(make_model, sources):
    model = make_model()
    hypotheses = _search(model, sources, _constraints(TERMS))
    for row, terms in enumerate(TERMS):
        holds = [all(_contains(ids, term) for term in terms) for ids in hypotheses.ids[row]]
        # The best holds them; those ending at the length limit without them rank last (this
        # random model seldom ends a sentence: few hypotheses end before the limit).
        assert holds[0] and holds == sorted(holds, reverse=True), (row, holds)
    assert np.all(np.isfinite(hypotheses.scores))
    batch, n, out_len = hypotheses.ids.shape
    forced = force_score(
        model, tf.repeat(sources, n, axis=0), tf.reshape(hypotheses.ids, [-1, out_len]), OPTIONS
    )
    np.testing.assert_allclose(
        tf.reshape(forced.scores, [batch, n]), hypotheses.scores, rtol=1e-4, atol=1e-4
    )


def test_the_search_under_xla_finds_what_the_graph_search_finds(make_model, sources):
    model = make_model()
    graph = _search(model, sources, _constraints(TERMS))
    avoided = [[[row[0][0]]] if row else [] for row in TERMS]  # each first term's first token
    compiled = tf.function(
        lambda ids, terms, avoided: n_best_search(
            model, ids, OPTIONS, 4, constraints=Constraints.of(terms, avoided, PAD_ID)
        ),
        jit_compile=True,
        autograph=False,
    )
    xla = compiled(sources, _padded(TERMS), _padded([[] for _ in TERMS]))
    np.testing.assert_array_equal(xla.ids, graph.ids)
    np.testing.assert_allclose(xla.scores, graph.scores, rtol=1e-5)
    graph = _search(model, sources, _constraints([[] for _ in TERMS], avoided))
    xla = compiled(sources, _padded([[] for _ in TERMS]), _padded(avoided))
    np.testing.assert_array_equal(xla.ids, graph.ids)


def test_without_constraints_the_search_is_the_unconstrained_one(make_model, sources):
    model = make_model()
    free = n_best_search(model, sources, OPTIONS, 4, dynamic_shapes=True)
    empty = _search(model, sources, _constraints([[] for _ in TERMS], count=2, width=3))
    np.testing.assert_array_equal(empty.ids, free.ids)
    np.testing.assert_allclose(empty.scores, free.scores, rtol=1e-6)


def test_a_sentence_is_searched_the_same_in_any_batch(make_model, sources):
    model = make_model()
    together = _search(model, sources, _constraints(TERMS))
    for row in (0, 1, 3):
        alone = _search(model, sources[row : row + 1], _constraints(TERMS[row : row + 1]))
        length = alone.ids.shape[2]
        np.testing.assert_array_equal(alone.ids[0], together.ids[row, :, :length])
        assert np.all(together.ids.numpy()[row, :, length:] == PAD_ID)
        np.testing.assert_allclose(alone.scores[0], together.scores[row], rtol=1e-5)


def test_no_hypothesis_holds_an_avoided_phrase(make_model, sources):
    model = make_model()
    free = n_best_search(model, sources, OPTIONS, 4, dynamic_shapes=True).ids.numpy()
    # Each sentence's best output's first two tokens, and a token of its second hypothesis.
    avoided = [[[int(t) for t in row[0, :2]], [int(row[1, 0])]] for row in free]
    hypotheses = _search(model, sources, _constraints([[] for _ in TERMS], avoided))
    for row, phrases in enumerate(avoided):
        for hypothesis in hypotheses.ids.numpy()[row]:
            assert not any(_contains(hypothesis, phrase) for phrase in phrases if phrase[0] != 3)


def test_terms_that_cannot_all_be_placed_give_the_hypothesis_holding_most(make_model, sources):
    model = make_model()
    # The second term holds an avoided phrase: no hypothesis can hold both terms.
    constraints = _constraints([[[7, 8], [9, 10]]], [[[9, 10]]])
    hypotheses = _search(model, sources[:1], constraints, n=1)
    best = hypotheses.ids.numpy()[0, 0]
    assert _contains(best, [7, 8]) and not _contains(best, [9, 10])
    assert np.isfinite(hypotheses.scores.numpy()[0, 0])


def test_progress_follows_a_term_and_drops_it_on_a_detour():
    terms = PhraseSet.of(tf.constant([[[7, 8, 9], [4, 0, 0]]]), PAD_ID)
    progress = initial_progress(terms, beam=1)
    states = []
    for token in (7, 8, 5, 7, 8, 9, 4):  # 7 8 then a detour; 7 8 9 whole; 4
        progress = {
            key: value[:, :, 0]
            for key, value in advance(terms, progress, tf.constant([[[token]]])).items()
        }
        met = progress["met"].numpy()[0, 0].tolist()
        states.append((met, int(progress["current"][0, 0]), int(progress["position"][0, 0])))
    assert states == [
        ([False, False], 0, 1),
        ([False, False], 0, 2),
        ([False, False], -1, 0),
        ([False, False], 0, 1),
        ([False, False], 0, 2),
        ([True, False], -1, 0),
        ([True, True], -1, 0),
    ]


def test_a_hypothesis_ends_holding_every_term_a_term_ends_a_word_no_avoided_phrase_ends():
    terms = PhraseSet.of(tf.constant([[[7, 8]]]), PAD_ID)
    progress = {  # two hypotheses: one holds the term, one is inside it
        "met": tf.constant([[[True], [False]]]),
        "current": tf.constant([[-1, 0]]),
        "position": tf.constant([[0, 1]]),
    }
    scores = tf.zeros([10, 2])  # (vocab_size, rows)
    ended = forbid_ends(scores, terms, progress, eos_id=3).numpy()
    assert ended[3].tolist() == [0.0, -np.inf] and np.isfinite(np.delete(ended, 3, axis=0)).all()
    # After a term's last token (the first hypothesis'), no token continuing its word.
    progress["just_met"] = tf.constant([[True, False]])
    continues_word = tf.constant([i in (4, 7) for i in range(10)])
    glued = forbid_glued(scores, progress, continues_word).numpy()
    assert np.argwhere(np.isinf(glued)).tolist() == [[4, 0], [7, 0]]
    avoided = PhraseSet.of(tf.constant([[[5, 6], [9, 0]]]), PAD_ID)
    alive_seqs = tf.constant([[[2, 4, 5, 0], [2, 5, 4, 0]]])  # BOS 4 5, BOS 5 4; step 2 next
    blocked = forbid_avoided(scores, avoided, alive_seqs, tf.constant(2)).numpy()
    assert np.argwhere(np.isinf(blocked)).tolist() == [[6, 0], [9, 0], [9, 1]]


@pytest.mark.parametrize(
    "banks, expected",
    [
        ([0, 0, 0, 0, 0, 0], [0, 1, 2, 3]),  # one bank: the best by log-probability
        ([0, 1, 0, 2, 1, 0], [3, 1, 0, 4]),  # the best of banks 2, 1, 0, then bank 1's second
        ([1, 1, 1, 1, 0, 0], [0, 4, 1, 2]),  # an empty bank's turns go to the others
        ([0, 0, 0, 0, 0, 3], [0, 1, 2, 3]),  # a candidate at -inf comes last, whatever its bank
    ],
)
def test_the_beam_is_filled_round_robin_from_the_furthest_bank(banks, expected):
    log_probs = tf.constant([[-1.0, -2.0, -3.0, -4.0, -5.0, -float("inf")]])
    assert allocate(log_probs, tf.constant([banks]), beam=4).numpy()[0].tolist() == expected
