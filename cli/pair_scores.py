"""What ``score.py`` reads and writes: (source, target) pairs streamed in chunks, one score a
line (or a JSON object a line), written atomically.

Example:
    >>> for sources, targets in read_pairs(PairFiles("src.de", "tgt.en"), chunk_size=2):
    ...     print(sources, targets)
    ['Ein Hund.', 'Ja.'] ['A dog.', 'Yes.']
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import sys
from collections.abc import Iterator
from typing import TextIO

from common.errors import UserError
from common.files import atomic_file
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


def _lines(path: str) -> Iterator[str]:
    """A file's (or stdin's) lines without their newline; bad UTF-8 becomes U+FFFD."""
    if path != "-":
        with open(path, encoding="utf-8", errors="replace") as stream:
            yield from (line.rstrip("\r\n") for line in stream)
        return
    stream = io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace")
    try:
        yield from (line.rstrip("\r\n") for line in stream)
    finally:
        stream.detach()  # standard input stays open


def _pairs(files: PairFiles) -> Iterator[tuple[str, str]]:
    if files.target is None:
        for number, line in enumerate(_lines(files.source), 1):
            source, tab, target = line.partition("\t")
            if not tab:
                raise PairsError(
                    f"{files.source}, line {number}: no tab; each line is SOURCE<TAB>TARGET "
                    "(or give --source and --target files)."
                )
            yield source, target
        return
    sources, targets = _lines(files.source), _lines(files.target)
    number = 0
    for number, source in enumerate(sources, 1):
        target = next(targets, None)
        if target is None:
            raise PairsError(
                f"{files.source} has more lines than {files.target} ({number - 1}): the source "
                "and target files must be aligned line by line."
            )
        yield source, target
    if next(targets, None) is not None:
        raise PairsError(
            f"{files.target} has more lines than {files.source} ({number}): the source and "
            "target files must be aligned line by line."
        )


def read_pairs(files: PairFiles, chunk_size: int) -> Iterator[tuple[list[str], list[str]]]:
    """``(sources, targets)`` chunks of up to ``chunk_size`` pairs, in order: a file of any size
    is never read whole."""
    sources: list[str] = []
    targets: list[str] = []
    for source, target in _pairs(files):
        sources.append(source)
        targets.append(target)
        if len(sources) == chunk_size:
            yield sources, targets
            sources, targets = [], []
    if sources:
        yield sources, targets


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


@contextlib.contextmanager
def output_stream(path: str | None) -> Iterator[TextIO]:
    """Standard output (``path`` None), or ``path`` written atomically
    (:func:`common.files.atomic_file`: an error or Ctrl-C leaves the old file)."""
    if path is None:
        yield sys.stdout
        return
    with atomic_file(path) as stream:
        yield stream
