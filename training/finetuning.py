"""Fine-tuning: a new run that starts from another run's weights (``train.init_from``).

``train.init_from="WORKDIR"`` (its ``best`` checkpoint; ``"WORKDIR:latest"`` or
``"WORKDIR:averaged"`` to choose) starts the run with that model's weights and its tokenizer
(copied into the new work directory); the optimizer, the learning-rate schedule, the step and the
data start afresh, as fairseq's ``--finetune-from-model`` does. The config's tokenizer and model
settings must be those of that run: a difference is one line naming each setting. Once the run
has a checkpoint of its own it resumes from it, exactly, like any run. ``train.freeze`` keeps
parts of the model fixed: ``encoder``, ``decoder``, ``embeddings`` (comma-separated).
``train.keep_optimizer`` also starts from that run's Adam moments (its latest checkpoint's), as
OpenNMT-py's ``reset_optim=keep_states`` does; the step and the schedule still start afresh.

A multilingual model (its vocabulary has target-language tags) fine-tuned on data of one
direction keeps reading its sources tagged (:func:`tagged_as_vocabulary`): it stays a model that
is told its target language.

Example:
    >>> start = StartFrom.parse("runs/de_en:averaged")
    >>> start.check(config)                       # ConfigError naming what differs
    >>> start.copy_tokenizer("runs/de_en_domain/spm.model")
    >>> start.restore(model)                      # 'runs/de_en/averaged/ckpt-3000'
    >>> start.restore_optimizer(optimizer)        # with train.keep_optimizer
"""

from __future__ import annotations

import dataclasses
import shutil

import ml_collections
import tensorflow as tf

from common.errors import ConfigError
from data_pipeline import DataSpec, Tokenizer
from rundir.checkpoints import CHECKPOINT_CHOICES, checkpoint_path, restore_model
from rundir.config import load_config
from rundir.layout import RunDirectory
from rundir.model import model_keys
from training.config import setting

FREEZABLE = ("encoder", "decoder", "embeddings")
_TOKENIZER_KEYS = ("vocab_size", "model_type")


@dataclasses.dataclass(frozen=True)
class StartFrom:
    """The run whose weights a new run starts from, and which of its checkpoints."""

    workdir: str
    which: str = "best"

    @classmethod
    def parse(cls, value: str) -> StartFrom | None:
        """``"WORKDIR[:best|latest|averaged]"``, or None for ``""`` (no fine-tuning)."""
        if not value:
            return None
        workdir, _, which = value.rpartition(":")
        if which not in CHECKPOINT_CHOICES:
            workdir, which = value, "best"
        return cls(workdir, which)

    def check(self, config: ml_collections.ConfigDict) -> None:
        """A ConfigError naming each tokenizer or model setting of ``config`` that differs from
        the starting run's (its ``config.json``), or saying that run or its checkpoint is not
        there: before any data or model work."""
        source = self._source_config(config.train.init_from)
        keys = [f"tokenizer.{key}" for key in _TOKENIZER_KEYS]
        keys += [f"model.{key}" for key in sorted(model_keys()) if "dropout" not in key]
        differences = [
            f"config.{key} = {ours!r} but {self.workdir}'s is {theirs!r}"
            for key in keys
            if (ours := setting(config, key)) != (theirs := setting(source, key))
        ]
        if config.train.keep_optimizer:
            differences += [
                f"config.train.{key} = {ours!r} but {self.workdir}'s is {theirs!r} (its Adam "
                "moments are kept)"
                for key in ("freeze", "precision")  # a run of before train.freeze froze nothing
                if (ours := setting(config, f"train.{key}") or "")
                != (theirs := source.train.get(key) or "")
            ]
        if differences:
            raise ConfigError(
                f"Cannot start from {self.workdir}: {'; '.join(differences)}. Set them as that "
                "run has them (its config.json), or train from the beginning."
            )
        if config.train.keep_optimizer and self.which != "latest":
            raise ConfigError(
                f"config.train.keep_optimizer starts from the Adam moments of {self.workdir}'s "
                f"latest checkpoint, but its {self.which} checkpoint holds weights only: set "
                f"config.train.init_from={self.workdir}:latest."
            )

    def _source_config(self, init_from: str) -> ml_collections.ConfigDict:
        """The starting run's config; a ConfigError when that run or its checkpoint is not
        there."""
        try:
            source = load_config(self.workdir)
        except FileNotFoundError:
            workdir, _, which = self.workdir.rpartition(":")
            if workdir and tf.io.gfile.exists(RunDirectory(workdir).config):
                raise ConfigError(  # WORKDIR:last and the like
                    f"config.train.init_from = {init_from!r}, but {workdir} has no checkpoint "
                    f"named {which!r}: choose one of {', '.join(CHECKPOINT_CHOICES)} "
                    f"(config.train.init_from={workdir}:latest)."
                ) from None
            problem = "is not a training work directory (no config.json): train it first"
        else:
            try:
                checkpoint_path(self.workdir, self.which)
                return source
            except FileNotFoundError:
                problem = (
                    "has no averaged checkpoint: write it first (python average_checkpoints.py "
                    f"--workdir={self.workdir} --last=5)"
                    if self.which == "averaged"
                    else "has no checkpoint yet: train it first"
                )
        raise ConfigError(
            f"config.train.init_from = {init_from!r}, but {self.workdir} {problem}, or point "
            "config.train.init_from at another run (WORKDIR[:best|latest|averaged])."
        )

    def copy_tokenizer(self, path: str) -> None:
        """The starting run's SentencePiece model, copied to ``path`` unless one is there."""
        if not tf.io.gfile.exists(path):
            shutil.copyfile(RunDirectory(self.workdir).tokenizer, path)

    def restore(self, model) -> str:
        """Reads the starting checkpoint's weights into ``model``; returns its path."""
        return restore_model(model, self.workdir, self.which)

    def restore_optimizer(self, optimizer) -> None:
        """Reads the Adam moments of the starting run's latest checkpoint into ``optimizer``
        (built over the same variables: the same ``train.freeze``); its step starts at 0."""
        path = checkpoint_path(self.workdir, "latest")
        status = tf.train.Checkpoint(optimizer=optimizer).restore(path)
        status.expect_partial().assert_existing_objects_matched()
        optimizer.iterations.assign(0)


def tagged_as_vocabulary(data: DataSpec, tokenizer_path: str) -> DataSpec:
    """``data`` as a model with the tokenizer ``tokenizer_path`` reads it: one direction tagged
    too when the vocabulary has target-language tags (a multilingual model fine-tuned on it)."""
    if data.tagged or not tf.io.gfile.exists(tokenizer_path):
        return data
    if not Tokenizer.from_file(tokenizer_path).languages:
        return data
    return dataclasses.replace(data, tag_one_direction=True)


def freeze(model, parts: str) -> None:
    """Keeps ``parts`` (comma-separated: encoder, decoder, embeddings) of ``model`` fixed: their
    variables are left out of the trainable ones (build the optimizer after this)."""
    layers = {
        "encoder": [*model.encoder_layers, model.encoder_norm],
        "decoder": [*model.decoder_layers, model.decoder_norm],
        "embeddings": [model.source_embedding, model.target_embedding],
    }
    for part in (p.strip() for p in parts.split(",") if p.strip()):
        if part not in layers:
            raise ConfigError(
                f"config.train.freeze names {part!r}; it can name {', '.join(FREEZABLE)}."
            )
        for layer in layers[part]:
            layer.trainable = False
