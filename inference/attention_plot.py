"""Heat maps drawn as one SVG file: of a translation, the encoder-decoder attention of every head
in the last decoder layer; of a classified text, what each head of the classifier's last layer
attended to, over the text itself. A browser shows it, a hover shows a weight, and no plotting
library is loaded (importing one costs every script a second or more at start)."""

from __future__ import annotations

from collections.abc import Sequence
from xml.sax.saxutils import escape, quoteattr

import numpy as np

from common.files import atomic_write_text
from common.translation import TranslationRequest
from decoding.translator import ModelTranslator, request_columns

# Viridis by linear interpolation between five of its colours, as the demo page draws it.
_VIRIDIS = np.array(
    [[68, 1, 84], [59, 82, 139], [33, 145, 140], [94, 201, 98], [253, 231, 37]], dtype=float
)
_CELL = 20  # px: one attention weight
_FONT = 12  # px
_CHAR = 7  # px: about the width of a character at _FONT, to leave room for the labels
_GAP = 24  # px between two heads
_HEADS_A_ROW = 4
_TITLE = 32  # px: the figure's title line
_HEAD_TITLE = 20  # px: a head's title line
_LINE = 22  # px: a line of a text's pieces
_TEXT_WIDTH = 960  # px: a text's lines are wrapped there
_WORD_START = "\u2581"  # SentencePiece's mark of a piece that starts a word


def viridis(value: float) -> str:
    """The colour of an attention weight in [0, 1] (clipped), as ``#rrggbb``."""
    position = min(max(float(value), 0.0), 1.0) * (len(_VIRIDIS) - 1)
    low = min(int(position), len(_VIRIDIS) - 2)
    rgb = _VIRIDIS[low] + (_VIRIDIS[low + 1] - _VIRIDIS[low]) * (position - low)
    return "#" + "".join(f"{round(channel):02x}" for channel in rgb)


