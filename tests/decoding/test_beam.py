from dataclasses import replace

import numpy as np
import pytest
import tensorflow as tf

from common.special_tokens import BOS_ID, EOS_ID, PAD_ID
from decoding.beam import beam_search, gnmt_length_penalty, n_best_search
from decoding.common import output_length_limits
from decoding.greedy import greedy_search
from decoding.options import SearchOptions

# Short limits keep the tests fast: round(1.0 * source_length + 4) tokens.
LENGTHS = SearchOptions(max_length_ratio=1.0, max_length_offset=4)
ALPHA = 0.6


def limits(sources, **options):
    return output_length_limits(sources, replace(LENGTHS, **options))[0].numpy()


def row_lengths(ids):
    return np.sum(np.asarray(ids) != PAD_ID, axis=1)


def python_beam_search(model, source, beam_size, alpha, limit):
    """One ``(1, n)`` sentence, no cache, plain Python; returns ``(tokens, score, steps)``.

    The same rules as ``beam_search``: the ``beam_size`` best continuations of the alive
    hypotheses; those that end (EOS or limit) are finished, the others stay alive; stop when the
    best finished score beats what the best alive hypothesis could still reach.
    """
    memory, memory_mask = model.encode(source)
    alive, finished = [(0.0, ())], []  # (log prob, tokens), (score, tokens)
    for step in range(limit):
        prefixes = tf.constant([[BOS_ID, *tokens] for _, tokens in alive])
        repeat = len(alive)
        logits = model.decode(
            prefixes, tf.repeat(memory, repeat, 0), tf.repeat(memory_mask, repeat, 0)
        )[:, -1]
        log_probs = tf.nn.log_softmax(logits).numpy()
        log_probs[:, [PAD_ID, BOS_ID]] = -np.inf
        candidates = sorted(
            (
                (log_prob + log_probs[i, token], (*tokens, token))
                for i, (log_prob, tokens) in enumerate(alive)
                for token in range(log_probs.shape[1])
            ),
            key=lambda candidate: -candidate[0],
        )[:beam_size]
        ends = [tokens[-1] == EOS_ID or step + 1 == limit for _, tokens in candidates]
        alive = [c for c, end in zip(candidates, ends, strict=True) if not end]
        penalty = float(gnmt_length_penalty(step + 1, alpha))
        finished += [
            (lp / penalty, t) for (lp, t), end in zip(candidates, ends, strict=True) if end
        ]
        finished = sorted(finished, key=lambda f: -f[0])[:beam_size]
        reachable = alive[0][0] / float(gnmt_length_penalty(limit, alpha)) if alive else -np.inf
        if finished and finished[0][0] >= reachable:
            break
    return finished[0][1], finished[0][0], step + 1


def test_beam_search_equals_a_plain_python_beam_search_without_cache(
    make_model, sources, count_decode_steps
):
    model = make_model()
    steps = count_decode_steps(model)
    ids, scores = beam_search(model, sources, replace(LENGTHS, beam_size=4, length_penalty=ALPHA))
    expected_steps = []
    for row, limit in enumerate(limits(sources)):
        source = sources[row : row + 1, : int(np.sum(sources[row] != PAD_ID))]
        tokens, score, sentence_steps = python_beam_search(model, source, 4, ALPHA, limit)
        np.testing.assert_array_equal(ids[row, : len(tokens)], tokens)
        assert np.all(ids[row, len(tokens) :] == PAD_ID)
        np.testing.assert_allclose(scores[row], score, rtol=1e-5)
        expected_steps.append(sentence_steps)
    assert len(steps) == max(expected_steps)  # the loop ends when the last sentence is done
    assert min(expected_steps) < max(limits(sources))  # and some sentences stopped early


def test_the_best_hypothesis_scores_as_reported_and_no_worse_than_greedy(
    make_model, sources, teacher_forced_scores
):
    model = make_model()
    ids, scores = beam_search(model, sources, replace(LENGTHS, beam_size=4, length_penalty=ALPHA))
    np.testing.assert_allclose(teacher_forced_scores([model], sources, ids), scores, rtol=1e-5)
    greedy = greedy_search(model, sources, LENGTHS)
    greedy_scores = teacher_forced_scores([model], sources, greedy)
    assert np.all(scores.numpy() >= greedy_scores - 1e-5)
    assert np.any(scores.numpy() > greedy_scores + 1e-3)  # the beam found better ones somewhere


def test_a_beam_of_one_is_greedy_search(make_model, sources):
    model = make_model()
    greedy = greedy_search(model, sources, LENGTHS)
    ids, _ = beam_search(model, sources, replace(LENGTHS, beam_size=1, length_penalty=0.0))
    np.testing.assert_array_equal(ids, greedy)
    ids, _ = beam_search(model, sources, replace(LENGTHS, beam_size=1, length_penalty=ALPHA))
    np.testing.assert_array_equal(ids, greedy)


def test_a_sentence_decodes_the_same_alone_and_in_a_padded_batch(make_model, sources):
    model = make_model()
    batch_ids, batch_scores = beam_search(model, sources, LENGTHS)
    for row in (1, 4):  # short sentences among longer ones
        alone = sources[row : row + 1, : int(np.sum(sources[row] != PAD_ID))]
        ids, scores = beam_search(model, alone, LENGTHS)
        np.testing.assert_array_equal(batch_ids[row, : ids.shape[1]], ids[0])
        assert np.all(batch_ids[row, ids.shape[1] :] == PAD_ID)
        np.testing.assert_allclose(batch_scores[row], scores[0], rtol=1e-5)


