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

from cli import CTRANSLATE2_LENGTH_PENALTY_HELP, define_translator_flags, run_main
from decoding import ModelTranslator
from inference.ctranslate2_export import QUANTIZATIONS, export_ctranslate2, set_length_penalty
from inference.ctranslate2_translator import choose_length_penalty
from inference.evaluation import read_split
from inference.export import export_saved_model
from inference.loading import load_config

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
    f"{CTRANSLATE2_LENGTH_PENALTY_HELP} Default: the best of 0, 0.2, ..., 1.2 by BLEU on the "
    "validation split.",
)


def export_ctranslate2_model(translator: ModelTranslator, checkpoint: str) -> None:
    """Exports to CTranslate2; without --ctranslate2_length_penalty chooses it on validation."""
    quantization, penalty = _QUANTIZATION.value or "float32", _CT2_LENGTH_PENALTY.value
    if penalty is None and translator.beam_size == 1:
        penalty = 0.0  # greedy search has no length penalty
    if penalty is None:  # the data is read before exporting: a missing data set fails fast
        config = load_config(_TRANSLATOR.workdir.value)
        split = config.data.validation_split
        sources, references = read_split(config.data.name, split, config.data.data_dir or None)
    path = export_ctranslate2(translator, _OUTPUT.value, quantization, penalty or 0.0)
    if penalty is None:  # after exporting: the candidates are tried with the export itself
        print(f"Choosing the length penalty on {split} ({len(sources)} sentences):")
        penalty, scores = choose_length_penalty(path, sources, references)
        for candidate, score in scores.items():
            print(f"  length penalty {candidate:.1f}: BLEU {score:.2f}")
        set_length_penalty(path, penalty)
    print(
        f"Exported {checkpoint} as CTranslate2 {quantization} (beam {translator.beam_size}, "
        f"length penalty {penalty}) to {path}.\n"
        f"Translate with it:  python translate.py --ctranslate2={path}"
    )


def main(argv: list[str]) -> None:
    del argv
    if _FORMAT.value == "saved_model":
        given = [flag for flag in (_QUANTIZATION, _CT2_LENGTH_PENALTY) if flag.present]
        if given:
            sys.exit(f"error: --{given[0].name} needs --format=ctranslate2.")
    translator, checkpoint = _TRANSLATOR.load()
    if _FORMAT.value == "ctranslate2":
        export_ctranslate2_model(translator, checkpoint)
        return
    path = export_saved_model(translator, _OUTPUT.value)
    print(
        f"Exported {checkpoint} (beam {translator.beam_size}) to {path}.\n"
        f"Translate with it:  python translate.py --saved_model={path}\n"
        f"Inspect it:         saved_model_cli show --dir {path} --all"
    )


if __name__ == "__main__":
    run_main(main)
