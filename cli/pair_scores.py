"""What ``score.py`` reads and writes: (source, target) pairs from two aligned files or one file of
``SOURCE<TAB>TARGET`` lines, one score a line (or a JSON object a line).

Example:
    >>> pairs_of_window(PairFiles("pairs.tsv"), 1, [["Ein Hund.\tA dog."]])
    (['Ein Hund.'], ['A dog.'])
"""

from __future__ import annotations

import dataclasses
import json

from common.errors import UserError
from common.translation import Hypothesis

OUTPUT_FORMATS = ("text", "jsonl")


class PairsError(UserError, ValueError):
    """Pairs that cannot be read: files of different lengths, a line without a tab."""


@dataclasses.dataclass(frozen=True)
class PairFiles:
    """Where the pairs are: a source and a target file of aligned lines, or one file (``-``:
    standard input) of ``SOURCE<TAB>TARGET`` lines (``target`` None)."""

    source: str
    target: str | None = None

    @property
    def paths(self) -> list[str]:
        """The files read, one column of lines each."""
        return [self.source] if self.target is None else [self.source, self.target]


def pairs_of_window(
    files: PairFiles, first_line: int, columns: list[list[str]]
) -> tuple[list[str], list[str]]:
    """``(sources, targets)`` of a window of lines of ``files.paths`` (``columns``, the first
    one line ``first_line`` of its file); a line without a tab is a PairsError naming it."""
    if files.target is not None:
        return columns[0], columns[1]
    sources, targets = [], []
    for number, line in enumerate(columns[0], first_line):
        source, tab, target = line.partition("\t")
        if not tab:
            raise PairsError(
                f"{files.source}, line {number}: no tab; each line is SOURCE<TAB>TARGET "
                "(or give --source and --target files)."
            )
        sources.append(source)
        targets.append(target)
    return sources, targets


def format_score(scored: Hypothesis, output_format: str) -> str:
    """One pair's line: its score (``log_prob / lp(length)``), or with ``jsonl`` every figure
    and each token's log-probability.

    Example:
        >>> format_score(Hypothesis("A dog.", -0.5, -0.8, 2, (-0.3, -0.5)), "text")
        '-0.500000\\n'
    """
    if output_format == "jsonl":
        fields = scored.fields()
        del fields["translation"]  # the given target
        return json.dumps(fields) + "\n"
    return f"{scored.score:.6f}\n"