def test_works_compiled_with_xla(make_model, sources):
    model = make_model()
    compiled = tf.function(
        lambda ids: beam_search(model, ids, LENGTHS), jit_compile=True, autograph=False
    )
    ids, scores = compiled(sources)
    expected_ids, expected_scores = beam_search(model, sources, LENGTHS)
    np.testing.assert_array_equal(ids, expected_ids)
    np.testing.assert_allclose(scores, expected_scores, rtol=1e-5)


def test_dynamic_shapes_change_no_result(make_model, sources, monkeypatch):
    """Done sentences leave the batch and the cache grows, in a graph of unknown batch size, as
    ``ModelTranslator`` runs it without XLA."""
    model = make_model()
    options = replace(LENGTHS, beam_size=4, length_penalty=ALPHA)
    expected_ids, expected_scores = beam_search(model, sources, options)
    rows, cache_lengths, decode_step = [], [], model.decode_step

    def recording_decode_step(tokens, index, cache, **kwargs):
        rows.append(tf.shape(tokens)[0])
        cache_lengths.append(tf.shape(cache["self"][0][0])[2])
        return decode_step(tokens, index, cache, **kwargs)

    monkeypatch.setattr(model, "decode_step", recording_decode_step)
    ids, scores = beam_search(model, sources, options, dynamic_shapes=True)  # eager: every step
    np.testing.assert_array_equal(ids, expected_ids)
    np.testing.assert_allclose(scores, expected_scores, rtol=1e-5)
    assert int(rows[0]) == 6 * 4 and int(rows[-1]) < 6 * 4  # done sentences left the batch
    assert [int(length) for length in cache_lengths] == list(range(len(cache_lengths)))
    graph = tf.function(
        lambda ids: beam_search(model, ids, options, dynamic_shapes=True),
        input_signature=[tf.TensorSpec([None, None], tf.int32)],
        autograph=False,
    )
    ids, scores = graph(sources)
    np.testing.assert_array_equal(ids, expected_ids)
    np.testing.assert_allclose(scores, expected_scores, rtol=1e-5)


def test_stops_after_one_step_when_eos_dominates(make_model, sources, count_decode_steps):
    model = make_model(eos_bias=100.0)
    steps = count_decode_steps(model)
    ids, scores = beam_search(model, sources)
    assert len(steps) == 1
    np.testing.assert_array_equal(ids, np.full([6, 1], EOS_ID))
    np.testing.assert_allclose(scores, 0.0, atol=1e-5)


def test_length_limits_are_respected(make_model, sources):
    ids, _ = beam_search(make_model(eos_bias=-100.0), sources, replace(LENGTHS, max_length=10))
    np.testing.assert_array_equal(row_lengths(ids), limits(sources, max_length=10))
    assert ids.shape[1] == 10


def test_the_best_of_an_n_best_list_is_the_beam_search_result(make_model, sources):
    model = make_model()
    options = replace(LENGTHS, beam_size=4, length_penalty=ALPHA)
    best_ids, best_scores = beam_search(model, sources, options)
    hypotheses = n_best_search(model, sources, options, 4)
    assert hypotheses.ids.shape[:2] == (6, 4)
    np.testing.assert_array_equal(hypotheses.ids[:, 0, : best_ids.shape[1]], best_ids)
    assert np.all(hypotheses.ids[:, 0, best_ids.shape[1] :] == PAD_ID)
    np.testing.assert_allclose(hypotheses.scores[:, 0], best_scores, rtol=1e-6)
    scores = hypotheses.scores.numpy()
    assert np.all(np.isfinite(scores)) and np.all(np.diff(scores, axis=1) <= 0)  # best first
    lengths = np.sum(hypotheses.ids.numpy() != PAD_ID, axis=2)
    np.testing.assert_allclose(
        hypotheses.log_probs / gnmt_length_penalty(lengths, ALPHA), scores, rtol=1e-5
    )
    for row in hypotheses.ids.numpy():  # n different hypotheses
        assert len({tuple(ids) for ids in row}) == 4


def test_an_n_best_list_is_the_same_under_xla_with_dynamic_shapes_and_in_any_batch(
    make_model, sources
):
    model = make_model()
    options = replace(LENGTHS, beam_size=4, length_penalty=ALPHA)
    expected = n_best_search(model, sources, options, 3)
    compiled = tf.function(
        lambda ids: n_best_search(model, ids, options, 3), jit_compile=True, autograph=False
    )
    dynamic = tf.function(
        lambda ids: n_best_search(model, ids, options, 3, dynamic_shapes=True),
        input_signature=[tf.TensorSpec([None, None], tf.int32)],
        autograph=False,
    )
    for hypotheses in (compiled(sources), dynamic(sources)):
        np.testing.assert_array_equal(hypotheses.ids, expected.ids)
        np.testing.assert_allclose(hypotheses.scores, expected.scores, rtol=1e-5)
        np.testing.assert_allclose(hypotheses.log_probs, expected.log_probs, rtol=1e-5)
    alone = n_best_search(model, sources[4:5, : int(np.sum(sources[4] != PAD_ID))], options, 3)
    np.testing.assert_array_equal(expected.ids[4, :, : alone.ids.shape[2]], alone.ids[0])
    np.testing.assert_allclose(expected.scores[4], alone.scores[0], rtol=1e-5)


def test_more_hypotheses_than_the_beam_is_a_clear_error(make_model, sources):
    with pytest.raises(ValueError, match="num_hypotheses must be between 1 and the beam size"):
        n_best_search(make_model(), sources, replace(LENGTHS, beam_size=2), 3)
