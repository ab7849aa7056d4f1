"""The training loop: steps, logged and summarised, with checkpoints and validation due.

``train(config, workdir)`` is all ``train.py`` runs: a :class:`Trainer` for a translation model,
a ``training.classification.ClassifierTrainer`` for a classifier (``config.task``), which replaces
the parts that are the task's (data, model, step, validation) and keeps the loop. Rerunning it
with the same work directory resumes from the last complete checkpoint that reads (model,
optimizer, step and the position of the data iterator: ``training.checkpointing``), and a
finished run says so and returns. Ctrl-C and SIGTERM save the step reached first
(``training.stopping``). A write the file system refuses (a full disk, a read-only directory)
stops the run with a :class:`common.storage.StorageError` that names the file and the checkpoint
a rerun resumes from. The model and optimizer come from ``rundir.model`` and
``training.optimizer``, the data from ``training.data``, validation from ``training.validation``.
"""

from __future__ import annotations

import dataclasses
import math
import os
import shutil
import time

import keras
import ml_collections
import tensorflow as tf
from absl import logging
from tqdm import tqdm

import data_pipeline
from common.cpu import read_cpuinfo
from common.files import atomic_write_text, write_json
from common.storage import writing
from rundir.config import data_spec
from rundir.layout import RunDirectory
from rundir.model import build_model
from training import config as config_lib
from training import distribute
from training.checkpointing import (
    DataPosition,
    RunCheckpoints,
    TrainingError,
    dropout_seeds,
    resume_point,
)
from training.cpu import bfloat16_speed_warning
from training.data import data_settings, load_data, training_batches
from training.early_stopping import EarlyStopping
from training.finetuning import StartFrom, freeze, tagged_as_vocabulary
from training.optimizer import build_optimizer
from training.step import make_replica_step
from training.stopping import StopRequest
from training.validation import Validator

__all__ = ["TrainResult", "Trainer", "TrainingError", "train"]

# The training iterator is read inside the compiled step. Autotuned, such an iterator's tuning
# thread (TF 2.21) does not wake when the iterator is deleted: the deletion waits out the
# thread's sleep, which grows to tens of seconds in a long run, so a run that ended in a process
# (a notebook, a test) stalled whatever ran next. Untuned, it trained as fast
# (docs/PERFORMANCE.md).
_UNTUNED = tf.data.Options()
_UNTUNED.autotune.enabled = False


@dataclasses.dataclass
class TrainResult:
    step: int
    score_name: str  # the validation value choosing the best model: "validation_bleu", ...
    train_losses: list[tuple[int, float]] = dataclasses.field(default_factory=list)
    validation_loss: float | None = None
    validation_score: float | None = None  # the last validation's
    best_score: float | None = None
    already_finished: bool = False
    terminated: bool = False  # stopped by SIGTERM, the step reached saved
    stopped_early: bool = False  # by train.early_stopping_patience


