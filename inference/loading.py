"""Loads a training work directory (config, tokenizer, best, latest or averaged checkpoint).

A checkpoint whose files are truncated or corrupt stops the loading with an
:class:`~training.checkpoints.UnreadableCheckpointError` naming it and saying how to write it
again; no other checkpoint is used in its place.

Example:
    >>> translator, checkpoint = load_translator("runs/multi30k_de_en", "averaged")
    >>> translator.translate(["Ein Hund rennt."])
    ['A dog is running.']
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence

import ml_collections
import tensorflow as tf

from data_pipeline import Tokenizer
from decoding import Ensemble, ModelTranslator, SearchOptions
from training.builders import build_model
from training.checkpoints import (
    READ_ERRORS,
    UnreadableCheckpointError,
    cannot_read,
    model_variables,
)
from training.config import ConfigError, drop_retired_options
from transformer import Transformer

CHECKPOINT_CHOICES = ("best", "latest", "averaged")
# How to get a readable checkpoint of each kind again.
_REWRITE = {
    "best": "Use --checkpoint=latest or --checkpoint=averaged instead.",
    "latest": "Rerun train.py with this --workdir: it resumes from the newest checkpoint that "
    "reads and writes this one again.",
    "averaged": "Rerun average_checkpoints.py to write it again.",
}


def load_config(workdir: str) -> ml_collections.ConfigDict:
    """The config a work directory was trained with (its ``config.json``)."""
    path = os.path.join(workdir, "config.json")
    if not os.path.exists(path):
        raise FileNotFoundError(
            f"{workdir} is not a training work directory (no config.json); train first with "
            f"`python train.py --config=configs/multi30k_de_en.py --workdir={workdir}`."
        )
    with open(path, encoding="utf-8") as file:
        config = ml_collections.ConfigDict(json.load(file))
    # Work directories from before these options: the values they trained with.
    if "num_decoder_layers" not in config.model:
        config.model.num_decoder_layers = config.model.num_layers
    for key in ("attention_dropout", "activation_dropout"):
        if key not in config.model:
            config.model[key] = None  # the model.dropout rate
    drop_retired_options(config, path)
    return config


def checkpoint_path(workdir: str, which: str = "best") -> str:
    """The checkpoint to use: ``best`` by validation BLEU (falling back to the latest),
    ``latest``, or ``averaged`` (written by average_checkpoints.py)."""
    if which not in CHECKPOINT_CHOICES:
        raise ValueError(f"checkpoint must be one of {CHECKPOINT_CHOICES}, got {which!r}.")
    latest = tf.train.latest_checkpoint(os.path.join(workdir, "checkpoints"))
    if which == "best":
        path = tf.train.latest_checkpoint(os.path.join(workdir, "best")) or latest
    elif which == "averaged":
        path = tf.train.latest_checkpoint(os.path.join(workdir, "averaged"))
    else:
        path = latest
    if path is None:
        raise FileNotFoundError(
            f"No {which} checkpoint in {workdir}; train first (or wait for the first checkpoint "
            "of a running training; for 'averaged' run average_checkpoints.py)."
        )
    return path


def build_workdir_model(workdir: str) -> tuple[Transformer, Tokenizer]:
    """The float32 model of a work directory's config (untrained weights) and its tokenizer."""
    config = load_config(workdir)
    tokenizer = Tokenizer.from_file(os.path.join(workdir, "spm.model"))
    return build_model(config, tokenizer.vocab_size), tokenizer


def load_model(workdir: str, which: str = "best") -> tuple[Transformer, Tokenizer, str]:
    """Returns ``(model, tokenizer, checkpoint path)`` of a work directory, in float32."""
    model, tokenizer = build_workdir_model(workdir)
    path = checkpoint_path(workdir, which)
    checkpoint = tf.train.Checkpoint(model=model_variables(model))
    try:
        checkpoint.restore(path).expect_partial().assert_existing_objects_matched()
    except READ_ERRORS as error:
        raise UnreadableCheckpointError(
            f"The {which} checkpoint {cannot_read(path, error)}. {_REWRITE[which]}"
        ) from error
    return model, tokenizer, path


def load_ensemble(workdirs: Sequence[str], which: str = "best") -> tuple[Ensemble, Tokenizer, str]:
    """Returns ``(Ensemble of the work directories' models, the first's tokenizer, checkpoint
    paths joined by ", ")``; raises a ConfigError when a tokenizer's pieces differ from the first's.
    """
    loaded = [load_model(workdir, which) for workdir in workdirs]  # (model, tokenizer, path)
    models, tokenizers, paths = zip(*loaded, strict=True)
    pieces = [
        tokenizer.id_to_piece(tf.range(tokenizer.vocab_size)).numpy().tolist()
        for tokenizer in tokenizers
    ]
    for workdir, workdir_pieces in zip(workdirs[1:], pieces[1:], strict=True):
        if workdir_pieces != pieces[0]:
            raise ConfigError(
                f"{workdir}'s tokenizer differs from {workdirs[0]}'s, so their models cannot "
                "decode together: ensemble runs trained with the same tokenizer settings on the "
                "same data."
            )
    return Ensemble(models), tokenizers[0], ", ".join(paths)


def load_translator(
    workdir: str,
    which: str = "best",
    beam_size: int | None = None,
    length_penalty: float | None = None,
    jit_compile: bool | None = None,
    ensemble: Sequence[str] = (),
) -> tuple[ModelTranslator, str]:
    """A translator for a work directory and the checkpoint path it loaded; decoding options
    default to its config.

    ``ensemble``: more work directories whose models decode together with ``workdir``'s (each
    at its ``which`` checkpoint; see :class:`~decoding.ensemble.Ensemble`).
    """
    config = load_config(workdir)
    if ensemble:
        model, tokenizer, path = load_ensemble([workdir, *ensemble], which)
    else:
        model, tokenizer, path = load_model(workdir, which)
    try:
        options = SearchOptions(
            beam_size=config.decode.beam_size if beam_size is None else beam_size,
            length_penalty=(
                config.decode.length_penalty if length_penalty is None else length_penalty
            ),
            max_length_ratio=config.decode.max_length_ratio,
            max_length_offset=config.decode.max_length_offset,
        )
    except ValueError as error:
        raise ConfigError(f"Bad decoding option: {error}") from None
    translator = ModelTranslator(
        model,
        tokenizer,
        options,
        max_source_length=config.data.max_length,
        jit_compile=config.decode.get("jit_compile", False) if jit_compile is None else jit_compile,
    )
    return translator, path
