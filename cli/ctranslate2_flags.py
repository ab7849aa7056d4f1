"""--ctranslate2 (an export to translate with) and --ctranslate2_length_penalty."""

from __future__ import annotations

import dataclasses
import sys

from absl import flags

from cli.translator_flags import TranslatorFlags
from exports.ctranslate2 import CTranslate2Translator


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
