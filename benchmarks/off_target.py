"""Off-target translations: how many of a multilingual model's test translations are in a
language other than the one asked for, direction by direction.

Reads what ``evaluate.py --workdir=W --direction=all --split=S`` wrote under ``W/eval/`` (run it
first) and names each line's language: the one of the model's target languages whose word
unigram model, counted on Multi30k's training text of that language (add-0.1 smoothing), gives
the line's lower-cased words the highest likelihood. The references are named the same way, as
a check of the classifier: it should find none of them off target. Prints one row per direction
(lines, off-target hypotheses, misnamed references) and up to --examples off-target lines.

Example:
    python benchmarks/off_target.py --workdir=runs/multi30k_multilingual --split=test2016
"""

from __future__ import annotations

import collections
import gzip
import math
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import harness  # noqa: I001  (first: sets up the path and TensorFlow's logging)
from absl import app, flags

from inference.evaluation import direction_names, output_stem
from rundir.config import load_config

_WORKDIR = flags.DEFINE_string("workdir", None, "The multilingual model's work directory.")
_SPLIT = flags.DEFINE_string("split", "test2016", "The split evaluate.py translated.")
_BEAM_SIZE = flags.DEFINE_integer("beam_size", 4, "The beam of evaluate.py's hypotheses files.")
_EXAMPLES = flags.DEFINE_integer("examples", 2, "Off-target lines shown for each direction.")
_MULTI30K_DIR = flags.DEFINE_string(
    "multi30k_dir",
    os.environ.get("MULTI30K_DIR", str(harness.REPO_ROOT.parent / "shared/data/multi30k")),
    "Multi30k's raw files (train.de.gz, ...): the text of each language's word counts.",
)

_WORD = re.compile(r"\w+")


class LanguageNamer:
    """Names a line's language among ``texts``' languages by word unigram likelihood.

    Example:
        >>> namer = LanguageNamer({"en": ["a dog runs"], "de": ["ein Hund rennt"]})
        >>> namer.language("Der Hund")
        'de'
    """

    def __init__(self, texts: Mapping[str, Sequence[str]]):
        self.counts = {
            language: collections.Counter(w.lower() for line in lines for w in _WORD.findall(line))
            for language, lines in texts.items()
        }
        self.totals = {language: sum(c.values()) for language, c in self.counts.items()}

    def language(self, line: str) -> str:
        words = [w.lower() for w in _WORD.findall(line)]

        def log_likelihood(language: str) -> float:
            counts, total = self.counts[language], self.totals[language]
            return sum(math.log((counts[w] + 0.1) / total) for w in words)

        return max(self.counts, key=log_likelihood)


def _lines(path: str) -> list[str]:
    if not os.path.exists(path):
        raise app.UsageError(
            f"{path} is missing: run evaluate.py --workdir={_WORKDIR.value} --direction=all "
            f"--split={_SPLIT.value} first (beam {_BEAM_SIZE.value}; --beam_size otherwise)."
        )
    return Path(path).read_text(encoding="utf-8").splitlines()


def main(argv: Sequence[str]) -> None:
    if len(argv) > 1:
        raise app.UsageError(f"Unexpected arguments: {' '.join(argv[1:])}")
    harness.start(__doc__)
    config = load_config(_WORKDIR.value)
    directions = direction_names(config.data.name, "all", _SPLIT.value)
    if directions is None:
        raise app.UsageError(f"{_WORKDIR.value} is a model of one language pair.")
    languages = sorted({label[3:] for label in directions})
    texts = {}
    for language in languages:
        with gzip.open(Path(_MULTI30K_DIR.value, f"train.{language}.gz"), "rt") as file:
            texts[language] = file.read().splitlines()
    namer = LanguageNamer(texts)
    harness.print_config(
        "run",
        {
            "workdir": _WORKDIR.value,
            "data": config.data.name,
            "split": _SPLIT.value,
            "beam_size": _BEAM_SIZE.value,
            "languages": ",".join(languages),
        },
    )
    total = off_total = 0
    for label, data_name in directions.items():
        target = label[3:]
        stem = output_stem(os.path.join(_WORKDIR.value, "eval"), data_name, _SPLIT.value)
        hypotheses = _lines(f"{stem}.beam{_BEAM_SIZE.value}.hyp")
        references = _lines(f"{stem}.ref")
        off_target = [line for line in hypotheses if namer.language(line) != target]
        misnamed = sum(namer.language(line) != target for line in references)
        total, off_total = total + len(hypotheses), off_total + len(off_target)
        print(
            f"RESULT {label}: {len(off_target)} of {len(hypotheses)} hypotheses off target "
            f"({100 * len(off_target) / len(hypotheses):.2f} %); references misnamed: {misnamed}"
        )
        for line in off_target[: _EXAMPLES.value]:
            print(f"    {line}")
    print(f"RESULT all directions: {off_total} of {total} hypotheses off target")


if __name__ == "__main__":
    flags.mark_flag_as_required("workdir")
    app.run(main)
