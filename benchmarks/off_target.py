"""Off-target translations: how many of a multilingual model's test translations are in a
language other than the one asked for, direction by direction.

Reads what ``evaluate.py --workdir=W --direction=all --split=S`` wrote under ``W/eval/`` (run it
first) and names each line's language: the one of the model's target languages whose word
frequencies in Multi30k's training text of that language (a word never seen there counts 0.1)
give the line's lower-cased words the highest likelihood; a line without words is not named.
The references are named the same way, as a check of the classifier: it should find none of
them off target. Prints one row per direction (lines, off-target hypotheses, misnamed
references) and up to --examples off-target lines.

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
from absl import flags

from cli.errors import run_main
from common.errors import ConfigError
from inference.evaluation import output_stem
from rundir.config import data_spec, load_config
from rundir.layout import RunDirectory

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

    def language(self, line: str) -> str | None:
        """The language of ``line``; None for a line without words."""
        words = [w.lower() for w in _WORD.findall(line)]
        if not words:
            return None

        def log_likelihood(language: str) -> float:
            counts, total = self.counts[language], self.totals[language]
            return sum(math.log((counts[w] + 0.1) / total) for w in words)

        return max(self.counts, key=log_likelihood)


def _lines(path: str) -> list[str]:
    if not os.path.exists(path):
        raise ConfigError(
            f"{path} is missing: run evaluate.py --workdir={_WORKDIR.value} --direction=all "
            f"--split={_SPLIT.value} first (beam {_BEAM_SIZE.value}; --beam_size otherwise)."
        )
    return Path(path).read_text(encoding="utf-8").splitlines()


def main(argv: Sequence[str]) -> None:
    if len(argv) > 1:
        raise ConfigError(f"Unexpected arguments: {' '.join(argv[1:])}")
    harness.start(__doc__)
    data = data_spec(load_config(_WORKDIR.value))
    if not data.tagged:
        raise ConfigError(
            f"{_WORKDIR.value} is a model of one language pair ({data.name}): it has no "
            "target language to miss."
        )
    outputs = {}  # direction -> (hypotheses, references), all read before the slower word counts
    for corpus in data.corpora_with(_SPLIT.value):
        stem = output_stem(RunDirectory(_WORKDIR.value).eval, corpus, _SPLIT.value)
        hypotheses = _lines(f"{stem}.beam{_BEAM_SIZE.value}.hyp")
        references = _lines(f"{stem}.ref")
        if len(hypotheses) != len(references):
            raise ConfigError(
                f"{stem}: {len(hypotheses)} hypotheses but {len(references)} references; rerun "
                "evaluate.py."
            )
        outputs[corpus.direction] = hypotheses, references
    languages = sorted({direction.target for direction in outputs})
    texts = {}
    for language in languages:
        with gzip.open(Path(_MULTI30K_DIR.value, f"train.{language}.gz"), "rt") as file:
            texts[language] = file.read().splitlines()
    namer = LanguageNamer(texts)
    harness.print_config(
        "run",
        {
            "workdir": _WORKDIR.value,
            "data": data.name,
            "split": _SPLIT.value,
            "beam_size": _BEAM_SIZE.value,
            "languages": ",".join(languages),
        },
    )
    total = off_total = 0
    for direction, (hypotheses, references) in outputs.items():
        target = direction.target
        off_target = [line for line in hypotheses if namer.language(line) not in (target, None)]
        misnamed = sum(namer.language(line) not in (target, None) for line in references)
        total, off_total = total + len(hypotheses), off_total + len(off_target)
        print(
            f"RESULT {direction.label}: {len(off_target)} of {len(hypotheses)} hypotheses off "
            f"target ({100 * len(off_target) / max(len(hypotheses), 1):.2f} %); references "
            f"misnamed: {misnamed}"
        )
        for line in off_target[: _EXAMPLES.value]:
            print(f"    {line}")
    print(f"RESULT all directions: {off_total} of {total} hypotheses off target")


if __name__ == "__main__":
    flags.mark_flag_as_required("workdir")
    run_main(main)
