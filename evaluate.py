"""Scores a trained model: ``python evaluate.py --workdir=DIR`` (the config's test split).

Translates the split, writes the hypotheses and the raw references under ``DIR/eval/``, and
prints sacreBLEU and chrF (detokenized, cased) with their signatures. On Multi30k's validation and
test splits it also prints the published papers' BLEU (tokenized and lower-cased like the data
set's own reference files, scored against them: ``inference.multi30k_bleu``) and writes those
files. With ``--ensemble=DIR2,...`` the models decode together and the files go under
``DIR/eval/ensemble/``. With ``--ctranslate2=EXPORT`` the export translates (the work directory
gives the data set) and the files go under ``DIR/eval/ctranslate2-<EXPORT's name>/``.

A multilingual model is scored one direction at a time: ``--direction=de-fr``, or
``--direction=all`` (the default for one) for every direction that has the split, with a table
of their scores (also written to ``DIR/eval/<split>.directions.md``); on a data set of one
language pair (``--data=multi30k/de-fr``) it translates into that pair's target language.
"""

import os

from absl import flags

from cli.ctranslate2_flags import define_ctranslate2_flags
from cli.errors import run_main
from cli.translator_flags import define_translator_flags
from common.files import atomic_write_text
from common.translation import TranslationRequest
from data_pipeline import language_pair
from inference.evaluation import direction_names, directions_table, evaluate_split
from rundir.config import load_config

_TRANSLATOR = define_translator_flags()
_SPLIT = flags.DEFINE_string(
    "split", None, "Split of the data set to score (default: the config's data.test_split)."
)
_CTRANSLATE2 = define_ctranslate2_flags()
_DATA = flags.DEFINE_string("data", None, "Data set name (default: the config's data.name).")
_DIRECTION = flags.DEFINE_string(
    "direction",
    None,
    "A multilingual model's direction to score, e.g. de-fr, or 'all' (its default): a table of "
    "every direction that has the split.",
)


def main(argv: list[str]) -> None:
    del argv
    workdir = _TRANSLATOR.workdir.value
    _CTRANSLATE2.check(_TRANSLATOR)
    config = load_config(workdir)
    split = _SPLIT.value or config.data.test_split
    output_dir = f"{workdir}/eval" + ("/ensemble" if _TRANSLATOR.ensemble.value else "")
    data_name = _DATA.value or config.data.name
    data_dir = config.data.data_dir or None
    directions = direction_names(data_name, _DIRECTION.value, split)  # checked before loading
    if _CTRANSLATE2.directory.value:
        translator = _CTRANSLATE2.load(_TRANSLATOR.beam_size.value)
        name = os.path.basename(os.path.normpath(_CTRANSLATE2.directory.value))
        output_dir = f"{workdir}/eval/ctranslate2-{name}"
        print(
            f"Evaluating CTranslate2 export {_CTRANSLATE2.directory.value} on "
            f"{data_name} {split} (beam {translator.beam_size}, "
            f"CTranslate2 length penalty {translator.length_penalty})."
        )
    else:
        translator, checkpoint = _TRANSLATOR.load()
        print(
            f"Evaluating {checkpoint} on {data_name} {split} "
            f"(beam {translator.beam_size}, length penalty {translator.options.length_penalty})."
        )
    if directions is None:  # one language pair: a multilingual model translates into its target
        target_lang = language_pair(data_name, data_dir)[1] if translator.languages else None
        request = TranslationRequest(target_lang=target_lang)
        result = evaluate_split(translator, data_name, split, output_dir, data_dir, request=request)
        print(result.report())
        return
    results = {}
    for label, direction_data in directions.items():
        print(f"== {label}", flush=True)
        results[label] = evaluate_split(
            translator,
            direction_data,
            split,
            output_dir,
            data_dir,
            request=TranslationRequest(target_lang=label.partition("-")[2]),
        )
        print(results[label].report(), flush=True)
    table = directions_table(results)
    if len(results) > 1:
        table_file = os.path.join(output_dir, f"{split}.directions.md")
        atomic_write_text(table_file, table + "\n")
        table += f"\n(table written to {table_file})"
    print(f"\n{split}, beam {translator.beam_size}:\n{table}")


if __name__ == "__main__":
    run_main(main)
