"""The training loop: steps, checkpoints with the data position, validation, TensorBoard.

``train(config, workdir)`` is all ``train.py`` runs. Rerunning it with the same work directory
resumes from the last complete checkpoint that reads (model, optimizer, step and the position of
the data iterator), and a finished run says so and returns. A write the file system refuses (a
full disk, a read-only directory) stops the run with a :class:`common.storage.StorageError` that
names the file and the checkpoint a rerun resumes from. The model and optimizer come from
``rundir.model`` and ``training.optimizer``, the data from ``training.data``.
"""

from __future__ import annotations

import dataclasses
import json
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
from common.errors import UserError
from common.files import atomic_write_text, read_json, write_json
from common.metrics import bleu
from common.storage import writing
from decoding.options import SearchOptions
from decoding.translator import ModelTranslator
from rundir import checkpoints
from rundir.config import data_spec
from rundir.layout import RunDirectory
from rundir.model import build_model
from training import config as config_lib
from training import distribute
from training.cpu import bfloat16_speed_warning, read_cpuinfo
from training.data import (
    changed_settings,
    data_settings,
    load_data,
    training_batches,
    validation_sets,
)
from training.loss import loss_function
from training.optimizer import build_optimizer
from training.step import make_replica_step
from training.stopping import StopRequest


class TrainingError(UserError, RuntimeError):
    """Training cannot go on (e.g. a non-finite loss); the message says why and what is intact."""


@dataclasses.dataclass
class TrainResult:
    step: int
    train_losses: list[tuple[int, float]] = dataclasses.field(default_factory=list)
    validation_loss: float | None = None
    validation_bleu: float | None = None
    best_bleu: float | None = None
    already_finished: bool = False
    terminated: bool = False  # stopped by SIGTERM, the step reached saved


