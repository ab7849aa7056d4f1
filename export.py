"""Exports a trained model as a SavedModel, a CTranslate2 model or a LiteRT model.

python export.py --workdir=DIR --output=DIR/saved_model
python export.py --workdir=DIR --format=ctranslate2 --quantization=int8 --output=DIR/ct2_int8
python export.py --workdir=DIR --format=litert --quantization=dynamic_int8 --output=DIR/litert

The SavedModel's ``serving_default`` signature maps ``text`` (tf.string [None]) to
``translation`` (tf.string [None]); see inference/export.py. A CTranslate2 export is a directory
``ctranslate2.Translator`` loads, with our SentencePiece model and decoding options beside it
(inference/ctranslate2_export.py); unless ``--ctranslate2_length_penalty`` is given, its length
penalty is chosen on the validation split. A LiteRT export (inference/litert_export.py) is a
directory of ``model.tflite`` (the search on token ids, builtin operators only), its
SentencePiece model and ``litert.json``.

A classifier's work directory (``configs/spam_assassin.py``) exports as a SavedModel only: its
``serving_default`` maps ``text`` to ``label`` and ``score``, ``text_attention`` adds what it
attended to (exports/contract.py); serve.py serves it.
"""

import sys

from absl import flags

from cli.ctranslate2_flags import CTRANSLATE2_LENGTH_PENALTY_HELP
from cli.errors import run_main
from cli.translator_flags import define_translator_flags
from exports.contract import LITERT_QUANTIZATIONS, QUANTIZATIONS
from inference.classifier import load_classifier
from inference.ctranslate2_export import (
    LENGTH_PENALTY_CANDIDATES,
    export_with_length_penalty,
)
from inference.export import export_classifier, export_saved_model
from inference.litert_export import export_litert
from rundir.config import CLASSIFICATION, load_config, task

_TRANSLATOR = define_translator_flags()
_OUTPUT = flags.DEFINE_string("output", None, "Directory to write.", required=True)
_FORMAT = flags.DEFINE_enum(
    "format", "saved_model", ["saved_model", "ctranslate2", "litert"], "What to export."
)
_QUANTIZATION = flags.DEFINE_enum(
    "quantization",
    None,
    list(dict.fromkeys(QUANTIZATIONS + LITERT_QUANTIZATIONS)),
    f"Weight type, default float32: {', '.join(QUANTIZATIONS)} (--format=ctranslate2) or "
    f"{', '.join(LITERT_QUANTIZATIONS)} (--format=litert).",
)
_LITERT_TEXT = flags.DEFINE_bool(
    "litert_text",
    False,
    "--format=litert: also the translate_text signature (one sentence's text to its "
    "translation, with tensorflow_text's SentencePiece ops; unigram, one target language).",
)
_CT2_LENGTH_PENALTY = flags.DEFINE_float(
    "ctranslate2_length_penalty",
    None,
    f"{CTRANSLATE2_LENGTH_PENALTY_HELP} Default: the best of "
    f"{', '.join(map(str, LENGTH_PENALTY_CANDIDATES))} by BLEU on the validation split.",
)


def main(argv: list[str]) -> None:
    del argv
    if _FORMAT.value == "saved_model" and _QUANTIZATION.present:
        sys.exit("error: --quantization needs --format=ctranslate2 or --format=litert.")
    if _FORMAT.value != "ctranslate2" and _CT2_LENGTH_PENALTY.present:
        sys.exit("error: --ctranslate2_length_penalty needs --format=ctranslate2.")
    if _FORMAT.value != "litert" and _LITERT_TEXT.value:
        sys.exit("error: --litert_text needs --format=litert.")
    quantization = _QUANTIZATION.value or "float32"
    allowed = {"ctranslate2": QUANTIZATIONS, "litert": LITERT_QUANTIZATIONS}.get(_FORMAT.value)
    if allowed and quantization not in allowed:
        sys.exit(
            f"error: --quantization={quantization} is not one of {', '.join(allowed)} for "
            f"--format={_FORMAT.value}."
        )
    if is_classifier(_TRANSLATOR.workdir.value):
        export_classifier_run()
        return
    translator, checkpoint = _TRANSLATOR.load()
    if _FORMAT.value == "litert":
        path = export_litert(translator, _OUTPUT.value, quantization, _LITERT_TEXT.value)
        print(
            f"Exported {checkpoint} as LiteRT {quantization} (beam {translator.beam_size}, "
            f"length penalty {translator.options.length_penalty}) to {path}.\n"
            f"Translate with it:  python translate.py --litert={path}"
        )
        return
    if _FORMAT.value == "ctranslate2":
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


def is_classifier(workdir: str) -> bool:
    return task(load_config(workdir)) == CLASSIFICATION


def export_classifier_run() -> None:
    """Exports a classifier's work directory (see the module docstring)."""
    if _FORMAT.value != "saved_model" or _TRANSLATOR.model_flags_given():
        sys.exit(
            "error: a classifier exports as a SavedModel only: give --workdir, --checkpoint and "
            "--output."
        )
    classifier, checkpoint = load_classifier(
        _TRANSLATOR.workdir.value, _TRANSLATOR.checkpoint.value
    )
    path = export_classifier(classifier, _OUTPUT.value)
    print(
        f"Exported {checkpoint} (labels {', '.join(classifier.labels)}) to {path}.\n"
        f"Serve it:    python serve.py --saved_model=spam={path}\n"
        f"Inspect it:  saved_model_cli show --dir {path} --all"
    )


if __name__ == "__main__":
    run_main(main)