class Trainer:
    """One run of ``config`` in ``workdir``, set up: its data, model, optimizer, checkpoints,
    validation and summaries; :meth:`run` trains it (:func:`train` is both).

    A translation model's; a subclass for another task overrides the parts that are the task's:
    :meth:`_load_data` (the training batches), :meth:`_new_model`, :meth:`_data_settings`,
    :meth:`_replica_step`, :meth:`_new_validator`, and :attr:`score_name`.

    Example:
        >>> Trainer(configs.tiny.get_config(), "/tmp/tiny").run().step
        300
    """

    score_name = "validation_bleu"  # the validation value choosing best/ and early stopping
    counted = "target_tokens"  # what the steps' counts count (for the speed's summary)

    def __init__(self, config: ml_collections.ConfigDict, workdir: str) -> None:
        self.config, self.workdir, self.run_dir = config, workdir, RunDirectory(workdir)
        self.strategy = distribute.make_strategy(
            config.train.distribution, config.train.tpu_address
        )
        self.chief = distribute.is_chief(self.strategy)
        # Non-chief workers write their (required) copies of collective saves to a scratch dir.
        self.output = (
            self.run_dir
            if self.chief
            else RunDirectory(self.run_dir.worker_scratch(self.strategy.cluster_resolver.task_id))
        )
        os.makedirs(self.output.root, exist_ok=True)
        if self.chief:  # First, so that a directory that cannot be written fails at once.
            atomic_write_text(self.run_dir.config, config.to_json_best_effort(indent=2) + "\n")
        keras.utils.set_random_seed(config.train.seed)
        keras.mixed_precision.set_global_policy(config.train.precision)
        has_accelerator = bool(tf.config.list_logical_devices("GPU"))
        warning = bfloat16_speed_warning(
            config.train.precision,
            read_cpuinfo(),
            has_accelerator=has_accelerator or config.train.distribution == "tpu",
        )
        if warning:
            logging.warning(warning)

        self.start = StartFrom.parse(config.train.init_from)  # a fine-tuning run's start
        self.has_checkpoints = tf.train.latest_checkpoint(self.run_dir.checkpoints) is not None
        # train.eval_every = 0: no validation, so no validation split, pipeline or traces.
        self.validating = config.train.eval_every > 0
        # Each worker reads its own share of the batches through a plain iterator, which (unlike
        # tf.distribute's) can be checkpointed: its position is saved beside every checkpoint.
        worker, num_workers = distribute.worker_index_and_count(self.strategy)
        self.batches = self._load_data().shard(num_workers, worker).with_options(_UNTUNED)
        self.iterator = iter(self.batches)
        with self.strategy.scope():
            self.model = self._new_model()
            self.optimizer = build_optimizer(config)
            self.optimizer.build(self.model.trainable_variables)
            if self.start and not self.has_checkpoints and config.train.keep_optimizer:
                self.start.restore_optimizer(self.optimizer)
        self.checkpoints = RunCheckpoints(
            self.model,
            self.optimizer,
            DataPosition(
                self.iterator,
                # A position saved by an autotuned iterator (before 2026-12-06) does not restore
                # into an untuned one: such a run restarts its data.
                {**self._data_settings(num_workers), "autotune": False},
                worker,
                dropout_seeds(self.model),
            ),
            self.run_dir,
            self.output,
            keep=config.train.keep_checkpoints,
            chief=self.chief,
            score_name=self.score_name,
        )
        self.train_step = self._make_train_step()
        self.validator = self._new_validator() if self.validating else None
        self.early_stopping = EarlyStopping(
            config.train.early_stopping_patience,
            config.train.early_stopping_min_delta,
            metric=self.score_name.removeprefix("validation_"),
        )
        with writing(self.run_dir.tensorboard):
            self.writer = (
                tf.summary.create_file_writer(self.run_dir.tensorboard)
                if self.chief
                else tf.summary.create_noop_writer()
            )

    @property
    def step(self) -> int:
        return self.checkpoints.step

    def _load_data(self) -> tf.data.Dataset:
        """Sets ``self.tokenizer`` (trained the first time), ``self.train_pairs`` and what
        validation reads; returns the endless training batches (before sharding over workers)."""
        config = self.config
        self.data = data_spec(config)  # the data's names parsed once: a bad one fails first
        # A fine-tuning run's tokenizer is the run's it starts from, unless it has its own.
        if self.start and not self.has_checkpoints:
            self.start.check(config)
            self.start.copy_tokenizer(self.output.tokenizer)
        if self.start:
            self.data = tagged_as_vocabulary(self.data, self.output.tokenizer)
        splits = [config.data.validation_split] if self.validating else []
        self.loaded = load_data(config, self.data, self.output.tokenizer, splits)
        self.tokenizer, self.train_pairs = self.loaded.tokenizer, self.loaded.train
        return training_batches(config, self.train_pairs, self.tokenizer)

    def _new_model(self) -> keras.Model:
        """The model, its variables created (in the strategy's scope); a fine-tuning run's
        starts from the weights of the run it names, ``train.freeze`` kept fixed."""
        model = build_model(self.config, self.tokenizer.vocab_size)
        if self.start and not self.has_checkpoints:  # else: resumed from its own checkpoint
            print(f"Starting from {self.start.restore(model)}.", flush=True)
        freeze(model, self.config.train.freeze)
        return model

    def _data_settings(self, num_workers: int) -> dict:
        """The settings a saved position of the training batches depends on."""
        return data_settings(self.config, num_workers)

    def _replica_step(self):
        """``step(batch) -> (loss_sum, correct, count)`` on one replica."""
        return make_replica_step(
            self.model,
            self.optimizer,
            self.config.train.label_smoothing,
            data_pipeline.PAD_ID,
            compiled_loss=self.config.train.jit_compile_loss,
        )

    def _new_validator(self) -> Validator:
        return Validator(
            self.config, self.data, self.loaded.by_direction, self.model, self.tokenizer
        )

    def _make_train_step(self):
        replica_step = self._replica_step()

        def step(iterator, stop_requested):
            batch = next(iterator)
            results = self.strategy.run(
                replica_step, args=distribute.split_for_replicas(self.strategy, batch)
            )
            # A stop that one worker was asked for (SIGTERM) is summed with the step's values,
            # so that every worker stops after this step.
            results += (self.strategy.run(lambda: tf.identity(stop_requested)),)
            return [self.strategy.reduce("sum", value, axis=None) for value in results]

        return tf.function(step, jit_compile=self.config.train.jit_compile or None, autograph=False)

    def run(self) -> TrainResult:
        """Trains from the newest checkpoint to ``train.steps`` (see the module docstring)."""
        steps = self.config.train.steps
        self.checkpoints.restore()
        self.early_stopping.resume(self.run_dir.validations, self.step)
        result = TrainResult(self.step, self.score_name, best_score=self.checkpoints.best_score)
        if self.step >= steps or self.early_stopping.due:
            done = (
                f"step {self.step} of {steps}"
                if self.step >= steps
                else f"stopped early at step {self.step} ({self.early_stopping.reason()})"
            )
            print(
                f"Training already finished: {done} in {self.workdir}; nothing to do.", flush=True
            )
            return dataclasses.replace(result, already_finished=True)
        log = _Log(self.config.train.log_every, steps, self.counted)
        progress = self._progress_bar(steps)
        stop = StopRequest().install()
        try:
            while self.step < steps:
                start = time.perf_counter()
                requested = tf.constant(float(stop.requested))
                loss_sum, correct, count, stops = (
                    float(v) for v in self.train_step(self.iterator, requested)
                )
                self._check_finite(loss_sum)
                log.add(loss_sum, correct, count, time.perf_counter() - start)
                progress.update(1)
                self._after_step(result, log, progress)
                if stops:  # SIGTERM, here or on another worker
                    result.terminated = self._save_on_request(progress)
                    break
                if self.early_stopping.due:
                    result.stopped_early = self._stop_early(progress)
                    break
        except KeyboardInterrupt:
            progress.close()
            self.checkpoints.save()
            print(
                f"\nInterrupted: saved step {self.step}; rerun the same command to resume.",
                flush=True,
            )
            raise
        finally:
            stop.uninstall()
            progress.close()
        result.step = self.step
        return result

    def _progress_bar(self, steps: int) -> tqdm:
        return tqdm(
            total=steps,
            initial=self.step,
            desc="train",
            unit="step",
            dynamic_ncols=True,
            disable=not self.chief,
            mininterval=1.0,
        )

    def _after_step(self, result: TrainResult, log: _Log, progress: tqdm) -> None:
        """What falls due after a step: a log line and summaries, a checkpoint, a validation."""
        step, train = self.step, self.config.train
        if log.due(step):
            values = log.values(float(self.optimizer.learning_rate))
            result.train_losses.append((step, values["train_loss"]))
            progress.set_postfix(
                loss=f"{values['train_loss']:.3f}",
                lr=f"{values['learning_rate']:.2e}",
                per_s=f"{values[f'{self.counted}_per_second']:.0f}",
            )
            self._summaries(values)
        if step % train.checkpoint_every == 0 or step == train.steps:
            self.checkpoints.save()
        if self.validator and (step % train.eval_every == 0 or step == train.steps):
            self._validate(result, progress)

    def _validate(self, result: TrainResult, progress: tqdm) -> None:
        """Validates, writes the outputs and summaries; saves the best model so far."""
        validation = self.validator.run()
        values, score = validation.values, validation.values[self.score_name]
        if self.chief:
            atomic_write_text(
                self.output.validation_translations(self.step),
                "".join(line + "\n" for line in validation.translations),
            )
        result.validation_loss, result.validation_score = values["validation_loss"], score
        self._summaries(values)
        progress.write(f"step {self.step}: {validation.summary()}")
        if result.best_score is None or score > result.best_score:
            result.best_score = score
            self.checkpoints.save_best(values)
        self.early_stopping.add(self.step, score)
        if self.chief:
            write_json(self.output.validations, self.early_stopping.record())

    def _check_finite(self, loss_sum: float) -> None:
        if not math.isfinite(loss_sum):
            raise TrainingError(
                f"The training loss became {loss_sum} at step {self.step}; stopping without "
                "saving. The last good checkpoint is intact: "
                f"{self.checkpoints.manager.latest_checkpoint or '(none yet)'}. Lower "
                "train.peak_learning_rate, raise train.warmup_steps or set "
                "train.gradient_clip_norm, then rerun."
            )

    def _stop_early(self, progress: tqdm) -> bool:
        """Saves the step reached (unless it was just saved) and says why the run ends; True."""
        self._save_unless_saved()
        progress.write(f"Stopping early at step {self.step}: {self.early_stopping.reason()}.")
        return True

    def _save_unless_saved(self) -> None:
        latest = self.checkpoints.manager.latest_checkpoint
        if latest is None or not latest.endswith(f"-{self.step}"):
            self.checkpoints.save()

    def _save_on_request(self, progress: tqdm) -> bool:
        """Saves the step reached (unless it was just saved) and says so; True."""
        self._save_unless_saved()
        progress.write(
            f"Terminated (SIGTERM): saved step {self.step}; rerun the same command to resume."
        )
        return True

    def _summaries(self, values: dict[str, float]) -> None:
        with writing(self.run_dir.tensorboard), self.writer.as_default(step=self.step):
            for name, value in values.items():
                tf.summary.scalar(name, value)
            self.writer.flush()


