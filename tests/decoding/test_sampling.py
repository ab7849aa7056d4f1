import numpy as np
import pytest
import tensorflow as tf

from common.special_tokens import PAD_ID
from common.translation import RequestError, Sampling
from decoding.ensemble import Ensemble
from decoding.greedy import greedy_search
from decoding.options import SearchOptions
from decoding.sampling import draw, hashed_uniform, sample_search

# Short limits keep the tests fast: round(1.0 * source_length + 4) tokens.
LENGTHS = SearchOptions(max_length_ratio=1.0, max_length_offset=4)
SEEDS = tf.constant([11, 12, 13, 14, 15, 16])
# Four tokens with these probabilities, drawn 20,000 times (one row a seed).
PROBABILITIES = np.array([0.5, 0.3, 0.15, 0.05])
DRAWS = 20_000


def _frequencies(sampling: Sampling, step: int = 0) -> np.ndarray:
    scores = tf.tile(tf.math.log(PROBABILITIES.astype(np.float32))[:, tf.newaxis], [1, DRAWS])
    tokens = draw(scores, tf.constant(step), tf.range(DRAWS), sampling).numpy()
    return np.bincount(tokens, minlength=len(PROBABILITIES)) / DRAWS


@pytest.mark.parametrize(
    "sampling, expected",
    [
        (Sampling(), PROBABILITIES),
        (Sampling(top_k=2), [0.5 / 0.8, 0.3 / 0.8, 0, 0]),
        (Sampling(top_p=0.75), [0.5 / 0.8, 0.3 / 0.8, 0, 0]),  # 0.5 < 0.75 <= 0.8
        (Sampling(top_p=0.5), [1, 0, 0, 0]),  # the first token holds it already
        (Sampling(temperature=0.5), PROBABILITIES**2 / np.sum(PROBABILITIES**2)),
    ],
)
def test_draws_follow_the_cut_and_tempered_distribution(sampling, expected):
    for step in (0, 7):
        np.testing.assert_allclose(_frequencies(sampling, step), expected, atol=0.015)


def test_the_hashed_numbers_are_uniform_and_independent_across_rows_steps_and_tokens():
    numbers = hashed_uniform(tf.range(500), tf.constant(3), 1000).numpy()
    assert numbers.min() > 0 and numbers.max() < 1
    assert abs(numbers.mean() - 0.5) < 0.005 and abs(numbers.std() - 12**-0.5) < 0.005
    next_step = hashed_uniform(tf.range(500), tf.constant(4), 1000).numpy()
    for a, b in [
        (numbers[:, :-1], numbers[:, 1:]),  # neighbouring tokens
        (numbers[:-1], numbers[1:]),  # neighbouring seeds
        (numbers, next_step),  # consecutive steps
    ]:
        assert abs(np.corrcoef(a.ravel(), b.ravel())[0, 1]) < 0.01


@pytest.mark.parametrize("members", [1, 2])
def test_top_k_1_is_greedy_search(make_model, sources, members):
    models = [make_model(eos_bias=bias) for bias in (-2.0, -1.0)[:members]]
    model = models[0] if members == 1 else Ensemble(models)
    sampled = sample_search(model, sources, LENGTHS, Sampling(top_k=1), SEEDS)
    np.testing.assert_array_equal(sampled, greedy_search(model, sources, LENGTHS))


def test_a_seed_gives_the_same_translation_in_any_batch_and_form_of_the_search(make_model, sources):
    model = make_model(scale=2.0)  # flatter distributions: the draws vary
    sampling = Sampling(top_k=10, temperature=1.5)
    first = sample_search(model, sources, LENGTHS, sampling, SEEDS).numpy()
    np.testing.assert_array_equal(sample_search(model, sources, LENGTHS, sampling, SEEDS), first)
    other_seeds = sample_search(model, sources, LENGTHS, sampling, SEEDS + 100).numpy()
    assert any(
        not np.array_equal(a[a != PAD_ID], b[b != PAD_ID])
        for a, b in zip(first, other_seeds, strict=True)
    )
    assert not np.array_equal(first, greedy_search(model, sources, LENGTHS).numpy())
    for row in (1, 4):  # alone and unpadded, with its own seed
        source = sources[row : row + 1, : int(np.sum(sources[row] != PAD_ID))]
        alone = sample_search(model, source, LENGTHS, sampling, SEEDS[row : row + 1]).numpy()
        np.testing.assert_array_equal(alone[0], first[row, : alone.shape[1]])
        assert np.all(first[row, alone.shape[1] :] == PAD_ID)
    compiled = tf.function(
        lambda ids, seeds: sample_search(model, ids, LENGTHS, sampling, seeds),
        jit_compile=True,
        autograph=False,
    )
    dynamic = tf.function(
        lambda ids, seeds: sample_search(model, ids, LENGTHS, sampling, seeds, dynamic_shapes=True),
        input_signature=[tf.TensorSpec([None, None], tf.int32), tf.TensorSpec([None], tf.int32)],
        autograph=False,
    )
    for search in (compiled, dynamic):
        np.testing.assert_array_equal(search(sources, SEEDS), first)


@pytest.mark.parametrize(
    "options, message",
    [
        (dict(top_k=-1), "top_k must be 0 .* or a positive integer, got -1"),
        (dict(top_k=True), "top_k must be 0 .* or a positive integer, got True"),
        (dict(top_p=0.0), r"top_p must be in \(0, 1\], got 0.0"),
        (dict(top_p=1.5), r"top_p must be in \(0, 1\], got 1.5"),
        (dict(temperature=0), "temperature must be positive, got 0"),
        (dict(seed=1.5), "seed must be an integer, got 1.5"),
    ],
)
def test_bad_sampling_options_are_named(options, message):
    with pytest.raises(RequestError, match=message):
        Sampling(**options)
