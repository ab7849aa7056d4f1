"""What every command-line script shares: clear errors instead of tracebacks for bad input."""

from __future__ import annotations

import sys
from collections.abc import Callable

from absl import app, flags

from data_pipeline import DataError
from inference.loading import CHECKPOINT_CHOICES, load_translator
from training.config import ConfigError


def define_translator_flags(workdir_required: bool = True) -> tuple[flags.FlagHolder, Callable]:
    """Defines --workdir, --ensemble, --checkpoint, --beam_size, --length_penalty, --jit_compile.

    Returns the --workdir flag and ``load() -> (Translator, checkpoint path)`` for the flags'
    values (decoding options default to the work directory's config).
    """
    workdir = flags.DEFINE_string(
        "workdir", None, "Training work directory.", required=workdir_required
    )
    ensemble = flags.DEFINE_list(
        "ensemble",
        [],
        "More work directories (comma-separated) whose models decode together with --workdir's: "
        "each step uses the mean of their probabilities. They need --workdir's tokenizer; "
        "decoding options come from --workdir's config.",
    )
    checkpoint = flags.DEFINE_enum(
        "checkpoint",
        "best",
        CHECKPOINT_CHOICES,
        "best (by validation BLEU), latest, or averaged (average_checkpoints.py).",
    )
    beam_size = flags.DEFINE_integer("beam_size", None, "Beam size (default: the config's).")
    length_penalty = flags.DEFINE_float(
        "length_penalty", None, "GNMT length penalty alpha (default: the config's)."
    )
    jit_compile = flags.DEFINE_boolean(
        "jit_compile",
        None,
        "Run the search compiled by XLA (default: the config's decode.jit_compile).",
    )

    def load():
        return load_translator(
            workdir.value,
            checkpoint.value,
            beam_size.value,
            length_penalty.value,
            jit_compile.value,
            ensemble.value,
        )

    return workdir, load


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