class _Log:
    """The training loss, accuracy and speed since the last log line, every ``every`` steps;
    ``counted``: what the steps' counts count (``target_tokens``, ``texts``)."""

    def __init__(self, every: int, steps: int, counted: str) -> None:
        self.every, self.steps, self.counted = every, steps, counted
        self._reset()

    def _reset(self) -> None:
        self.loss = self.correct = self.tokens = self.seconds = 0.0

    def add(self, loss_sum: float, correct: float, tokens: float, seconds: float) -> None:
        """One step's sums, and the seconds of the step alone (not saves or validation)."""
        self.loss += loss_sum
        self.correct += correct
        self.tokens += tokens
        self.seconds += seconds

    def due(self, step: int) -> bool:
        return step % self.every == 0 or step == self.steps

    def values(self, learning_rate: float) -> dict[str, float]:
        """The summaries of the steps since the last call, which starts a new window."""
        values = {
            "train_loss": self.loss / self.tokens,
            "train_accuracy": self.correct / self.tokens,
            "learning_rate": learning_rate,
            f"{self.counted}_per_second": self.tokens / self.seconds,
        }
        self._reset()
        return values


def train(config: ml_collections.ConfigDict, workdir: str) -> TrainResult:
    """Trains ``config`` in ``workdir`` (or resumes it); see the module docstring.

    Example:
        >>> result = train(configs.tiny.get_config(), "/tmp/tiny")
        >>> result.step
        300
    """
    config_lib.validate(config)
    with writing(kept=lambda: resume_point(workdir)):
        os.makedirs(workdir, exist_ok=True)
        if config_lib.task(config) == config_lib.CLASSIFICATION:
            # Imported here: training.classification imports this module (its Trainer).
            from training.classification import ClassifierTrainer

            trainer = ClassifierTrainer(config, workdir)
        else:
            trainer = Trainer(config, workdir)
        try:
            return trainer.run()
        finally:
            if not trainer.chief:
                shutil.rmtree(trainer.output.root, ignore_errors=True)
