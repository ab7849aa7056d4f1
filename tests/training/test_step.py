"""The replica step: the loss it returns is the label-smoothed loss, and it learns."""

from __future__ import annotations

import keras
import numpy as np
import tensorflow as tf

from configs import tiny
from rundir.model import build_model
from training.loss import label_smoothed_loss
from training.optimizer import build_optimizer
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


def test_the_step_returns_the_loss_before_its_update_and_moves_the_weights():
    keras.utils.set_random_seed(0)
    config = tiny.get_config()
    config.model.dropout = 0.0
    model = build_model(config, vocab_size=VOCAB_SIZE)
    logits = model((batch()["source"], batch()["target_in"]))
    expected = [float(v) for v in label_smoothed_loss(logits, batch()["target_out"], 0.1, 0)]
    before = [variable.numpy() for variable in model.trainable_variables]
    step = make_replica_step(model, keras.optimizers.SGD(learning_rate=1.0), 0.1)
    np.testing.assert_allclose([float(v) for v in step(batch())], expected, rtol=1e-5)
    assert expected[2] == 5 + 3 * 3  # target tokens
    moved = [
        not np.allclose(old, new.numpy())
        for old, new in zip(before, model.trainable_variables, strict=True)
    ]
    assert moved[0] and sum(moved) >= 0.8 * len(moved)  # the embeddings and nearly all others


def test_the_compiled_step_learns():
    keras.utils.set_random_seed(0)
    config = tiny.get_config()
    model = build_model(config, vocab_size=VOCAB_SIZE)
    step = tf.function(make_replica_step(model, build_optimizer(config), 0.1), autograph=False)
    losses = [float(step(batch())[0]) / 14 for _ in range(30)]
    assert all(np.isfinite(losses)) and losses[-1] < 0.5 * losses[0], losses
