"""What every command-line script shares: one-line errors instead of tracebacks.

Bad input (a config, a data set, a flag) and faults of the environment (a full disk, a directory
that cannot be written, an unreadable checkpoint, a non-finite loss) end a script with one line
``error: ...`` saying what happened, which file, what is kept and what to do; ``--traceback``
adds the Python traceback (for a bug report).
"""

from __future__ import annotations

import dataclasses
import sys
import traceback
from collections.abc import Callable

from absl import app, flags

from common.storage import StorageError, storage_error
from data_pipeline import DataError
from decoding import ModelTranslator
from inference.ctranslate2_export import ExportError
from inference.ctranslate2_translator import CTranslate2Translator
from inference.loading import CHECKPOINT_CHOICES, load_translator
from training.checkpoints import UnreadableCheckpointError
from training.config import ConfigError, config_file_problem

_TRACEBACK = flags.DEFINE_boolean(
    "traceback", False, "On an error, print the Python traceback before the one-line message."
)
# Errors whose message is the one line to print (StorageError: also OSError and TensorFlow
# errors that are refusals of the file system, see error_line).
_ONE_LINE_ERRORS = (
    ConfigError,
    DataError,
    ExportError,
    FileNotFoundError,
    StorageError,
    UnreadableCheckpointError,
)


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


@dataclasses.dataclass(frozen=True)
class CTranslate2Flags:
    """``--ctranslate2`` (an export to translate with) and ``--ctranslate2_length_penalty``."""

    directory: flags.FlagHolder
    length_penalty: flags.FlagHolder

    def check(self, translator_flags: TranslatorFlags) -> None:
        """Exits with a one-line error when --ctranslate2_length_penalty comes without
        --ctranslate2, or --ctranslate2 with flags that choose models or our search."""
        if self.length_penalty.present and not self.directory.value:
            sys.exit("error: --ctranslate2_length_penalty needs --ctranslate2.")
        fixed = [flag for flag in translator_flags.model_flags_given() if flag != "--beam_size"]
        if self.directory.value and (fixed or translator_flags.checkpoint.present):
            fixed += ["--checkpoint"] * translator_flags.checkpoint.present
            sys.exit(
                f"error: {' and '.join(fixed)} cannot go with --ctranslate2: an export's model "
                "is fixed when it is exported (its length penalty is --ctranslate2_length_penalty)."
            )

    def load(self, beam_size: int | None = None) -> CTranslate2Translator:
        """The export's translator; the beam size and length penalty default to the export's."""
        return CTranslate2Translator(
            self.directory.value, beam_size=beam_size, length_penalty=self.length_penalty.value
        )


CTRANSLATE2_LENGTH_PENALTY_HELP = (
    "CTranslate2's length penalty: scores divided by length ** it (not GNMT's "
    "((5 + length) / 6) ** alpha)."
)


def define_ctranslate2_flags() -> CTranslate2Flags:
    """Defines --ctranslate2 and --ctranslate2_length_penalty.

    Example:
        >>> _CTRANSLATE2 = define_ctranslate2_flags()   # at module level of a script
        >>> translator = _CTRANSLATE2.load()   # in main(), when _CTRANSLATE2.directory.value
    """
    return CTranslate2Flags(
        directory=flags.DEFINE_string(
            "ctranslate2",
            None,
            "A CTranslate2 export (export.py --format=ctranslate2) to translate with.",
        ),
        length_penalty=flags.DEFINE_float(
            "ctranslate2_length_penalty",
            None,
            f"{CTRANSLATE2_LENGTH_PENALTY_HELP} Default: the export's (chosen on validation).",
        ),
    )


def error_line(error: BaseException, more: tuple[type[Exception], ...] = ()) -> str | None:
    """The one line a script prints for an error the user can act on (or of a type in
    ``more``), or None (a bug: the traceback is printed).

    Example:
        >>> error_line(OSError(errno.EROFS, "Read-only file system", "/mnt/ro/run"))
        'error: The file system is read-only while writing /mnt/ro/run; anything written there
        before is unchanged. Make it writable or choose another directory, then rerun.'
    """
    storage = storage_error(error)
    if storage is not None:
        return f"error: {storage}"
    if isinstance(error, _ONE_LINE_ERRORS + more):
        return f"error: {error}"
    return None


def _config_file_problem(argv: list[str]) -> str | None:
    """Why a config flag's file (its last value in ``argv``, else its default) cannot give a
    config; ml_collections would report it in many lines, or only when the config is used."""
    for name in flags.FLAGS:
        if flags.FLAGS[name].flag_type() != "config object":  # DEFINE_config_file's flags
            continue
        path = getattr(flags.FLAGS[name], "default_unparsed", None)
        for index, argument in enumerate(argv[1:], 1):
            if argument in (f"-{name}", f"--{name}") and index + 1 < len(argv):
                path = argv[index + 1]
            elif argument.startswith((f"-{name}=", f"--{name}=")):
                path = argument.split("=", 1)[1]
        problem = path and config_file_problem(path)
        if problem:
            return problem
    return None


def _parse_flags(argv: list[str]) -> list[str]:
    problem = _config_file_problem(argv)
    if problem:
        sys.exit(f"error: {problem}")
    try:
        return flags.FLAGS(argv)
    except (flags.Error, AttributeError, KeyError, ValueError, TypeError, OSError) as error:
        message = str(error).strip("'\"").replace("\\n", " ").replace("\\'", "'")
        sys.exit(f"error: bad command line: {message}\nRun `{argv[0]} --helpshort` for the flags.")


def run_main(main: Callable[[list[str]], None], *more: type[Exception]) -> None:
    """``absl.app.run(main)``, turning the errors the user can act on, and those of the types
    ``more``, into one-line messages (:func:`error_line`).

    Example:
        >>> run_main(main, TrainingError)  # the last line of train.py
    """

    def guarded(argv: list[str]) -> None:
        try:
            main(argv)
        except KeyboardInterrupt:
            sys.exit(130)
        except Exception as error:
            line = error_line(error, more)
            if line is None:
                raise
            if _TRACEBACK.value:
                traceback.print_exc()
            sys.exit(line)

    app.run(guarded, flags_parser=_parse_flags)
