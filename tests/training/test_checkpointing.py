"""RunCheckpoints on their own: a save restores the step, the weights and the data position; a
position saved with other data settings is left out, and the best model is kept apart."""

from __future__ import annotations

import logging

import keras
import numpy as np
import pytest
import tensorflow as tf

from rundir.layout import RunDirectory
from training.checkpointing import DataPosition, RunCheckpoints, TrainingError, dropout_seeds
from transformer.dropout import Dropout

SETTINGS = {"data.max_length": 48, "workers": 1}


def checkpoints_of(
    workdir: str, iterator, settings: dict = SETTINGS, seeds: bool = True
) -> RunCheckpoints:
    """A one-layer model with dropout, an optimizer and a data position (with the dropout's
    seed unless not ``seeds``), in ``workdir``."""
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input([3]), keras.layers.Dense(2), Dropout(0.5)])
    optimizer = keras.optimizers.SGD(0.1)
    optimizer.build(model.trainable_variables)
    run = RunDirectory(workdir)
    position = DataPosition(iterator, settings, 0, dropout_seeds(model) if seeds else [])
    return RunCheckpoints(model, optimizer, position, run, run, keep=2)


def a_step(saved: RunCheckpoints, iterator) -> None:
    next(iterator)
    for seed in saved.data_position.seeds:
        seed.assign_add([0, 1])  # what a dropout layer's call does
    model = saved.manager.checkpoint.model
    saved.optimizer.iterations.assign_add(1)
    for variable in model.values():
        variable.assign_add(tf.ones_like(variable))


def test_a_save_restores_the_step_the_weights_and_the_data_position(tmp_path, caplog):
    iterator = iter(tf.data.Dataset.range(100))
    saved = checkpoints_of(str(tmp_path), iterator)
    for _ in range(3):
        a_step(saved, iterator)
        saved.save()
    weights = [v.numpy() for v in saved.manager.checkpoint.model.values()]
    resumed_iterator = iter(tf.data.Dataset.range(100))
    resumed = checkpoints_of(str(tmp_path), resumed_iterator)
    resumed.restore()
    assert resumed.step == 3 and int(next(resumed_iterator)) == 3
    [seed] = resumed.data_position.seeds  # three calls of the dropout layer on from its start
    [start] = checkpoints_of(str(tmp_path / "new"), iterator).data_position.seeds
    assert (seed.numpy() - start.numpy()).tolist() == [0, 3]
    for restored, expected in zip(resumed.manager.checkpoint.model.values(), weights, strict=True):
        np.testing.assert_array_equal(restored.numpy(), expected)
    # Two checkpoints kept, and only their data positions.
    positions = sorted(p.name for p in (tmp_path / "checkpoints").glob("data-worker0-*.index"))
    assert positions == ["data-worker0-2.index", "data-worker0-3.index"]

    other = iter(tf.data.Dataset.range(100))
    changed = checkpoints_of(str(tmp_path), other, {**SETTINGS, "data.max_length": 40})
    with caplog.at_level(logging.WARNING):
        changed.restore()
    assert changed.step == 3 and int(next(other)) == 0
    assert "data.max_length 48 -> 40" in caplog.text


def test_the_best_model_is_kept_apart_with_its_scores(tmp_path):
    iterator = iter(tf.data.Dataset.range(10))
    saved = checkpoints_of(str(tmp_path), iterator)
    assert saved.best_score is None
    a_step(saved, iterator)
    saved.save_best({"validation_bleu": 12.5})
    assert saved.best_score == 12.5 and tf.train.latest_checkpoint(str(tmp_path / "best"))
    assert tf.train.latest_checkpoint(str(tmp_path / "checkpoints")) is None


def test_checkpoints_none_of_which_reads_are_one_error(tmp_path):
    iterator = iter(tf.data.Dataset.range(10))
    saved = checkpoints_of(str(tmp_path), iterator)
    a_step(saved, iterator)
    saved.save()
    for path in (tmp_path / "checkpoints").glob("ckpt-1.data-*"):
        path.write_bytes(b"")
    with pytest.raises(TrainingError, match="None of the 1 checkpoints in .* can be read"):
        checkpoints_of(str(tmp_path), iter(tf.data.Dataset.range(10))).restore()


def test_a_data_position_saved_without_dropout_seeds_restores_with_a_warning(tmp_path, caplog):
    iterator = iter(tf.data.Dataset.range(10))
    saved = checkpoints_of(str(tmp_path), iterator, seeds=False)  # as before 2026-12-05
    a_step(saved, iterator)
    saved.save()
    resumed_iterator = iter(tf.data.Dataset.range(10))
    resumed = checkpoints_of(str(tmp_path), resumed_iterator)
    with caplog.at_level(logging.WARNING):
        resumed.restore()
    assert resumed.step == 1 and int(next(resumed_iterator)) == 1
    assert "holds no dropout seeds" in caplog.text and "differ from an uninterrupted" in caplog.text
