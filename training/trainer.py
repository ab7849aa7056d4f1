"""The training loop: data, model, optimizer, checkpoints, validation, TensorBoard.

``train(config, workdir)`` is all ``train.py`` runs. Rerunning it with the same work directory
resumes from the last complete checkpoint (model, optimizer, step and the position of the data
iterator), and a finished run says so and returns.
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
from data_pipeline.augment import both_directions
from decoding.translator import Translator
from inference.evaluation import bleu
from training import checkpoints, distribute
from training import config as config_lib
from training.loss import label_smoothed_loss
from training.schedule import make_schedule
from training.step import make_replica_step
from transformer import Transformer


class TrainingError(RuntimeError):
    """Training cannot go on (e.g. a non-finite loss); the message says why and what is intact."""


@dataclasses.dataclass
class TrainResult:
    step: int
    train_losses: list[tuple[int, float]] = dataclasses.field(default_factory=list)
    validation_loss: float | None = None
    validation_bleu: float | None = None
    best_bleu: float | None = None
    already_finished: bool = False


def build_model(config: ml_collections.ConfigDict, vocab_size: int) -> Transformer:
    """The Transformer of ``config.model``, with its variables created."""
    model = Transformer(
        source_vocab_size=vocab_size,
        num_layers=config.model.num_layers,
        num_decoder_layers=config.model.num_decoder_layers,
        d_model=config.model.d_model,
        num_heads=config.model.num_heads,
        d_ff=config.model.d_ff,
        dropout=config.model.dropout,
        attention_dropout=config.model.attention_dropout,
        activation_dropout=config.model.activation_dropout,
        token_dropout=config.model.token_dropout,
        shared_embeddings=config.model.shared_embeddings,
        norm_first=config.model.norm_first,
        pad_id=data_pipeline.PAD_ID,
    )
    model((tf.ones([1, 2], tf.int32), tf.ones([1, 2], tf.int32)))  # creates the variables
    return model


# Variables that weight decay leaves alone: Dense biases and layer norms' scale and shift. Keras
# matches the pattern against ``bias`` on some backends and ``.../bias:0`` on TensorFlow's.
_NOT_DECAYED = [r"(^|/)(bias|gamma|beta)(:\d+)?$"]


def build_optimizer(config: ml_collections.ConfigDict) -> keras.optimizers.Optimizer:
    train = config.train
    schedule = make_schedule(
        train.decay,
        train.peak_learning_rate,
        train.warmup_steps,
        train.steps,
        config.model.d_model,
    )
    optimizer = keras.optimizers.Adam(
        learning_rate=schedule,
        beta_1=train.adam_beta1,
        beta_2=train.adam_beta2,
        epsilon=train.adam_epsilon,
        global_clipnorm=train.gradient_clip_norm or None,
        weight_decay=train.weight_decay or None,
    )
    # Keras' decoupled decay (w -= learning_rate * weight_decay * w), as AdamW does, on the weight
    # matrices and embeddings only, as is usual.
    optimizer.exclude_from_weight_decay(var_names=_NOT_DECAYED)
    if train.precision == "mixed_float16":
        optimizer = keras.optimizers.LossScaleOptimizer(optimizer)
    return optimizer


# CPU feature flags (Linux /proc/cpuinfo) that mean bfloat16 matmuls run natively.
_NATIVE_BFLOAT16_CPU_FLAGS = frozenset({"avx512_bf16", "amx_bf16", "bf16"})


def bfloat16_speed_warning(
    precision: str, cpuinfo: str | None, has_accelerator: bool
) -> str | None:
    """A warning when ``mixed_bfloat16`` would train on a CPU that emulates bfloat16, else None.

    Such CPUs (e.g. AMD Zen 2, Intel before Cooper Lake) train slower in bfloat16 than in float32
    (README, "Measured performance"), so a config tuned on a CPU with native bfloat16 would
    overrun its time budget. ``cpuinfo`` is the text of ``/proc/cpuinfo``; None (not Linux)
    gives no warning, since the CPU is unknown.

    Example:
        >>> bfloat16_speed_warning("mixed_bfloat16", "flags : avx2 fma", False)[:24]
        'train.precision is mixed'
    """
    if precision != "mixed_bfloat16" or has_accelerator or cpuinfo is None:
        return None
    flags = set()
    for line in cpuinfo.splitlines():
        name, _, value = line.partition(":")
        if name.strip() in ("flags", "Features"):  # x86, Arm
            flags.update(value.split())
    if flags & _NATIVE_BFLOAT16_CPU_FLAGS:
        return None
    return (
        "train.precision is mixed_bfloat16 but this CPU has no native bfloat16 "
        f"({'/'.join(sorted(_NATIVE_BFLOAT16_CPU_FLAGS))} not among its flags): bfloat16 is "
        "emulated and trains slower than float32. Pass --config.train.precision=float32 "
        "(and see the config's docstring for the steps that fit your time budget)."
    )


def data_settings(config: ml_collections.ConfigDict, num_workers: int) -> dict:
    """The settings a saved position of the training batches depends on.

    A position restores only into a pipeline built with the same settings; after a change
    (e.g. ``--config.data.max_length``) training resumes with the data from the start of its
    order instead.

    Example:
        >>> data_settings(config, 1)["data.max_length"]  # doctest: +SKIP
        128
    """
    # Options added later count only when set away from their default ("off"): the pipeline is
    # then the one built before they existed, so older saved positions still fit.
    later_options = {
        "data.concat_ratio": (config.data.concat_ratio, 0.0),
        "tokenizer.sample_target": (config.tokenizer.sample_target, True),
        "data.bidirectional_steps": (config.data.bidirectional_steps, 0),
        "data.extra_train_data": (config.data.extra_train_data, ""),
    }
    return {
        "data.name": config.data.name,
        "data.train_split": config.data.train_split,
        "data.max_length": config.data.max_length,
        "data.tokens_per_batch": config.data.tokens_per_batch,
        "data.shuffle_seed": config.data.shuffle_seed,
        "tokenizer.sampling_alpha": config.tokenizer.sampling_alpha,
        "train.seed": config.train.seed,
        "workers": num_workers,
        **{key: value for key, (value, off) in later_options.items() if value != off},
    }


def _read_cpuinfo() -> str | None:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as file:
            return file.read()
    except OSError:
        return None


def extra_train_data(config: ml_collections.ConfigDict) -> list[str]:
    """The names in ``data.extra_train_data``; each must translate into ``data.name``'s target
    language (a ConfigError otherwise: one model learns one target language here).

    Example:
        >>> config.data.name, config.data.extra_train_data = "multi30k/en-de", "multi30k/fr-de"
        >>> extra_train_data(config)  # doctest: +SKIP
        ['multi30k/fr-de']
    """
    names = [name.strip() for name in config.data.extra_train_data.split(",") if name.strip()]
    if not names:
        return []
    data_dir = config.data.data_dir or None
    target = data_pipeline.language_pair(config.data.name, data_dir)[1]
    for name in names:
        extra_target = data_pipeline.language_pair(name, data_dir)[1]
        if extra_target != target:
            raise config_lib.ConfigError(
                f"config.data.extra_train_data names {name!r}, which translates into "
                f"{extra_target!r}, but config.data.name ({config.data.name!r}) into {target!r}; "
                "add only data sets with the same target language."
            )
    return names


def load_data(config: ml_collections.ConfigDict, workdir: str, splits: list[str]):
    """Returns ``(split -> (source, target) string pairs, tokenizer)``; trains the tokenizer on
    the training split (with ``data.extra_train_data``'s) the first time."""
    train_split, data_dir = config.data.train_split, config.data.data_dir or None
    extra_names = extra_train_data(config)  # Checked before any data is read.
    pairs = data_pipeline.load_translation_splits(
        config.data.name, sorted({train_split, *splits}), data_dir=data_dir
    )
    for name in extra_names:
        extra = data_pipeline.load_translation_splits(name, [train_split], data_dir)
        pairs[train_split] = pairs[train_split].concatenate(extra[train_split])
    tokenizer = data_pipeline.load_or_train_tokenizer(
        workdir,
        pairs[train_split],
        config.tokenizer.vocab_size,
        config.tokenizer.model_type,
        seed=config.train.seed,
    )
    return pairs, tokenizer


def training_batches(
    config: ml_collections.ConfigDict,
    pairs: tf.data.Dataset,
    tokenizer: data_pipeline.Tokenizer,
    num_workers: int,
) -> tf.data.Dataset:
    """The endless, shuffled training batches of `config` (before sharding over `num_workers`).

    With ``data.bidirectional_steps`` > 0, the first that many steps' batches hold every pair in
    both directions (`data_pipeline.augment.both_directions`), the rest the pairs as they are.
    With ``tokenizer.sampling_alpha`` > 0 the segmentations are sampled, on the source side only
    if ``tokenizer.sample_target`` is False.

    Example:
        >>> batches = training_batches(config, pairs["train"], tokenizer, 1)  # doctest: +SKIP
    """
    alpha = config.tokenizer.sampling_alpha
    source_tokenizer = tokenizer.sampling(alpha) if alpha else tokenizer
    target_tokenizer = source_tokenizer if config.tokenizer.sample_target else tokenizer

    def batches(pairs: tf.data.Dataset) -> tf.data.Dataset:
        return data_pipeline.make_batches(
            pairs,
            source_tokenizer,
            target_tokenizer=target_tokenizer,
            max_length=config.data.max_length,
            tokens_per_batch=config.data.tokens_per_batch,
            shuffle=True,
            seed=config.data.shuffle_seed,
            repeat=True,
            concat_ratio=config.data.concat_ratio,
        )

    forward = batches(pairs)
    if not config.data.bidirectional_steps:
        return forward
    # One batch per worker and step.
    bidirectional = batches(both_directions(pairs)).take(
        config.data.bidirectional_steps * num_workers
    )
    return bidirectional.concatenate(forward)


class _Trainer:
    """Holds the state of one run; :func:`train` is its public face."""

    def __init__(self, config: ml_collections.ConfigDict, workdir: str) -> None:
        self.config, self.workdir = config, workdir
        self.strategy = distribute.make_strategy(
            config.train.distribution, config.train.tpu_address
        )
        self.chief = distribute.is_chief(self.strategy)
        # Non-chief workers write their (required) copies of collective saves to a scratch dir.
        self.output_dir = (
            workdir
            if self.chief
            else os.path.join(workdir, f".worker-{self.strategy.cluster_resolver.task_id}")
        )
        os.makedirs(self.output_dir, exist_ok=True)
        keras.utils.set_random_seed(config.train.seed)
        keras.mixed_precision.set_global_policy(config.train.precision)
        warning = bfloat16_speed_warning(
            config.train.precision,
            _read_cpuinfo(),
            has_accelerator=bool(tf.config.list_logical_devices("GPU"))
            or config.train.distribution == "tpu",
        )
        if warning:
            logging.warning(warning)

        self.pairs, self.tokenizer = load_data(
            config, self.output_dir, [config.data.validation_split]
        )
        # Each worker reads its own share of the batches through a plain iterator, which (unlike
        # tf.distribute's) can be checkpointed: its position is saved beside every checkpoint.
        self.worker_index, num_workers = distribute.worker_index_and_count(self.strategy)
        train_batches = training_batches(
            config, self.pairs[config.data.train_split], self.tokenizer, num_workers
        )
        self.validation_batches = data_pipeline.make_batches(
            self.pairs[config.data.validation_split],
            self.tokenizer,
            max_length=config.data.max_length,
            tokens_per_batch=config.data.tokens_per_batch,
            shuffle=False,
            seed=0,
        )
        self.iterator = iter(train_batches.shard(num_workers, self.worker_index))
        self.data_settings = data_settings(config, num_workers)
        self.data_position = tf.train.Checkpoint(
            iterator=self.iterator,
            settings=tf.Variable(json.dumps(self.data_settings, sort_keys=True), trainable=False),
        )
        self.checkpoint_dir = os.path.join(workdir, "checkpoints")
        with self.strategy.scope():
            self.model = build_model(config, self.tokenizer.vocab_size)
            self.optimizer = build_optimizer(config)
            self.optimizer.build(self.model.trainable_variables)
        self.checkpoint = tf.train.Checkpoint(
            model=checkpoints.model_variables(self.model), optimizer=self.optimizer
        )
        self.manager = tf.train.CheckpointManager(
            self.checkpoint,
            os.path.join(self.output_dir, "checkpoints"),
            max_to_keep=config.train.keep_checkpoints,
        )
        self.best_checkpoint = tf.train.Checkpoint(model=checkpoints.model_variables(self.model))
        self.best_dir = os.path.join(self.output_dir, "best")
        self.best_manager = tf.train.CheckpointManager(
            self.best_checkpoint, self.best_dir, max_to_keep=1
        )
        self.train_step = self._make_train_step()
        self.eval_step = tf.function(self._eval_step, reduce_retracing=True)
        self.translator = Translator(
            self.model,
            self.tokenizer,
            beam_size=1,
            max_length_ratio=config.decode.max_length_ratio,
            max_length_offset=config.decode.max_length_offset,
        )
        self.writer = (
            tf.summary.create_file_writer(os.path.join(workdir, "tensorboard"))
            if self.chief
            else tf.summary.create_noop_writer()
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
            rdrop_alpha=self.config.train.rdrop_alpha,
        )

        def step(iterator):
            batch = next(iterator)
            results = self.strategy.run(
                replica_step, args=distribute.split_for_replicas(self.strategy, batch)
            )
            return [self.strategy.reduce("sum", value, axis=None) for value in results]

        return tf.function(step, jit_compile=self.config.train.jit_compile or None)

    def _eval_step(self, batch: dict) -> tf.Tensor:
        logits = self.model((batch["source"], batch["target_in"]), training=False)
        return tf.stack(label_smoothed_loss(logits, batch["target_out"], 0.0, data_pipeline.PAD_ID))

    def _data_position_path(self, step: int | str) -> str:
        return os.path.join(self.checkpoint_dir, f"data-worker{self.worker_index}-{step}")

    def restore(self) -> None:
        """Restores the latest complete checkpoint and this worker's data position at its step."""
        latest = tf.train.latest_checkpoint(self.checkpoint_dir)  # the chief's, for every worker
        if not latest:
            return
        self.checkpoint.restore(latest).assert_existing_objects_matched()
        data_position = self._data_position_path(self.step)
        problem = self._data_position_problem(data_position)
        if problem:
            logging.warning(
                "%s: the data restarts from the beginning of its (deterministic) order.", problem
            )
        else:
            self.data_position.read(data_position).assert_consumed()
        print(f"Resuming from checkpoint {latest} at step {self.step}.", flush=True)

    def _data_position_problem(self, data_position: str) -> str | None:
        """Why the data position saved at ``data_position`` cannot be restored, or None."""
        if not tf.io.gfile.exists(data_position + ".index"):
            return f"No data position saved for step {self.step} ({data_position})"
        reader = tf.train.load_checkpoint(data_position)
        key = "settings/.ATTRIBUTES/VARIABLE_VALUE"
        if not reader.has_tensor(key):
            return (
                f"The data position of step {self.step} was saved without its data settings "
                "(by an older version), so it cannot be checked against this pipeline"
            )
        saved = json.loads(reader.get_tensor(key))
        changed = sorted(
            name
            for name in {*saved, *self.data_settings}
            if saved.get(name) != self.data_settings.get(name)
        )
        if changed:
            differences = ", ".join(
                f"{name} {saved.get(name)!r} -> {self.data_settings.get(name)!r}"
                for name in changed
            )
            return (
                f"The data settings changed since the data position of step {self.step} was "
                f"saved ({differences}), so it does not fit this pipeline"
            )
        return None

    def save(self) -> None:
        """Saves the data position, then the checkpoint (whose state file commits both)."""
        self.data_position.write(self._data_position_path(self.step))
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
        sources, references = [], []
        limit = self.config.train.eval_max_sentences or None
        for source, target in (
            self.pairs[self.config.data.validation_split].take(limit or -1).as_numpy_iterator()
        ):
            sources.append(source.decode("utf-8"))
            references.append(target.decode("utf-8"))
        hypotheses = self.translator.translate(sources, progress=False)
        bleu_score = bleu(hypotheses, references)[0]
        if self.chief:
            checkpoints.atomic_write_text(
                os.path.join(self.output_dir, "eval", f"validation-step{self.step}.txt"),
                "".join(h + "\n" for h in hypotheses),
            )
        return {
            "validation_loss": float(loss_sum / max(count, 1.0)),
            "validation_accuracy": float(correct / max(count, 1.0)),
            "validation_bleu": float(bleu_score.score),
        }

    def _summaries(self, values: dict[str, float]) -> None:
        with self.writer.as_default(step=self.step):
            for name, value in values.items():
                tf.summary.scalar(name, value)
        self.writer.flush()

    def run(self) -> TrainResult:
        config = self.config.train
        self.restore()
        best_path = os.path.join(self.best_dir, "best.json")
        best_bleu = (checkpoints.read_json(best_path) or {}).get("validation_bleu")
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
        try:
            while self.step < config.steps:
                start = time.perf_counter()
                loss_sum, correct, count = (float(v) for v in self.train_step(self.iterator))
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
                if step % config.eval_every == 0 or step == config.steps:
                    values = self.validate()
                    result.validation_loss = values["validation_loss"]
                    result.validation_bleu = values["validation_bleu"]
                    self._summaries(values)
                    progress.write(
                        f"step {step}: validation loss {values['validation_loss']:.3f}, "
                        f"accuracy {values['validation_accuracy']:.3f}, "
                        f"BLEU {values['validation_bleu']:.2f}"
                    )
                    if best_bleu is None or values["validation_bleu"] > best_bleu:
                        best_bleu = values["validation_bleu"]
                        self.best_manager.save(checkpoint_number=step)
                        if self.chief:
                            checkpoints.write_json(best_path, {"step": step, **values})
        except KeyboardInterrupt:
            progress.close()
            self.save()
            print(
                f"\nInterrupted: saved step {self.step}; rerun the same command to resume.",
                flush=True,
            )
            raise
        finally:
            progress.close()
        result.step, result.best_bleu = self.step, best_bleu
        return result


def train(config: ml_collections.ConfigDict, workdir: str) -> TrainResult:
    """Trains ``config`` in ``workdir`` (or resumes it); see the module docstring.

    Example:
        >>> result = train(configs.tiny.get_config(), "/tmp/tiny")
        >>> result.step
        60
    """
    config_lib.validate(config)
    os.makedirs(workdir, exist_ok=True)
    trainer = _Trainer(config, workdir)
    if trainer.chief:
        checkpoints.atomic_write_text(
            os.path.join(workdir, "config.json"), config.to_json_best_effort(indent=2) + "\n"
        )
    try:
        return trainer.run()
    finally:
        if not trainer.chief:
            shutil.rmtree(trainer.output_dir, ignore_errors=True)
