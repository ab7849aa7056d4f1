"""What a run saves and resumes from: the model and optimizer (the newest
``train.keep_checkpoints``), beside each the position of every worker in the training data and
in its dropout masks' random sequence, and the best model by a validation score (BLEU, a
classifier's F1).

A rerun resumes from the newest checkpoint that reads, warning about each newer one that does
not, with the data iterator where it was and each dropout layer's seed generator in the state it
had: exactly the batches and the dropout masks it would have seen. A data
position saved with other data settings (``training.data.data_settings``) or not at all is
left out: the data restarts from the beginning of its (deterministic) order; one written by a
version that saved no settings is a TrainingError saying what to do. Each save names
the file a refused write was for (``rundir.checkpoints.saving``).

Example:
    >>> saved = RunCheckpoints(model, optimizer, data_position, run_dir, run_dir, keep=5)
    >>> saved.restore()          # the step and the data position of the newest checkpoint
    >>> saved.save()             # at the optimizer's step
"""

from __future__ import annotations

import json
import os

import tensorflow as tf
from absl import logging

from common.errors import UserError
from common.files import read_json, write_json
from rundir import checkpoints
from rundir.layout import RunDirectory
from training.data import changed_settings


class TrainingError(UserError, RuntimeError):
    """Training cannot go on (e.g. a non-finite loss); the message says why and what is intact."""


def dropout_seeds(model) -> list:
    """The state variable of each dropout layer's seed generator, in the model's order. Keras
    leaves them out of ``model.weights`` (so out of ``rundir.checkpoints.model_variables``): a
    resumed run that did not restore them would draw the masks of its first steps again."""
    return [v for v in model.variables if v.path.endswith(_SEED_STATE)]


_SEED_STATE = "/seed_generator_state"  # keras.random.SeedGenerator's variable


class DataPosition:
    """One worker's position in its training batches, with the data settings it fits, and the
    state of its dropout layers' random seeds (:func:`dropout_seeds`).

    Example:
        >>> position = DataPosition(iterator, data_settings(config, 1), 0, dropout_seeds(model))
    """

    def __init__(self, iterator, settings: dict, worker: int, seeds: list = ()) -> None:
        self.settings, self.worker, self.seeds = settings, worker, list(seeds)
        settings_variable = tf.Variable(json.dumps(settings, sort_keys=True), trainable=False)
        self.without_seeds = tf.train.Checkpoint(iterator=iterator, settings=settings_variable)
        self.checkpoint = tf.train.Checkpoint(
            iterator=iterator, settings=settings_variable, dropout_seeds=self.seeds
        )


