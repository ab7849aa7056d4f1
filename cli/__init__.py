"""What every command-line script shares: clear errors instead of tracebacks for bad input."""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable

from absl import app, flags

from data_pipeline import DataError
from decoding import ModelTranslator
from inference.loading import CHECKPOINT_CHOICES, load_translator
from training.config import ConfigError


@dataclasses.dataclass(frozen=True)
class TranslatorFlags:
    """The flags that choose a work directory's translator, and :meth:`load` for their values."""

    workdir: flags.FlagHolder
    ensemble: flags.FlagHolder
    checkpoint: flags.FlagHolder
    beam_size: flags.FlagHolder
    length_penalty: flags.FlagHolder
    jit_compile: flags.FlagHolder

    def load(self) -> tuple[ModelTranslator, str]:
        """``(translator, checkpoint path)``; decoding options default to the work directory's
        config."""
        return load_translator(
            self.workdir.value,
            self.checkpoint.value,
            self.beam_size.value,
            self.length_penalty.value,
            self.jit_compile.value,
            self.ensemble.value,
        )

    def model_flags_given(self) -> list[str]:
        """The given flags that choose models or decoding options (``--beam_size``, ...)."""
        holders = (self.ensemble, self.beam_size, self.length_penalty)
        return [f"--{holder.name}" for holder in holders if holder.present]


def define_translator_flags(workdir_required: bool = True) -> TranslatorFlags:
    """Defines --workdir, --ensemble, --checkpoint, --beam_size, --length_penalty, --jit_compile.

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
    )


def _parse_flags(argv: list[str]) -> list[str]:
    try:
        return flags.FLAGS(argv)
    except (flags.Error, AttributeError, KeyError, ValueError, TypeError, OSError) as error:
        message = str(error).strip("'\"").replace("\\n", " ").replace("\\'", "'")
        sys.exit(f"error: bad command line: {message}\nRun `{argv[0]} --helpshort` for the flags.")


def run_main(main: Callable[[list[str]], None]) -> None:
    """``absl.app.run(main)``, turning configuration and data errors into one-line messages."""

    def guarded(argv: list[str]) -> None:
        try:
            main(argv)
        except (ConfigError, DataError, FileNotFoundError) as error:
            sys.exit(f"error: {error}")
        except KeyboardInterrupt:
            sys.exit(130)

    app.run(guarded, flags_parser=_parse_flags)
