"""Scores a trained model: ``python evaluate.py --workdir=DIR`` (the config's test split).

Translates the split, writes the hypotheses and the raw references under ``DIR/eval/``, and
prints sacreBLEU and chrF (detokenized, cased) with their signatures. On Multi30k's validation and
test splits it also prints the published papers' BLEU (tokenized and lower-cased like the data
set's own reference files, scored against them: ``inference.multi30k_bleu``) and writes those
files. With ``--ensemble=DIR2,...`` the models decode together and the files go under
``DIR/eval/ensemble/``. With ``--ctranslate2=EXPORT`` the export translates (the work directory
gives the data set) and the files go under ``DIR/eval/ctranslate2-<EXPORT's name>/``; with
``--litert=EXPORT`` (a LiteRT export) under ``DIR/eval/litert-<EXPORT's name>/``.

Each direction of the data is scored in turn: ``--direction=de-fr`` one, ``--direction=all``
(the default) every one that has the split; a table of their scores ends the output (also
written to ``DIR/eval/<split>.directions.md`` when there are several). A multilingual model
translates into each direction's target language, also on a data set of one language pair
(``--data=multi30k/de-fr``).

``--length_penalties=1.0,1.2,1.4,1.6`` scores the work directory's model with each length penalty in
turn (each one's files under ``DIR/eval/length_penalty-<P>/``) and ends with a table of their
scores that names the best (the highest cased BLEU; the mean over the directions when there are
several), also written to ``DIR/eval/<split>.length_penalties.md``: choose it on validation.

A classifier's work directory (``configs/spam_assassin.py``) is scored on its recorded test split
(``--split``): accuracy, each label's precision, recall and F1, and the confusion matrix, written
to ``DIR/eval/<split>.scores.md`` beside each text's prediction (``<split>.predictions.tsv``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from absl import flags

from cli.ctranslate2_flags import define_ctranslate2_flags
from cli.errors import run_main
from cli.translator_flags import define_translator_flags
from common.files import atomic_write_text
from common.translation import Translator
from data_pipeline import spec
from exports.litert import LiteRTTranslator
from inference.classifier import evaluate_classifier, load_classifier
from inference.evaluation import (
    EvaluationResult,
    directions_table,
    evaluate_directions,
    length_penalties_table,
)
from rundir.config import CLASSIFICATION, data_spec, load_config, task
from rundir.labelled import read_split
from rundir.layout import RunDirectory

if TYPE_CHECKING:
    from data_pipeline import Corpus
    from decoding.translator import ModelTranslator

_TRANSLATOR = define_translator_flags()
_SPLIT = flags.DEFINE_string(
    "split", None, "Split of the data set to score (default: the config's data.test_split)."
)
_CTRANSLATE2 = define_ctranslate2_flags()
_LITERT = flags.DEFINE_string(
    "litert", None, "A LiteRT export (export.py --format=litert) to evaluate."
)
_LENGTH_PENALTIES = flags.DEFINE_list(
    "length_penalties",
    [],
    "Length penalties (comma-separated, e.g. 1.0,1.2,1.4,1.6) to score the model with in turn, "
    "ending with a table of their scores that names the best: choose it on validation.",
)
_DATA = flags.DEFINE_string("data", None, "Data set name (default: the config's data.name).")
_DIRECTION = flags.DEFINE_string(
    "direction",
    None,
    "The direction to score, e.g. de-fr, or 'all' (the default): every direction of the data "
    "that has the split, with a table of their scores.",
)


def main(argv: list[str]) -> None:
    del argv
    workdir = _TRANSLATOR.workdir.value
    _CTRANSLATE2.check(_TRANSLATOR)
    if _LITERT.value and (_CTRANSLATE2.directory.value or _TRANSLATOR.model_flags_given()):
        sys.exit(
            "error: --litert translates with its own model and search: give it without "
            "--ctranslate2, --ensemble, --beam_size or --length_penalty."
        )
    penalties = _length_penalties()
    config = load_config(workdir)
    split = _SPLIT.value or config.data.test_split
    if task(config) == CLASSIFICATION:
        evaluate_classifier_run(workdir, config, split)
        return
    output_dir = RunDirectory(workdir).evaluation(
        ensemble=bool(_TRANSLATOR.ensemble.value),
        ctranslate2_export=_CTRANSLATE2.directory.value,
        litert_export=_LITERT.value,
    )
    data_dir = config.data.data_dir or None
    data = spec.parse(_DATA.value, data_dir=data_dir) if _DATA.value else data_spec(config)
    corpora = data.chosen(_DIRECTION.value, split)  # checked before loading
    if penalties:
        by_penalty = {}
        for penalty in penalties:
            translator, checkpoint = _TRANSLATOR.load(length_penalty=penalty)
            print(f"Evaluating {checkpoint} on {data.name} {split} ({_settings(translator)}).")
            penalty_dir = os.path.join(output_dir, f"length_penalty-{penalty}")
            by_penalty[penalty] = _scored(translator, data, corpora, split, penalty_dir)
        table, best = length_penalties_table(by_penalty)
        table_file = os.path.join(output_dir, f"{split}.length_penalties.md")
        atomic_write_text(table_file, table + "\n")
        print(
            f"\n{split}, beam {translator.beam_size}:\n{table}\n(table written to {table_file})"
            f"\nbest: length penalty {best} (--length_penalty={best}, or the config's "
            "decode.length_penalty)"
        )
        return
    if _CTRANSLATE2.directory.value:
        translator = _CTRANSLATE2.load(_TRANSLATOR.beam_size.value)
        print(
            f"Evaluating CTranslate2 export {_CTRANSLATE2.directory.value} on "
            f"{data.name} {split} (beam {translator.beam_size}, "
            f"CTranslate2 length penalty {translator.length_penalty})."
        )
    elif _LITERT.value:
        translator = LiteRTTranslator(_LITERT.value)
        print(
            f"Evaluating LiteRT export {_LITERT.value} ({translator.settings.quantization}) on "
            f"{data.name} {split} (beam {translator.beam_size}, length penalty "
            f"{translator.settings.length_penalty})."
        )
    else:
        translator, checkpoint = _TRANSLATOR.load()
        print(f"Evaluating {checkpoint} on {data.name} {split} ({_settings(translator)}).")
    results = _scored(translator, data, corpora, split, output_dir)
    table = directions_table(results)
    if len(results) > 1:
        table_file = os.path.join(output_dir, f"{split}.directions.md")
        atomic_write_text(table_file, table + "\n")
        table += f"\n(table written to {table_file})"
    print(f"\n{split}, beam {translator.beam_size}:\n{table}")


def _length_penalties() -> list[float]:
    """``--length_penalties`` as numbers; exits with a one-line error for a flag it excludes
    or a value that is not a number."""
    if not _LENGTH_PENALTIES.value:
        return []
    if (
        _TRANSLATOR.length_penalty.value is not None
        or _CTRANSLATE2.directory.value
        or _LITERT.value
    ):
        sys.exit(
            "error: --length_penalties scores the work directory's model with each penalty: "
            "give it without --length_penalty, --ctranslate2 or --litert."
        )
    try:
        return [float(value) for value in _LENGTH_PENALTIES.value]
    except ValueError:
        sys.exit(
            f"error: --length_penalties={','.join(_LENGTH_PENALTIES.value)} is not a list of "
            "numbers: give them comma-separated, e.g. --length_penalties=1.0,1.2,1.4,1.6."
        )


def _settings(translator: ModelTranslator) -> str:
    return f"beam {translator.beam_size}, length penalty {translator.options.length_penalty}"


def _scored(
    translator: Translator,
    data: spec.DataSpec,
    corpora: Sequence[Corpus],
    split: str,
    output_dir: str,
) -> dict[str, EvaluationResult]:
    """Each direction's result (see ``evaluate_directions``), its report printed as it comes."""
    results = {}
    for label, result in evaluate_directions(translator, data, corpora, split, output_dir):
        print(f"== {label}\n{result.report()}", flush=True)
        results[label] = result
    return results


def evaluate_classifier_run(workdir: str, config, split: str) -> None:
    """Scores a classifier's ``split`` (see the module docstring)."""
    if (
        _TRANSLATOR.model_flags_given()
        or _TRANSLATOR.ensemble.value
        or _DATA.value
        or _LENGTH_PENALTIES.value
    ):
        sys.exit(
            "error: a classifier is scored on its own data by itself: give --workdir, "
            "--checkpoint and --split only."
        )
    classifier, checkpoint = load_classifier(workdir, _TRANSLATOR.checkpoint.value)
    print(f"Evaluating {checkpoint} on {config.data.name} {split}.", flush=True)
    scores, predictions = evaluate_classifier(
        classifier, read_split(config, workdir), split, RunDirectory(workdir).eval
    )
    print(f"{scores.report()}\n\npredictions: {predictions}")


if __name__ == "__main__":
    run_main(main)
