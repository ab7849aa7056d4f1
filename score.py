"""Scores given translations (forced decoding): how likely a model finds each target as the
translation of its source. Use it to filter a noisy corpus, to rerank, or as a confidence.

python score.py --workdir=DIR --source=corpus.de --target=corpus.en --output=scores.txt
python score.py --saved_model=DIR --input=pairs.tsv             # SOURCE<TAB>TARGET lines
python score.py --ctranslate2=DIR --input=- --output_format=jsonl < pairs.tsv

A line per pair, in order: its score, ``log_prob / lp(length)`` (beam search's score), or with
--output_format=jsonl its score, log_prob, length, confidence and each token's log-probability.
Files of any size are streamed --window pairs at a time; --output is written as OUTPUT.partial,
renamed when complete, and an interrupted run is continued (cli/streaming.py).
"""

from __future__ import annotations

import sys

from absl import flags

from cli.errors import run_main
from cli.pair_scores import OUTPUT_FORMATS, PairFiles, format_score, pairs_of_window
from cli.runtime_flags import define_runtime_flags
from cli.streaming import STDIO, WINDOW, script_options, stream_lines
from common.translation import TranslationRequest

_RUNTIME = define_runtime_flags()
_SOURCE = flags.DEFINE_string("source", None, "File of sources, a sentence a line.")
_TARGET = flags.DEFINE_string("target", None, "File of targets, aligned with --source.")
_INPUT = flags.DEFINE_string("input", None, "File of SOURCE<TAB>TARGET lines ('-': stdin).")
_OUTPUT = flags.DEFINE_string("output", None, "File for the scores (default: stdout).")
_OUTPUT_FORMAT = flags.DEFINE_enum(
    "output_format", "text", list(OUTPUT_FORMATS), "text: a score a line; jsonl: every figure."
)
_TARGET_LANG = flags.DEFINE_string(
    "target_lang", None, "A multilingual model's target language (the targets' language)."
)
_BATCH_SIZE = flags.DEFINE_integer("batch_size", 64, "Pairs per batch.")
_WINDOW = flags.DEFINE_integer(
    "window", WINDOW, "Pairs read, scored and written at a time.", lower_bound=1
)
_RESUME = flags.DEFINE_boolean(
    "resume",
    True,
    "Continue --output's partial file where an interrupted run stopped; --noresume starts over.",
)


def pair_files() -> PairFiles:
    """--source and --target, or --input; one line naming what is missing otherwise."""
    if _INPUT.value is not None and (_SOURCE.value or _TARGET.value):
        sys.exit("error: give --input (SOURCE<TAB>TARGET lines) or --source and --target.")
    if _INPUT.value is not None:
        return PairFiles(_INPUT.value)
    if not (_SOURCE.value and _TARGET.value):
        sys.exit("error: give --source and --target (aligned files), or --input (TSV).")
    return PairFiles(_SOURCE.value, _TARGET.value)


def main(argv: list[str]) -> None:
    del argv
    files = pair_files()
    _RUNTIME.check()
    translator = _RUNTIME.load()
    request = TranslationRequest(target_lang=_TARGET_LANG.value)
    request.language(translator.languages)  # checked before reading the pairs

    def score_window(first_line: int, columns: list[list[str]]) -> str:
        sources, targets = pairs_of_window(files, first_line, columns)
        scores = translator.score(sources, targets, request, _BATCH_SIZE.value, False)
        return "".join(format_score(scored, _OUTPUT_FORMAT.value) for scored in scores)

    stream_lines(
        files.paths,
        _OUTPUT.value,
        score_window,
        script_options("input", "source", "target", "output", "resume"),
        _WINDOW.value,
        _RESUME.value,
        progress=_OUTPUT.value not in (None, STDIO),
        unit="pair",
    )


if __name__ == "__main__":
    run_main(main)
