"""The replica step, plain and with R-Drop: what the optimizer sees and what it returns."""

from __future__ import annotations

import keras
import numpy as np
import tensorflow as tf

from configs import tiny
from training import trainer
from training.step import make_replica_step

VOCAB_SIZE = 40


def batch() -> dict:
    rng = np.random.default_rng(0)
    source = rng.integers(3, VOCAB_SIZE, size=[4, 7])
    target = rng.integers(3, VOCAB_SIZE, size=[4, 6])
    source[2:, 5:] = 0
    target[1:, 4:] = 0
    return {
        "source": tf.constant(source, tf.int32),
        "target_in": tf.constant(target[:, :-1], tf.int32),
        "target_out": tf.constant(target[:, 1:], tf.int32),
    }


def one_step(dropout: float, rdrop_alpha: float) -> tuple[list[float], list[np.ndarray]]:
    """(loss_sum, correct, count) and the weights after one step from the same seeded start."""
    keras.utils.set_random_seed(0)
    config = tiny.get_config()
    config.model.dropout = dropout
    model = trainer.build_model(config, vocab_size=VOCAB_SIZE)
    # Plain gradient descent: the weights move by the gradient itself (Adam's first step is about
    # its sign, which float noise flips where a gradient is ~0).
    optimizer = keras.optimizers.SGD(learning_rate=1.0)
    step = make_replica_step(model, optimizer, 0.1, rdrop_alpha=rdrop_alpha)
    results = [float(value) for value in step(batch())]
    return results, [variable.numpy() for variable in model.trainable_variables]


def test_rdrop_without_dropout_is_the_plain_step():
    # Both passes agree, so the KL term is 0 and the mean of the two losses is the plain loss.
    plain_results, plain_weights = one_step(dropout=0.0, rdrop_alpha=0.0)
    rdrop_results, rdrop_weights = one_step(dropout=0.0, rdrop_alpha=5.0)
    np.testing.assert_allclose(rdrop_results, plain_results, rtol=1e-5)
    assert rdrop_results[2] == 5 + 3 * 3  # target tokens of one copy of the batch
    for plain, rdrop in zip(plain_weights, rdrop_weights, strict=True):
        np.testing.assert_allclose(rdrop, plain, rtol=1e-4, atol=1e-6)


def test_rdrop_with_dropout_pulls_the_two_passes_together():
    # Same seeds, so the same two dropout masks: only the KL weight differs between the runs.
    weak_results, weak_weights = one_step(dropout=0.3, rdrop_alpha=1e-6)
    strong_results, strong_weights = one_step(dropout=0.3, rdrop_alpha=50.0)
    np.testing.assert_allclose(strong_results, weak_results, rtol=1e-5)  # logged: the CE only
    assert weak_results[2] == 14
    difference = max(
        np.abs(weak - strong).max()
        for weak, strong in zip(weak_weights, strong_weights, strict=True)
    )
    assert difference > 1e-4


def test_the_compiled_rdrop_step_learns():
    keras.utils.set_random_seed(0)
    config = tiny.get_config()
    config.model.dropout = 0.1
    model = trainer.build_model(config, vocab_size=VOCAB_SIZE)
    optimizer = trainer.build_optimizer(config)
    step = tf.function(make_replica_step(model, optimizer, 0.1, rdrop_alpha=1.0))
    losses = [float(step(batch())[0]) / 14 for _ in range(30)]
    assert all(np.isfinite(losses)) and losses[-1] < 0.5 * losses[0], losses
