"""A glossary: source phrases and the target terms they must be translated by, applied to each
sentence where a source phrase occurs (as fairseq's and the browser translators' glossaries).

A glossary file holds a ``source<TAB>target`` pair a line (UTF-8; blank lines and lines
starting with ``#`` are skipped). A source phrase occurs in a sentence where it stands as whole
words, in any case: "Hund" occurs in "Der hund läuft." but not in "Hunde laufen." (list the
forms a glossary should catch).

Example:
    >>> glossary = Glossary((("Hund", "hound"), ("Wiese", "meadow")))
    >>> glossary.targets_for("Ein Hund läuft über die Wiese.")
    ('hound', 'meadow')
"""

from __future__ import annotations

import dataclasses
import re

from common.errors import UserError


class GlossaryError(UserError, ValueError):
    """A glossary file that cannot be read (the message names the file and line)."""


@dataclasses.dataclass(frozen=True)
class Glossary:
    """Pairs of a source phrase and its target term, in the order given.

    Args:
        entries: ``(source phrase, target term)`` pairs, neither blank.
    """

    entries: tuple[tuple[str, str], ...]

    def __post_init__(self) -> None:
        entries = tuple((source.strip(), target.strip()) for source, target in self.entries)
        for source, target in entries:
            if not source or not target:
                raise GlossaryError(f"A glossary entry has a blank side: {(source, target)!r}.")
        object.__setattr__(self, "entries", entries)
        patterns = tuple(
            re.compile(rf"(?<!\w){re.escape(source)}(?!\w)", re.IGNORECASE) for source, _ in entries
        )
        object.__setattr__(self, "_patterns", patterns)

    @classmethod
    def read(cls, path: str) -> Glossary:
        """The glossary of a file of ``source<TAB>target`` lines (a GlossaryError naming the
        file and line of one that is not such a pair, and for a file with no pair)."""
        try:
            with open(path, encoding="utf-8-sig") as file:
                lines = file.read().splitlines()
        except FileNotFoundError:
            raise GlossaryError(f"No such glossary file: {path}") from None
        except UnicodeDecodeError as error:
            raise GlossaryError(f"{path} is not UTF-8 text ({error.reason}).") from None
        entries = []
        for number, line in enumerate(lines, start=1):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            fields = line.split("\t")
            if len(fields) != 2 or not fields[0].strip() or not fields[1].strip():
                raise GlossaryError(
                    f"{path} line {number}: expected 'source phrase<TAB>target term', got {line!r}."
                )
            entries.append((fields[0], fields[1]))
        if not entries:
            raise GlossaryError(f"{path} holds no 'source phrase<TAB>target term' line.")
        return cls(tuple(entries))

    def targets_for(self, sentence: str) -> tuple[str, ...]:
        """The target terms whose source phrase occurs in ``sentence``, each once, in the
        glossary's order."""
        found = [
            target
            for (_, target), pattern in zip(self.entries, self._patterns, strict=True)
            if pattern.search(sentence)
        ]
        return tuple(dict.fromkeys(found))
