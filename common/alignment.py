"""Word alignments from cross-attention: which source words each translation's words come from.

Every runtime gives the same three things for a translation (:class:`Alignment`): the source
pieces the model read, the pieces it wrote, and one attention row per written piece over the
source pieces (the alignment head's: see ``decoding.alignment``). From them:

* **soft** alignment: that matrix itself, per subword (what a UI highlights);
* **hard** alignment, in Pharaoh form (``"0-0 1-2 ..."``, source word ``i`` with target word
  ``j``, as fast_align and Moses write it): each written piece linked to the source piece it
  attends to most, and the links lifted to words. Words are what SentencePiece's ``▁`` marks
  start: the text split at whitespace. ``</s>`` and a multilingual model's language tag are no
  word and are never linked.

Python only (no TensorFlow): the CTranslate2 runtime uses it too.

Example:
    >>> alignment = Alignment(["▁Ein", "▁Hund", ".", "</s>"], ["▁A", "▁dog", ".", "</s>"],
    ...                       [[.9, .1, 0, 0], [.1, .8, .1, 0], [0, .2, .7, .1], [0, 0, .1, .9]])
    >>> alignment.pharaoh(), alignment.target_pieces   # "Hund." is one word
    ('0-0 1-1', ('▁A', '▁dog', '.'))
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from common.language_tags import languages_in_pieces

# The piece of the end of a sentence, in every runtime's pieces.
EOS_PIECE = "</s>"
WORD_START = "▁"


def word_indices(pieces: Sequence[str]) -> list[int | None]:
    """Each piece's word (0, 1, ...), None for a language tag (and the lone ``▁`` before it):
    a piece starting with ``▁`` starts a word, and so does the first one.

    Example:
        >>> word_indices(["▁", "<2en>", "▁Ein", "▁Hun", "d", "."])
        [None, None, 0, 1, 1, 1]
    """
    indices: list[int | None] = []
    word = -1
    for position, piece in enumerate(pieces):
        next_piece = pieces[position + 1] if position + 1 < len(pieces) else ""
        # A tag, and the lone "▁" SentencePiece writes before a tag that starts the text.
        if languages_in_pieces([piece]) or (
            piece == WORD_START and languages_in_pieces([next_piece])
        ):
            indices.append(None)
            continue
        if word < 0 or piece.startswith(WORD_START):
            word += 1
        indices.append(word)
    return indices


def alignments_of(
    source_pieces: Sequence[Sequence[bytes | str]],
    target_pieces: Sequence[Sequence[bytes | str]],
    attention: Sequence[Sequence[Sequence[float]]],
) -> list[Alignment]:
    """A runtime's ``(batch, source_len)`` and ``(batch, target_len)`` pieces (bytes or str,
    ``""`` past an end) and ``(batch, target_len, source_len)`` attention as
    :class:`Alignment` values.

    Example:
        >>> alignments_of([["▁Ja", "</s>"]], [[b"\xe2\x96\x81Yes", b""]], [[[0.9, 0.1], [0, 0]]])
        [Alignment(source_pieces=('▁Ja',), target_pieces=('▁Yes',), attention=((0.9,),))]
    """

    def texts(pieces: Sequence[bytes | str]) -> list[str]:
        return [p.decode("utf-8", errors="replace") if isinstance(p, bytes) else p for p in pieces]

    return [
        Alignment(texts(sources), texts(targets), weights)
        for sources, targets, weights in zip(source_pieces, target_pieces, attention, strict=True)
    ]


@dataclasses.dataclass(frozen=True)
class Alignment:
    """A translation's soft alignment: ``attention[t][s]``, how much written piece ``t`` looked
    at source piece ``s`` (rows of ``target_pieces``, columns of ``source_pieces``; a row sums
    to at most 1: the weight on the source's ``</s>`` is left out)."""

    source_pieces: tuple[str, ...]
    target_pieces: tuple[str, ...]
    attention: tuple[tuple[float, ...], ...]

    def __init__(
        self,
        source_pieces: Sequence[str],
        target_pieces: Sequence[str],
        attention: Sequence[Sequence[float]],
    ) -> None:
        """Keeps the real pieces: ``</s>`` and padding (``""``) are left out, with their rows
        and columns of ``attention`` (``(target pieces, source pieces)``, as given)."""
        columns = [s for s, piece in enumerate(source_pieces) if piece not in ("", EOS_PIECE)]
        rows = [t for t, piece in enumerate(target_pieces) if piece not in ("", EOS_PIECE)]
        object.__setattr__(self, "source_pieces", tuple(source_pieces[s] for s in columns))
        object.__setattr__(self, "target_pieces", tuple(target_pieces[t] for t in rows))
        weights = tuple(tuple(float(attention[t][s]) for s in columns) for t in rows)
        object.__setattr__(self, "attention", weights)

    def links(self) -> list[tuple[int, int]]:
        """The hard alignment: sorted ``(source word, target word)`` pairs."""
        source_words = word_indices(self.source_pieces)
        target_words = word_indices(self.target_pieces)
        candidates = [s for s, word in enumerate(source_words) if word is not None]
        links = set()
        for row, target_word in zip(self.attention, target_words, strict=True):
            if target_word is None or not candidates:
                continue
            best = max(candidates, key=lambda s: row[s])
            links.add((source_words[best], target_word))
        return sorted(links)

    def pharaoh(self) -> str:
        """:meth:`links` as Pharaoh text: ``"0-0 1-1 2-1"``."""
        return " ".join(f"{source}-{target}" for source, target in self.links())

    def fields(self) -> dict[str, object]:
        """The soft alignment's JSON fields (every surface writes it so)."""
        return {
            "source_pieces": list(self.source_pieces),
            "target_pieces": list(self.target_pieces),
            "attention": [list(row) for row in self.attention],
        }
