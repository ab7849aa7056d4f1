"""The flags that choose a work directory's translator: --workdir, --ensemble, --checkpoint,
--beam_size, --length_penalty, --jit_compile, --shortlist, --precision.

The model's code is imported when a translator is loaded, not with the flags: a script that
translates with an export (``translate.py --saved_model``) loads none of it.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from absl import flags

from rundir.checkpoints import CHECKPOINT_CHOICES

if TYPE_CHECKING:
    from decoding.translator import ModelTranslator


@dataclasses.dataclass(frozen=True)
class TranslatorFlags:
    """The flags that choose a work directory's translator, and :meth:`load` for their values."""

    workdir: flags.FlagHolder
    ensemble: flags.FlagHolder
    checkpoint: flags.FlagHolder
    beam_size: flags.FlagHolder
    length_penalty: flags.FlagHolder
    jit_compile: flags.FlagHolder
    shortlist: flags.FlagHolder
    precision: flags.FlagHolder

    def load(self, length_penalty: float | None = None) -> tuple[ModelTranslator, str]:
        """``(translator, checkpoint path)``; decoding options default to the work directory's
        config. ``length_penalty``: instead of ``--length_penalty``'s."""
        from inference.loading import load_translator

        return load_translator(
            self.workdir.value,
            self.checkpoint.value,
            self.beam_size.value,
            self.length_penalty.value if length_penalty is None else length_penalty,
            self.jit_compile.value,
            self.ensemble.value,
            self.shortlist.value,
            self.precision.value,
        )

    def model_flags_given(self) -> list[str]:
        """The given flags that choose models or decoding options (``--beam_size``, ...)."""
        holders = (
            self.ensemble,
            self.beam_size,
            self.length_penalty,
            self.precision,
            self.shortlist,
        )
        return [f"--{holder.name}" for holder in holders if holder.present]


def define_translator_flags(workdir_required: bool = True) -> TranslatorFlags:
    """Defines --workdir, --ensemble, --checkpoint, --beam_size, --length_penalty, --jit_compile,
    --shortlist, --precision.

    Example:
        >>> _TRANSLATOR = define_translator_flags()   # at module level of a script
        >>> translator, checkpoint = _TRANSLATOR.load()   # in main()
    """
    return TranslatorFlags(
        workdir=flags.DEFINE_string(
            "workdir", None, "Training work directory.", required=workdir_required
        ),
        ensemble=flags.DEFINE_list(
            "ensemble",
            [],
            "More work directories (comma-separated) whose models decode together with "
            "--workdir's: each step uses the mean of their probabilities. They need --workdir's "
            "tokenizer; decoding options come from --workdir's config.",
        ),
        checkpoint=flags.DEFINE_enum(
            "checkpoint",
            "best",
            CHECKPOINT_CHOICES,
            "best (by validation BLEU), latest, or averaged (average_checkpoints.py).",
        ),
        beam_size=flags.DEFINE_integer("beam_size", None, "Beam size (default: the config's)."),
        length_penalty=flags.DEFINE_float(
            "length_penalty", None, "GNMT length penalty alpha (default: the config's)."
        ),
        jit_compile=flags.DEFINE_boolean(
            "jit_compile",
            None,
            "Run the search compiled by XLA (default: the config's decode.jit_compile).",
        ),
        shortlist=flags.DEFINE_boolean(
            "shortlist",
            True,
            "Search over the work directory's vocabulary shortlist (shortlist.py) when it has "
            "one; --noshortlist: the whole vocabulary.",
        ),
        precision=flags.DEFINE_enum(
            "precision",
            "float32",
            ["float32", "bfloat16"],
            "The model's matrix products in float32, or in bfloat16 (float32 weights, logits and "
            "log-softmax): faster on CPUs with native bfloat16 (docs/PERFORMANCE.md).",
        ),
    )
