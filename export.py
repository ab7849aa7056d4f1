"""Exports a trained model as a SavedModel or as a CTranslate2 model.

python export.py --workdir=DIR --output=DIR/saved_model
python export.py --workdir=DIR --format=ctranslate2 --quantization=int8 --output=DIR/ct2_int8

The SavedModel's ``serving_default`` signature maps ``text`` (tf.string [None]) to
``translation`` (tf.string [None]); see inference/export.py. A CTranslate2 export is a directory
``ctranslate2.Translator`` loads, with our SentencePiece model and decoding options beside it
(inference/ctranslate2_export.py); unless ``--ctranslate2_length_penalty`` is given, its length
penalty is chosen on the validation split.
"""

import sys

from absl import flags

from cli.ctranslate2_flags import CTRANSLATE2_LENGTH_PENALTY_HELP
from cli.errors import run_main
from cli.translator_flags import define_translator_flags
from inference.ctranslate2_export import (
    LENGTH_PENALTY_CANDIDATES,
    QUANTIZATIONS,
    export_with_length_penalty,
)
from inference.export import export_saved_model

_TRANSLATOR = define_translator_flags()
_OUTPUT = flags.DEFINE_string("output", None, "Directory to write.", required=True)
_FORMAT = flags.DEFINE_enum(
    "format", "saved_model", ["saved_model", "ctranslate2"], "What to export."
)
_QUANTIZATION = flags.DEFINE_enum(
    "quantization",
    None,
    list(QUANTIZATIONS),
    "CTranslate2 weight type (--format=ctranslate2; default float32).",
)
_CT2_LENGTH_PENALTY = flags.DEFINE_float(
    "ctranslate2_length_penalty",
    None,
    f"{CTRANSLATE2_LENGTH_PENALTY_HELP} Default: the best of "
    f"{', '.join(map(str, LENGTH_PENALTY_CANDIDATES))} by BLEU on the validation split.",
)


def main(argv: list[str]) -> None:
    del argv
    if _FORMAT.value == "saved_model":
        given = [flag for flag in (_QUANTIZATION, _CT2_LENGTH_PENALTY) if flag.present]
        if given:
            sys.exit(f"error: --{given[0].name} needs --format=ctranslate2.")
    translator, checkpoint = _TRANSLATOR.load()
    if _FORMAT.value == "ctranslate2":
        quantization = _QUANTIZATION.value or "float32"
        export = export_with_length_penalty(
            translator,
            _TRANSLATOR.workdir.value,
            _OUTPUT.value,
            quantization,
            _CT2_LENGTH_PENALTY.value,
        )
        if export.scores:
            print(f"The length penalty, chosen on {export.validation_split}:")
        for candidate, score in export.scores.items():
            print(f"  length penalty {candidate:.1f}: BLEU {score:.2f}")
        print(
            f"Exported {checkpoint} as CTranslate2 {quantization} (beam {translator.beam_size}, "
            f"length penalty {export.length_penalty}) to {export.path}.\n"
            f"Translate with it:  python translate.py --ctranslate2={export.path}"
        )
        return
    path = export_saved_model(translator, _OUTPUT.value)
    print(
        f"Exported {checkpoint} (beam {translator.beam_size}) to {path}.\n"
        f"Translate with it:  python translate.py --saved_model={path}\n"
        f"Inspect it:         saved_model_cli show --dir {path} --all"
    )


if __name__ == "__main__":
    run_main(main)