class _Trainer:
    """Holds the state of one run; :func:`train` is its public face."""

    def __init__(self, config: ml_collections.ConfigDict, workdir: str) -> None:
        self.config, self.workdir, self.run_dir = config, workdir, RunDirectory(workdir)
        self.data = data_spec(config)  # the data's names parsed once: a bad one fails first
        self.strategy = distribute.make_strategy(
            config.train.distribution, config.train.tpu_address
        )
        self.chief = distribute.is_chief(self.strategy)
        # Non-chief workers write their (required) copies of collective saves to a scratch dir.
        self.output_dir = (
            workdir
            if self.chief
            else self.run_dir.worker_scratch(self.strategy.cluster_resolver.task_id)
        )
        self.output = RunDirectory(self.output_dir)  # the chief's: the work directory's
        os.makedirs(self.output_dir, exist_ok=True)
        if self.chief:  # First, so that a directory that cannot be written fails at once.
            atomic_write_text(self.run_dir.config, config.to_json_best_effort(indent=2) + "\n")
        keras.utils.set_random_seed(config.train.seed)
        keras.mixed_precision.set_global_policy(config.train.precision)
        warning = bfloat16_speed_warning(
            config.train.precision,
            read_cpuinfo(),
            has_accelerator=bool(tf.config.list_logical_devices("GPU"))
            or config.train.distribution == "tpu",
        )
        if warning:
            logging.warning(warning)

        # train.eval_every = 0: no validation, so no validation split, pipeline or traces.
        self.validating = config.train.eval_every > 0
        validation_split = config.data.validation_split
        loaded = load_data(
            config,
            self.data,
            self.output.tokenizer,
            [validation_split] if self.validating else [],
        )
        self.tokenizer, self.train_pairs = loaded.tokenizer, loaded.train
        # Each worker reads its own share of the batches through a plain iterator, which (unlike
        # tf.distribute's) can be checkpointed: its position is saved beside every checkpoint.
        self.worker_index, num_workers = distribute.worker_index_and_count(self.strategy)
        train_batches = training_batches(config, self.train_pairs, self.tokenizer)
        self.iterator = iter(train_batches.shard(num_workers, self.worker_index))
        self.data_settings = data_settings(config, num_workers)
        self.data_position = tf.train.Checkpoint(
            iterator=self.iterator,
            settings=tf.Variable(json.dumps(self.data_settings, sort_keys=True), trainable=False),
        )
        self.checkpoint_dir = self.run_dir.checkpoints
        with self.strategy.scope():
            self.model = build_model(config, self.tokenizer.vocab_size)
            self.optimizer = build_optimizer(config)
            self.optimizer.build(self.model.trainable_variables)
        self.checkpoint = tf.train.Checkpoint(
            model=checkpoints.model_variables(self.model), optimizer=self.optimizer
        )
        self.manager = tf.train.CheckpointManager(
            self.checkpoint,
            self.output.checkpoints,
            max_to_keep=config.train.keep_checkpoints,
        )
        self.best_checkpoint = tf.train.Checkpoint(model=checkpoints.model_variables(self.model))
        self.best_dir = self.output.best
        self.best_manager = tf.train.CheckpointManager(
            self.best_checkpoint, self.best_dir, max_to_keep=1
        )
        self.train_step = self._make_train_step()
        if self.validating:
            self._set_up_validation(loaded.by_direction)
        self.tensorboard_dir = self.run_dir.tensorboard
        with writing(self.tensorboard_dir):
            self.writer = (
                tf.summary.create_file_writer(self.tensorboard_dir)
                if self.chief
                else tf.summary.create_noop_writer()
            )

    def _set_up_validation(self, by_direction: data_pipeline.datasets.DirectionSplits) -> None:
        """BLEU on each direction's validation sentences; the loss on all of them, as the model
        reads them (a multilingual run's tagged)."""
        config = self.config
        self.validation_sets = validation_sets(config, self.data, by_direction)
        pairs = data_pipeline.model_pairs(self.data, by_direction)[config.data.validation_split]
        self.validation_batches = data_pipeline.make_batches(
            pairs,
            self.tokenizer,
            max_length=config.data.max_length,
            tokens_per_batch=config.data.tokens_per_batch,
            shuffle=False,
            seed=0,
        )
        self.eval_step = tf.function(  # one trace for every batch shape
            self._eval_step,
            input_signature=[self.validation_batches.element_spec],
            autograph=False,
        )
        self.translator = ModelTranslator(
            self.model,
            self.tokenizer,
            SearchOptions(
                beam_size=1,
                max_length_ratio=config.decode.max_length_ratio,
                max_length_offset=config.decode.max_length_offset,
            ),
        )

    @property
    def step(self) -> int:
        return int(self.optimizer.iterations.numpy())

    def _make_train_step(self):
        replica_step = make_replica_step(
            self.model,
            self.optimizer,
            self.config.train.label_smoothing,
            data_pipeline.PAD_ID,
            compiled_loss=self.config.train.jit_compile_loss,
        )

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

    def _eval_step(self, batch: dict) -> tf.Tensor:
        logits = self.model((batch["source"], batch["target_in"]), training=False)
        loss = loss_function(self.config.train.jit_compile_loss)
        return tf.stack(loss(logits, batch["target_out"], 0.0, data_pipeline.PAD_ID))

    def _data_position_path(self, step: int | str) -> str:
        return self.run_dir.data_position(self.worker_index, step)

    def restore(self) -> None:
        """Restores the newest checkpoint that reads (warning about each newer one that does not)
        and this worker's data position at its step."""
        state = tf.train.get_checkpoint_state(self.checkpoint_dir)  # the chief's, for every worker
        paths = state.all_model_checkpoint_paths[::-1] if state else []
        for path in paths:
            try:
                self.checkpoint.restore(path).assert_existing_objects_matched()
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
                f"None of the {len(paths)} checkpoints in {self.checkpoint_dir} can be read (see "
                "the warnings above); move that directory aside to train from the beginning."
            )

    def _restore_data_position(self) -> None:
        data_position = self._data_position_path(self.step)
        try:
            problem = self._data_position_problem(data_position)
            if not problem:
                self.data_position.read(data_position).assert_consumed()
        except checkpoints.READ_ERRORS as error:
            problem = f"The data position {checkpoints.cannot_read(data_position, error)}"
        if problem:
            logging.warning(
                "%s: the data restarts from the beginning of its (deterministic) order.", problem
            )

    def _data_position_problem(self, data_position: str) -> str | None:
        """Why the data position saved at ``data_position`` cannot be restored, or None."""
        if not tf.io.gfile.exists(data_position + ".index"):
            return f"No data position saved for step {self.step} ({data_position})"
        reader = tf.train.load_checkpoint(data_position)
        key = "settings/.ATTRIBUTES/VARIABLE_VALUE"
        if not reader.has_tensor(key):
            return (
                f"The data position of step {self.step} was saved without its data settings, "
                "so it cannot be checked against this pipeline"
            )
        differences = changed_settings(json.loads(reader.get_tensor(key)), self.data_settings)
        if differences:
            return (
                f"The data settings changed since the data position of step {self.step} was "
                f"saved ({differences}), so it does not fit this pipeline"
            )
        return None

    def save(self) -> None:
        """Saves the data position, then the checkpoint (whose state file commits both)."""
        data_position = self._data_position_path(self.step)
        with checkpoints.saving(data_position):
            self.data_position.write(data_position)
        with checkpoints.saving(os.path.join(self.manager.directory, f"ckpt-{self.step}")):
            self.manager.save(checkpoint_number=self.step)
        kept = {
            self._data_position_path(path.rsplit("-", 1)[1]) for path in self.manager.checkpoints
        }
        for path in tf.io.gfile.glob(self._data_position_path("*")):
            if path.rsplit(".", 1)[0] not in kept:
                tf.io.gfile.remove(path)

    def validate(self) -> dict[str, float]:
        """Validation loss and accuracy (teacher forcing) and greedy-decoding BLEU."""
        loss_sum = correct = count = 0.0
        for batch in self.validation_batches:
            batch_loss, batch_correct, batch_count = self.eval_step(batch).numpy()
            loss_sum, correct, count = (
                loss_sum + batch_loss,
                correct + batch_correct,
                (count + batch_count),
            )
        values = {
            "validation_loss": float(loss_sum / max(count, 1.0)),
            "validation_accuracy": float(correct / max(count, 1.0)),
        }
        scores, hypotheses = {}, []
        for validation_set in self.validation_sets:
            translations = self.translator.translate(
                validation_set.sources, validation_set.request, progress=False
            )
            scores[validation_set.label] = bleu(translations, validation_set.references)
            hypotheses += translations
        # One direction's BLEU, or the mean of a multilingual run's directions'.
        values["validation_bleu"] = sum(s[0].score for s in scores.values()) / len(scores)
        if len(scores) > 1:
            values.update({f"validation_bleu/{label}": s[0].score for label, s in scores.items()})
        if self.chief:
            atomic_write_text(
                self.output.validation_translations(self.step),
                "".join(h + "\n" for h in hypotheses),
            )
        return values

    def _summaries(self, values: dict[str, float]) -> None:
        with writing(self.tensorboard_dir), self.writer.as_default(step=self.step):
            for name, value in values.items():
                tf.summary.scalar(name, value)
            self.writer.flush()

    def run(self) -> TrainResult:
        config = self.config.train
        self.restore()
        best_path = self.output.best_scores
        best_bleu = (read_json(best_path) or {}).get("validation_bleu")
        if self.step >= config.steps:
            print(
                f"Training already finished: step {self.step} of {config.steps} in "
                f"{self.workdir}; nothing to do.",
                flush=True,
            )
            return TrainResult(self.step, best_bleu=best_bleu, already_finished=True)
        result = TrainResult(self.step, best_bleu=best_bleu)
        window = dict.fromkeys(("loss", "correct", "tokens", "seconds"), 0.0)
        progress = tqdm(
            total=config.steps,
            initial=self.step,
            desc="train",
            unit="step",
            dynamic_ncols=True,
            disable=not self.chief,
            mininterval=1.0,
        )
        stop = StopRequest().install()
        try:
            while self.step < config.steps:
                start = time.perf_counter()
                requested = tf.constant(float(stop.requested))
                loss_sum, correct, count, stops = (
                    float(v) for v in self.train_step(self.iterator, requested)
                )
                window["seconds"] += time.perf_counter() - start  # steps only, not saves or evals
                if not math.isfinite(loss_sum):
                    raise TrainingError(
                        f"The training loss became {loss_sum} at step {self.step}; stopping "
                        f"without saving. The last good checkpoint is intact: "
                        f"{self.manager.latest_checkpoint or '(none yet)'}. Lower "
                        "train.peak_learning_rate, raise train.warmup_steps or set "
                        "train.gradient_clip_norm, then rerun."
                    )
                window["loss"] += loss_sum
                window["correct"] += correct
                window["tokens"] += count
                progress.update(1)
                step = self.step
                if step % config.log_every == 0 or step == config.steps:
                    values = {
                        "train_loss": window["loss"] / window["tokens"],
                        "train_accuracy": window["correct"] / window["tokens"],
                        "learning_rate": float(self.optimizer.learning_rate),
                        "target_tokens_per_second": window["tokens"] / window["seconds"],
                    }
                    result.train_losses.append((step, values["train_loss"]))
                    progress.set_postfix(
                        loss=f"{values['train_loss']:.3f}",
                        lr=f"{values['learning_rate']:.2e}",
                        tok_s=f"{values['target_tokens_per_second']:.0f}",
                    )
                    self._summaries(values)
                    window = dict.fromkeys(window, 0.0)
                if step % config.checkpoint_every == 0 or step == config.steps:
                    self.save()
                if self.validating and (step % config.eval_every == 0 or step == config.steps):
                    values = self.validate()
                    result.validation_loss = values["validation_loss"]
                    result.validation_bleu = values["validation_bleu"]
                    self._summaries(values)
                    directions = "".join(
                        f" {k.partition('/')[2]} {v:.1f}" for k, v in values.items() if "/" in k
                    )
                    progress.write(
                        f"step {step}: validation loss {values['validation_loss']:.3f}, "
                        f"accuracy {values['validation_accuracy']:.3f}, "
                        f"BLEU {values['validation_bleu']:.2f}"
                        + (f" (mean of{directions})" if directions else "")
                    )
                    if best_bleu is None or values["validation_bleu"] > best_bleu:
                        best_bleu = values["validation_bleu"]
                        with checkpoints.saving(os.path.join(self.best_dir, f"ckpt-{step}")):
                            self.best_manager.save(checkpoint_number=step)
                        if self.chief:
                            write_json(best_path, {"step": step, **values})
                if stops:
                    if step % config.checkpoint_every and step != config.steps:
                        self.save()
                    progress.write(
                        f"Terminated (SIGTERM): saved step {step}; rerun the same command to "
                        "resume."
                    )
                    result.terminated = True
                    break
        except KeyboardInterrupt:
            progress.close()
            self.save()
            print(
                f"\nInterrupted: saved step {self.step}; rerun the same command to resume.",
                flush=True,
            )
            raise
        finally:
            stop.uninstall()
            progress.close()
        result.step, result.best_bleu = self.step, best_bleu
        return result


def train(config: ml_collections.ConfigDict, workdir: str) -> TrainResult:
    """Trains ``config`` in ``workdir`` (or resumes it); see the module docstring.

    Example:
        >>> result = train(configs.tiny.get_config(), "/tmp/tiny")
        >>> result.step
        300
    """
    config_lib.validate(config)
    with writing(kept=lambda: _resume_point(workdir)):
        os.makedirs(workdir, exist_ok=True)
        trainer = _Trainer(config, workdir)
        try:
            return trainer.run()
        finally:
            if not trainer.chief:
                shutil.rmtree(trainer.output_dir, ignore_errors=True)


def _resume_point(workdir: str) -> str:
    """What a rerun of ``workdir`` resumes from (for the message of a refused write)."""
    latest = tf.train.latest_checkpoint(RunDirectory(workdir).checkpoints)
    if latest is None:
        return "no checkpoint was written yet, so a rerun starts from the beginning"
    return f"the last complete checkpoint, {latest}, is intact and a rerun resumes from it"