def attention_svg(
    weights: np.ndarray, source_pieces: Sequence[str], output_pieces: Sequence[str]
) -> str:
    """An SVG image of one heat map per head, four heads a row: rows are output pieces, columns
    source pieces, each cell coloured by its weight (viridis, 0 to 1).

    Args:
        weights: (heads, len(output_pieces), len(source_pieces)) attention weights.

    Example:
        >>> svg = attention_svg(np.full((2, 1, 2), 0.5), ["▁Hund", "</s>"], ["▁dog"])
        >>> svg.count("<title>")  # one cell a weight, its value shown on hover
        4
    """
    weights = np.asarray(weights)
    expected = (len(output_pieces), len(source_pieces))
    if weights.ndim != 3 or weights.shape[1:] != expected:
        raise ValueError(
            f"weights must be (heads, {expected[0]} output pieces, {expected[1]} source pieces), "
            f"got shape {weights.shape}."
        )
    label_width = _CHAR * max(map(len, output_pieces), default=0) + 8
    label_height = _CHAR * max(map(len, source_pieces), default=0) + 8
    panel_width = label_width + _CELL * len(source_pieces) + _GAP
    panel_height = _HEAD_TITLE + _CELL * len(output_pieces) + label_height + _GAP
    num_heads = weights.shape[0]
    columns = max(min(num_heads, _HEADS_A_ROW), 1)
    rows = -(-num_heads // columns)
    title = "Encoder-decoder attention, last decoder layer (weight 0: dark purple, 1: yellow)"
    width = max(columns * panel_width, _CHAR * len(title) + 16)
    height = _TITLE + rows * panel_height
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'font-family="sans-serif" font-size="{_FONT}">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="8" y="{_TITLE - 12}">{title}</text>',
    ]
    for head in range(num_heads):
        left = (head % columns) * panel_width
        top = _TITLE + (head // columns) * panel_height
        grid_left, grid_top = left + label_width, top + _HEAD_TITLE
        grid_bottom = grid_top + _CELL * len(output_pieces)
        parts.append(
            f'<text x="{grid_left + _CELL * len(source_pieces) / 2}" y="{top + 14}" '
            f'text-anchor="middle">head {head + 1}</text>'
        )
        for row, output_piece in enumerate(output_pieces):
            y = grid_top + row * _CELL
            parts.append(
                f'<text x="{grid_left - 4}" y="{y + _CELL / 2}" text-anchor="end" '
                f'dominant-baseline="middle">{escape(output_piece)}</text>'
            )
            for column, source_piece in enumerate(source_pieces):
                weight = float(weights[head, row, column])
                tooltip = escape(f"{output_piece} ← {source_piece}: {weight:.3f}")
                parts.append(
                    f'<rect x="{grid_left + column * _CELL}" y="{y}" width="{_CELL}" '
                    f'height="{_CELL}" fill={quoteattr(viridis(weight))}>'
                    f"<title>{tooltip}</title></rect>"
                )
        for column, source_piece in enumerate(source_pieces):
            x = grid_left + column * _CELL + _CELL / 2
            parts.append(
                f'<text transform="translate({x} {grid_bottom + 4}) rotate(-90)" '
                f'text-anchor="end" dominant-baseline="middle">{escape(source_piece)}</text>'
            )
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def plot_cross_attention(
    translator: ModelTranslator,
    sentence: str,
    path: str,
    request: TranslationRequest = TranslationRequest(),
) -> str:
    """Translates ``sentence`` as ``request`` asks and saves its heat maps
    (:func:`attention_svg`) to ``path``, an SVG file written atomically; returns the
    translation.

    Example:
        >>> plot_cross_attention(translator, "Ein Hund rennt.", "/tmp/attention.svg")
    """
    language = request.language(translator.languages)
    outputs = translator.cross_attention(*request_columns([sentence], language))
    source_pieces = [p.decode() for p in outputs.source_pieces[0].numpy() if p]
    output_pieces = [p.decode() for p in outputs.target_pieces[0].numpy() if p]
    # (heads, target_len, source_len), without the padding.
    last_layer = outputs.attention[0, :, : len(output_pieces), : len(source_pieces)].numpy()
    atomic_write_text(path, attention_svg(last_layer, source_pieces, output_pieces))
    return outputs.translation[0].numpy().decode("utf-8", errors="replace")


def _text_layout(pieces: Sequence[str]) -> tuple[list[tuple[str, int, int, int]], int]:
    """Each piece as ``(shown, x, line, width)``, wrapped at ``_TEXT_WIDTH``; and the lines."""
    boxes, x, line = [], 8, 0
    for piece in pieces:
        shown = piece.replace(_WORD_START, " ").strip() or piece
        gap = 4 if piece.startswith(_WORD_START) else 0
        width = _CHAR * len(shown) + 4
        if x + gap + width > _TEXT_WIDTH and x > 8:
            x, line, gap = 8, line + 1, 0
        boxes.append((shown, x + gap, line, width))
        x += gap + width
    return boxes, line + 1


def text_attention_svg(pieces: Sequence[str], weights: np.ndarray, title: str) -> str:
    """An SVG image of what a classifier attended to in one text: a panel a head, then one of
    the heads' mean; in each, the text's pieces wrapped into lines, each on a box coloured by its
    weight relative to the panel's largest (viridis: dark purple 0, yellow the largest); the
    weight shows on hover.

    Args:
        pieces: the text's pieces as the classifier read them.
        weights: ``(heads, len(pieces))``, each head's weights over the pieces.
        title: the figure's first line (e.g. the label and its score).

    Example:
        >>> svg = text_attention_svg(["<s>", "▁Win", "▁now"], np.full((2, 3), 1 / 3), "spam")
        >>> svg.count("<title>")  # a box a piece in each of 2 heads and their mean
        9
    """
    weights = np.asarray(weights, dtype=float)
    if weights.ndim != 2 or weights.shape[1] != len(pieces) or not len(pieces):
        raise ValueError(
            f"weights must be (heads, {len(pieces)} pieces), got shape {weights.shape}."
        )
    panels = [(f"head {head + 1}", weights[head]) for head in range(len(weights))]
    panels.append(("mean of the heads", weights.mean(axis=0)))
    boxes, lines = _text_layout(pieces)
    panel_height = _HEAD_TITLE + lines * _LINE + _GAP
    width = max(_TEXT_WIDTH + 8, _CHAR * len(title) + 16)
    height = _TITLE + len(panels) * panel_height
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'font-family="sans-serif" font-size="{_FONT}">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="8" y="{_TITLE - 12}">{escape(title)}</text>',
    ]
    for index, (name, values) in enumerate(panels):
        top = _TITLE + index * panel_height
        largest = float(values.max()) or 1.0
        parts.append(
            f'<text x="8" y="{top + 14}" font-weight="bold">{escape(name)} (yellow: '
            f"{largest:.3f})</text>"
        )
        for (shown, x, line, box_width), piece, weight in zip(boxes, pieces, values, strict=True):
            y = top + _HEAD_TITLE + line * _LINE
            relative = float(weight) / largest
            ink = "black" if relative > 0.6 else "white"
            parts.append(
                f'<rect x="{x}" y="{y}" width="{box_width}" height="{_LINE - 2}" '
                f"fill={quoteattr(viridis(relative))}><title>"
                f"{escape(f'{piece}: {float(weight):.4f}')}</title></rect>"
                f'<text x="{x + 2}" y="{y + _LINE / 2}" dominant-baseline="middle" '
                f'fill="{ink}" pointer-events="none">{escape(shown)}</text>'
            )
    parts.append("</svg>")
    return "\n".join(parts) + "\n"
