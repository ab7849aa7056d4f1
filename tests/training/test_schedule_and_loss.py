import itertools

import numpy as np
import pytest
import tensorflow as tf

from training.loss import label_smoothed_loss, loss_function
from training.schedule import WarmupCosine, WarmupInverseSqrt, make_schedule


def test_schedule_is_the_papers_formula():
    schedule = WarmupInverseSqrt.from_paper(d_model=512, warmup_steps=4000)
    for step in (1, 100, 4000, 10000, 100000):
        expected = 512**-0.5 * min(step**-0.5, step * 4000**-1.5)
        assert float(schedule(step)) == pytest.approx(expected, rel=1e-5)


def test_schedule_peaks_at_the_end_of_warmup():
    schedule = WarmupInverseSqrt(peak_learning_rate=1e-3, warmup_steps=100)
    assert float(schedule(50)) == pytest.approx(5e-4)
    assert float(schedule(100)) == pytest.approx(1e-3)
    assert float(schedule(400)) == pytest.approx(5e-4)


def numpy_smoothed_loss(logits, targets, smoothing, pad_id=0):
    vocab = logits.shape[-1]
    log_probs = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    smoothed = np.full(logits.shape, smoothing / vocab)
    np.put_along_axis(smoothed, targets[..., None], 1 - smoothing + smoothing / vocab, axis=-1)
    kl = (smoothed * (np.log(smoothed) - log_probs)).sum(-1)
    weights = targets != pad_id
    return (kl * weights).sum(), weights.sum()


@pytest.mark.parametrize("compiled", [True, False], ids=["xla", "plain"])
def test_label_smoothed_loss_is_kl_to_the_smoothed_target_and_ignores_padding(compiled):
    rng = np.random.default_rng(0)
    logits = rng.normal(size=[2, 5, 11])
    targets = rng.integers(1, 11, size=[2, 5])
    targets[1, 3:] = 0
    loss_sum, correct, count = loss_function(compiled)(
        tf.constant(logits, tf.float32), tf.constant(targets), 0.1
    )
    expected_loss, expected_count = numpy_smoothed_loss(logits, targets, 0.1)
    assert float(loss_sum) == pytest.approx(expected_loss, rel=1e-5)
    assert float(count) == expected_count == 8
    predictions = logits.argmax(-1)
    assert float(correct) == ((predictions == targets) & (targets != 0)).sum()


@pytest.mark.parametrize("compiled", [True, False], ids=["xla", "plain"])
def test_label_smoothed_loss_gradient_is_softmax_minus_the_smoothed_target_on_real_tokens(
    compiled,
):
    rng = np.random.default_rng(1)
    logits = tf.constant(rng.normal(size=[2, 4, 7]), tf.float32)
    targets = np.array([[1, 5, 2, 0], [6, 3, 0, 0]])
    with tf.GradientTape() as tape:
        tape.watch(logits)
        loss_sum, _, _ = loss_function(compiled)(logits, tf.constant(targets), 0.2)
    gradient = tape.gradient(loss_sum, logits).numpy()
    probabilities = tf.nn.softmax(logits).numpy()
    smoothed = np.full(probabilities.shape, 0.2 / 7)
    np.put_along_axis(smoothed, targets[..., None], 0.8 + 0.2 / 7, axis=-1)
    expected = (probabilities - smoothed) * (targets != 0)[..., None]
    np.testing.assert_allclose(gradient, expected, atol=1e-6)


def test_perfect_prediction_costs_nothing_and_padding_is_never_accuracy():
    targets = tf.constant([[3, 4, 0, 0]])
    logits = tf.one_hot(targets, 6) * 100.0
    loss_sum, correct, count = label_smoothed_loss(logits, targets, 0.0)
    assert float(loss_sum) == pytest.approx(0.0, abs=1e-4)
    assert float(correct) == 2.0 and float(count) == 2.0


def test_cosine_schedule_warms_up_then_decays_to_zero_at_the_last_step():
    schedule = WarmupCosine(peak_learning_rate=1e-3, warmup_steps=100, total_steps=1100)
    assert float(schedule(50)) == pytest.approx(5e-4)
    assert float(schedule(100)) == pytest.approx(1e-3)
    assert float(schedule(600)) == pytest.approx(5e-4)
    assert float(schedule(1100)) == pytest.approx(0.0, abs=1e-12)
    assert float(schedule(5000)) == pytest.approx(0.0, abs=1e-12)
    values = [float(schedule(step)) for step in range(100, 1101, 50)]
    assert all(a > b for a, b in itertools.pairwise(values))


def test_make_schedule_picks_the_decay_and_the_papers_peak():
    paper = make_schedule("inverse_sqrt", 0.0, 4000, 10000, d_model=512)
    assert float(paper(4000)) == pytest.approx(512**-0.5 * 4000**-0.5, rel=1e-5)
    assert isinstance(make_schedule("cosine", 1e-3, 10, 20, d_model=8), WarmupCosine)
    with pytest.raises(ValueError, match="decay must be one of"):
        make_schedule("linear", 1e-3, 10, 20, d_model=8)
    with pytest.raises(ValueError, match="total_steps"):
        WarmupCosine(1e-3, warmup_steps=20, total_steps=20)
