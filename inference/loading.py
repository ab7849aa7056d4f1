"""A work directory's translator: its model (or an ensemble) at the best, latest or averaged
checkpoint, with the decoding options of its config.

A checkpoint whose files are truncated or corrupt stops the loading with an
:class:`~rundir.checkpoints.UnreadableCheckpointError` naming it and saying how to write it
again; no other checkpoint is used in its place.

Example:
    >>> translator, checkpoint = load_translator("runs/multi30k_de_en", "averaged")
    >>> translator.translate(["Ein Hund rennt."])
    ['A dog is running.']
"""

from __future__ import annotations

from collections.abc import Sequence

import tensorflow as tf
from absl import logging

from common.cpu import NATIVE_BFLOAT16_CPU_FLAGS, emulates_bfloat16, read_cpuinfo
from common.errors import ConfigError
from data_pipeline.tokenizer import Tokenizer
from decoding.ensemble import Ensemble
from decoding.options import SearchOptions
from decoding.translator import ModelTranslator
from inference.shortlist import read_shortlist
from rundir.checkpoints import restore_model
from rundir.config import load_config
from rundir.layout import RunDirectory
from rundir.model import build_workdir_model
from transformer.model import Transformer

# The precisions a work directory's model decodes in, and the Keras dtype policy of each: float32
# weights, the matrix products in bfloat16 with float32 accumulation, logits and log-softmax in
# float32 (``Transformer`` casts its logits).
PRECISIONS = {"float32": "float32", "bfloat16": "mixed_bfloat16"}


def load_model(
    workdir: str, which: str = "best", precision: str = "float32"
) -> tuple[Transformer, Tokenizer, str]:
    """Returns ``(model, tokenizer, checkpoint path)`` of a work directory, computing in
    ``precision`` (one of :data:`PRECISIONS`)."""
    if precision not in PRECISIONS:
        raise ConfigError(f"precision must be one of {sorted(PRECISIONS)}, got {precision!r}.")
    model, tokenizer = build_workdir_model(workdir, PRECISIONS[precision])
    return model, tokenizer, restore_model(model, workdir, which)


def load_ensemble(
    workdirs: Sequence[str], which: str = "best", precision: str = "float32"
) -> tuple[Ensemble, Tokenizer, str]:
    """Returns ``(Ensemble of the work directories' models, the first's tokenizer, checkpoint
    paths joined by ", ")``; raises a ConfigError when a tokenizer's pieces differ from the first's.
    """
    loaded = [load_model(workdir, which, precision) for workdir in workdirs]
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
    shortlist: bool = True,
    precision: str = "float32",
) -> tuple[ModelTranslator, str]:
    """A translator for a work directory and the checkpoint path it loaded; decoding options
    default to its config.

    ``ensemble``: more work directories whose models decode together with ``workdir``'s (each
    at its ``which`` checkpoint; see :class:`~decoding.ensemble.Ensemble`).
    ``shortlist``: search over the vocabulary shortlist of ``workdir`` (``shortlist.py``), when
    it has one. ``precision``: ``"bfloat16"`` computes the matrix products in bfloat16 (with a
    warning on a CPU that emulates it, where it is slower than float32).
    """
    config = load_config(workdir)
    if precision == "bfloat16" and emulates_bfloat16(read_cpuinfo()):
        logging.warning(
            "--precision=bfloat16 on a CPU without native bfloat16 (%s): emulated, it decodes "
            "slower than float32.",
            "/".join(sorted(NATIVE_BFLOAT16_CPU_FLAGS)),
        )
    if ensemble:
        model, tokenizer, path = load_ensemble([workdir, *ensemble], which, precision)
    else:
        model, tokenizer, path = load_model(workdir, which, precision)
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
        jit_compile=config.decode.jit_compile if jit_compile is None else jit_compile,
        shortlist=read_shortlist(RunDirectory(workdir).shortlist) if shortlist else None,
    )
    return translator, path
