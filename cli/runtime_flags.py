"""The flags that choose what translates: a work directory (``--workdir``, ``--ensemble``, ...),
an exported SavedModel (``--saved_model``), a CTranslate2 export (``--ctranslate2``) or a LiteRT
export (``--litert``); one of them, checked together. ``translate.py`` and ``score.py`` define them.

The model's code, TensorFlow Datasets and the data pipeline are imported only for a work
directory: an export loads none of them.
"""

from __future__ import annotations

import dataclasses
import sys

from absl import flags

from cli.ctranslate2_flags import CTranslate2Flags, define_ctranslate2_flags
from cli.translator_flags import TranslatorFlags, define_translator_flags
from common.translation import Translator


@dataclasses.dataclass(frozen=True)
class RuntimeFlags:
    """``--workdir`` and its flags, ``--saved_model``, ``--ctranslate2`` and its flags,
    ``--litert``."""

    workdir: TranslatorFlags
    saved_model: flags.FlagHolder
    ctranslate2: CTranslate2Flags
    litert: flags.FlagHolder

    @property
    def exported(self) -> bool:
        """Whether an export (not a work directory) translates."""
        return bool(self.saved_model.value or self.ctranslate2.directory.value or self.litert.value)

    def check(self) -> None:
        """Exits with a one-line error unless exactly one runtime is given, with only the
        flags it takes."""
        self.ctranslate2.check(self.workdir)
        given = [self.workdir.workdir, self.saved_model, self.ctranslate2.directory, self.litert]
        if sum(bool(flag.value) for flag in given) != 1:
            sys.exit(
                "error: give exactly one of --workdir (a training work directory), --saved_model "
                "(an exported SavedModel), --ctranslate2 (a CTranslate2 export) or --litert (a "
                "LiteRT export)."
            )
        model_flags = self.workdir.model_flags_given()
        fixed = self.saved_model.value or self.litert.value
        if fixed and model_flags:
            kind = "SavedModel" if self.saved_model.value else "LiteRT export"
            sys.exit(
                f"error: {' and '.join(model_flags)} "
                f"{'needs' if len(model_flags) == 1 else 'need'} --workdir; a {kind}'s models "
                "and decoding options are fixed when it is exported."
            )

    def load(self) -> Translator:
        """The translator of the runtime given (:meth:`check` first)."""
        if self.saved_model.value:
            from exports.saved_model import SavedModelTranslator

            return SavedModelTranslator(self.saved_model.value)
        if self.ctranslate2.directory.value:
            return self.ctranslate2.load(self.workdir.beam_size.value)
        if self.litert.value:
            from exports.litert import LiteRTTranslator

            return LiteRTTranslator(self.litert.value)
        return self.workdir.load()[0]


def define_runtime_flags() -> RuntimeFlags:
    """Defines the flags of :class:`RuntimeFlags` (``--workdir`` not required).

    Example:
        >>> _RUNTIME = define_runtime_flags()   # at module level of a script
        >>> _RUNTIME.check(); translator = _RUNTIME.load()   # in main()
    """
    return RuntimeFlags(
        workdir=define_translator_flags(workdir_required=False),
        saved_model=flags.DEFINE_string("saved_model", None, "Exported SavedModel directory."),
        ctranslate2=define_ctranslate2_flags(),
        litert=flags.DEFINE_string(
            "litert", None, "A LiteRT export (export.py --format=litert) to translate with."
        ),
    )
