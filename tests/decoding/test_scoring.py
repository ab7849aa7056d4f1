import numpy as np
import pytest
import tensorflow as tf

from common.special_tokens import PAD_ID
from decoding.beam import n_best_search
from decoding.ensemble import Ensemble
from decoding.options import SearchOptions
from decoding.scoring import force_score

# Short limits keep the tests fast: round(1.0 * source_length + 4) tokens.
OPTIONS = SearchOptions(beam_size=4, length_penalty=0.6, max_length_ratio=1.0, max_length_offset=4)


def test_forced_scores_are_the_teacher_forced_log_probabilities(
    make_model, sources, teacher_forced_scores
):
    model = make_model()
    targets = n_best_search(model, sources, OPTIONS, 1).ids[:, 0]
    forced = force_score(model, sources, targets, OPTIONS)
    expected = teacher_forced_scores([model], sources, targets, OPTIONS.length_penalty)
    np.testing.assert_allclose(forced.scores, expected, rtol=1e-5)
    np.testing.assert_allclose(
        forced.log_probs, tf.reduce_sum(forced.token_log_probs, axis=1), rtol=1e-6
    )
    assert np.all(forced.token_log_probs.numpy()[targets.numpy() == PAD_ID] == 0.0)
    assert np.all(forced.token_log_probs.numpy()[targets.numpy() != PAD_ID] < 0.0)


@pytest.mark.parametrize("members", [1, 2])
def test_the_n_best_scores_are_the_forced_scores_of_the_hypotheses(make_model, sources, members):
    models = [make_model(eos_bias=bias) for bias in (-2.0, -1.0)[:members]]
    model = models[0] if members == 1 else Ensemble(models)
    hypotheses = n_best_search(model, sources, OPTIONS, 4)
    batch, n, out_len = hypotheses.ids.shape
    repeated_sources = tf.repeat(sources, n, axis=0)  # (batch * n, source_len)
    forced = force_score(
        model, repeated_sources, tf.reshape(hypotheses.ids, [-1, out_len]), OPTIONS
    )
    np.testing.assert_allclose(
        tf.reshape(forced.scores, [batch, n]), hypotheses.scores, rtol=1e-4, atol=1e-4
    )
    np.testing.assert_allclose(
        tf.reshape(forced.log_probs, [batch, n]), hypotheses.log_probs, rtol=1e-4, atol=1e-4
    )


@pytest.mark.parametrize("members", [1, 2])
def test_the_n_best_token_log_probs_are_the_forced_ones_in_every_form_of_the_search(
    make_model, sources, members
):
    models = [make_model(eos_bias=bias) for bias in (-2.0, -1.0)[:members]]
    model = models[0] if members == 1 else Ensemble(models)
    searches = {
        "eager": lambda ids: n_best_search(model, ids, OPTIONS, 4, with_token_log_probs=True),
        "xla": tf.function(
            lambda ids: n_best_search(model, ids, OPTIONS, 4, with_token_log_probs=True),
            jit_compile=True,
            autograph=False,
        ),
        "dynamic shapes": tf.function(
            lambda ids: n_best_search(
                model, ids, OPTIONS, 4, dynamic_shapes=True, with_token_log_probs=True
            ),
            input_signature=[tf.TensorSpec([None, None], tf.int32)],
            autograph=False,
        ),
    }
    plain = n_best_search(model, sources, OPTIONS, 4)
    assert plain.token_log_probs is None  # not asked for: not kept
    for name, search in searches.items():
        hypotheses = search(sources)
        np.testing.assert_array_equal(hypotheses.ids, plain.ids, err_msg=name)
        batch, n, out_len = hypotheses.ids.shape
        forced = force_score(
            model,
            tf.repeat(sources, n, axis=0),
            tf.reshape(hypotheses.ids, [-1, out_len]),
            OPTIONS,
        )
        tokens = hypotheses.token_log_probs.numpy()
        assert tokens.shape == (batch, n, out_len)
        np.testing.assert_allclose(
            tokens, tf.reshape(forced.token_log_probs, [batch, n, out_len]), atol=1e-4, err_msg=name
        )
        np.testing.assert_allclose(tokens.sum(axis=2), hypotheses.log_probs, atol=1e-4)
        assert np.all(tokens[hypotheses.ids.numpy() == PAD_ID] == 0.0)


def test_padding_and_the_batch_change_no_score(make_model, sources):
    model = make_model()
    targets = n_best_search(model, sources, OPTIONS, 1).ids[:, 0]
    in_batch = force_score(model, sources, targets, OPTIONS)
    padded = force_score(model, sources, tf.pad(targets, [[0, 0], [0, 3]]), OPTIONS)
    np.testing.assert_allclose(padded.scores, in_batch.scores, rtol=1e-5)
    for row in (1, 4):  # short sentences among longer ones, alone and unpadded
        source = sources[row : row + 1, : int(np.sum(sources[row] != PAD_ID))]
        target = targets[row : row + 1, : int(np.sum(targets[row] != PAD_ID))]
        alone = force_score(model, source, target, OPTIONS)
        np.testing.assert_allclose(alone.scores[0], in_batch.scores[row], rtol=1e-5)
        np.testing.assert_allclose(
            alone.token_log_probs[0], in_batch.token_log_probs[row, : target.shape[1]], rtol=1e-5
        )
