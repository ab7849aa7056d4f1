"""The flags that choose what translates: a work directory (``--workdir``, ``--ensemble``, ...),
an exported SavedModel (``--saved_model``) or a CTranslate2 export (``--ctranslate2``); one of
them, checked together. ``translate.py`` and ``score.py`` define them.

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
    """``--workdir`` and its flags, ``--saved_model``, ``--ctranslate2`` and its flags."""

    workdir: TranslatorFlags
    saved_model: flags.FlagHolder
    ctranslate2: CTranslate2Flags

    @property
    def exported(self) -> bool:
        """Whether an export (not a work directory) translates."""
        return bool(self.saved_model.value or self.ctranslate2.directory.value)

    def check(self) -> None:
        """Exits with a one-line error unless exactly one runtime is given, with only the
        flags it takes."""
        self.ctranslate2.check(self.workdir)
        given = [self.workdir.workdir, self.saved_model, self.ctranslate2.directory]
        if sum(bool(flag.value) for flag in given) != 1:
            sys.exit(
                "error: give exactly one of --workdir (a training work directory), --saved_model "
                "(an exported SavedModel) or --ctranslate2 (a CTranslate2 export)."
            )
        model_flags = self.workdir.model_flags_given()
        if self.saved_model.value and model_flags:
            sys.exit(
                f"error: {' and '.join(model_flags)} "
                f"{'needs' if len(model_flags) == 1 else 'need'} --workdir; a SavedModel's models "
                "and decoding options are fixed when it is exported."
            )

    def load(self) -> Translator:
        """The translator of the runtime given (:meth:`check` first)."""
        if self.saved_model.value:
            from exports.saved_model import SavedModelTranslator

            return SavedModelTranslator(self.saved_model.value)
        if self.ctranslate2.directory.value:
            return self.ctranslate2.load(self.workdir.beam_size.value)
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
    )