class RunCheckpoints:
    """The checkpoints of one run (see the module docstring).

    Args:
        model: its variables are saved (``rundir.checkpoints.model_variables``).
        optimizer: saved beside them; its ``iterations`` is the step.
        data_position: this worker's position in the training data.
        run_dir: the work directory; its checkpoints are the ones a run resumes from.
        output: where this process writes: the work directory, or a non-chief worker's scratch
            copy (collective saves need every worker to write).
        keep: how many of the newest checkpoints are kept.
        chief: whether this process writes ``best/best.json``.
        score_name: the validation value that chooses the best model (higher is better).
    """

    def __init__(
        self,
        model,
        optimizer,
        data_position: DataPosition,
        run_dir: RunDirectory,
        output: RunDirectory,
        keep: int,
        chief: bool = True,
        score_name: str = "validation_bleu",
    ) -> None:
        self.optimizer, self.data_position = optimizer, data_position
        self.score_name = score_name
        self.run_dir, self.output, self.chief = run_dir, output, chief
        variables = checkpoints.model_variables(model)
        self.manager = tf.train.CheckpointManager(
            tf.train.Checkpoint(model=variables, optimizer=optimizer),
            output.checkpoints,
            max_to_keep=keep,
        )
        self.best_manager = tf.train.CheckpointManager(
            tf.train.Checkpoint(model=variables), output.best, max_to_keep=1
        )

    @property
    def step(self) -> int:
        return int(self.optimizer.iterations.numpy())

    @property
    def best_score(self) -> float | None:
        """The validation score (``score_name``) of the best checkpoint saved, or None."""
        return (read_json(self.output.best_scores) or {}).get(self.score_name)

    def restore(self) -> None:
        """Restores the newest checkpoint that reads (warning about each newer one that does
        not) and this worker's data position at its step; a TrainingError when none reads."""
        # The chief's checkpoints, for every worker.
        state = tf.train.get_checkpoint_state(self.run_dir.checkpoints)
        paths = state.all_model_checkpoint_paths[::-1] if state else []
        for path in paths:
            try:
                self.manager.checkpoint.restore(path).assert_existing_objects_matched()
            except checkpoints.READ_ERRORS as error:
                logging.warning(
                    "The checkpoint %s; skipping it.", checkpoints.cannot_read(path, error)
                )
                continue
            self._restore_data_position()
            print(f"Resuming from checkpoint {path} at step {self.step}.", flush=True)
            return
        if paths:
            raise TrainingError(
                f"None of the {len(paths)} checkpoints in {self.run_dir.checkpoints} can be read "
                "(see the warnings above); move that directory aside to train from the beginning."
            )

    def save(self) -> None:
        """Saves the data position, then the checkpoint (whose state file commits both), and
        removes the data positions of checkpoints no longer kept."""
        step = self.step
        position = self._data_position_path(step)
        with checkpoints.saving(position):
            self.data_position.checkpoint.write(position)
        with checkpoints.saving(os.path.join(self.manager.directory, f"ckpt-{step}")):
            self.manager.save(checkpoint_number=step)
        kept = {self._data_position_path(p.rsplit("-", 1)[1]) for p in self.manager.checkpoints}
        for path in tf.io.gfile.glob(self._data_position_path("*")):
            if path.rsplit(".", 1)[0] not in kept:
                tf.io.gfile.remove(path)

    def save_best(self, values: dict[str, float]) -> None:
        """Saves the model as the best one, with its validation ``values``."""
        step = self.step
        with checkpoints.saving(os.path.join(self.output.best, f"ckpt-{step}")):
            self.best_manager.save(checkpoint_number=step)
        if self.chief:
            write_json(self.output.best_scores, {"step": step, **values})

    def _data_position_path(self, step: int | str) -> str:
        return self.run_dir.data_position(self.data_position.worker, step)

    def _restore_data_position(self) -> None:
        path = self._data_position_path(self.step)
        try:
            problem = self._data_position_problem(path)
            if not problem and self._has_seeds(path):
                self.data_position.checkpoint.read(path).assert_existing_objects_matched()
            elif not problem:
                self.data_position.without_seeds.read(path).assert_existing_objects_matched()
                logging.warning(
                    "The data position %s holds no dropout seeds (written before 2026-12-05 or "
                    "with model.dropout = 0): the dropout masks from here differ from an "
                    "uninterrupted run's.",
                    path,
                )
        except checkpoints.READ_ERRORS as error:
            problem = f"The data position {checkpoints.cannot_read(path, error)}"
        if problem:
            logging.warning(
                "%s: the data restarts from the beginning of its (deterministic) order.", problem
            )

    def _has_seeds(self, path: str) -> bool:
        """Whether the data position at ``path`` holds a state for each dropout seed."""
        saved = tf.train.list_variables(path)
        return sum(name.startswith("dropout_seeds/") for name, _ in saved) >= len(
            self.data_position.seeds
        )

    def _data_position_problem(self, path: str) -> str | None:
        """Why the data position saved at ``path`` cannot be restored, or None."""
        if not tf.io.gfile.exists(path + ".index"):
            return f"No data position saved for step {self.step} ({path})"
        reader = tf.train.load_checkpoint(path)
        key = "settings/.ATTRIBUTES/VARIABLE_VALUE"
        if not reader.has_tensor(key):
            raise TrainingError(
                f"The data position {path} was written by a version before 72f6898 "
                "(2026-11-24), which saved no data settings beside it: delete "
                f"{self._data_position_path('*')}.* to resume with the data from its beginning "
                "(or resume with that version)."
            )
        saved = json.loads(reader.get_tensor(key))
        differences = changed_settings(saved, self.data_position.settings)
        if differences:
            return (
                f"The data settings changed since the data position of step {self.step} was "
                f"saved ({differences}), so it does not fit this pipeline"
            )
        return None


def resume_point(workdir: str) -> str:
    """What a rerun of ``workdir`` resumes from (for the message of a refused write)."""
    latest = tf.train.latest_checkpoint(RunDirectory(workdir).checkpoints)
    if latest is None:
        return "no checkpoint was written yet, so a rerun starts from the beginning"
    return f"the last complete checkpoint, {latest}, is intact and a rerun resumes from it"
