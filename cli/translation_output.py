"""How ``translate.py`` writes n-best lists and scores: plain text or JSON lines.

* ``text``: a line per hypothesis (``--n_best`` lines per sentence, best first); with scores,
  ``SCORE ||| TRANSLATION`` (OpenNMT-tf's n-best format; SCORE is the search's,
  ``log_prob / lp(length)``). A line break inside a translation (a byte piece the model wrote:
  sampling can) is written as a space, so that line N is always sentence N's (:func:`one_line`).
* ``jsonl``: a JSON object per sentence, ``{"hypotheses": [{"translation", "score",
  "log_prob", "length", "confidence", "token_log_probs"}, ...]}``
  (``common.translation.Hypothesis.fields``).
* With word alignments (``--alignments``): in text, `` ||| `` and the alignment after each
  translation; in JSON lines, an ``"alignment"`` field in each hypothesis. ``hard``: Pharaoh
  links, ``"0-0 1-2"`` (source word - target word); ``soft``: per subword, in text a row of
  comma-separated weights for each target piece (Marian's form), in JSON the pieces and the
  matrix (``common.alignment.Alignment.fields``).

Example:
    >>> format_hypotheses([Hypothesis("A dog.", -0.5, -0.8, 4)], "text", with_scores=True)
    '-0.500000 ||| A dog.\\n'
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from common.alignment import Alignment
from common.translation import Hypothesis

OUTPUT_FORMATS = ("text", "jsonl")
ALIGNMENT_KINDS = ("hard", "soft")
# The characters str.splitlines breaks a line at.
_LINE_BREAKS = str.maketrans(dict.fromkeys("\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029", " "))


def one_line(text: str) -> str:
    """``text`` with each character that breaks a line (``str.splitlines``'s) as a space.

    Example:
        >>> one_line("A dog\\nruns.\\u2028")
        'A dog runs. '
    """
    return text.translate(_LINE_BREAKS)


def alignment_output(alignment: Alignment, kind: str, output_format: str) -> str | dict:
    """An alignment as ``translate.py`` writes it: ``kind`` hard or soft, in text or JSON.

    Example:
        >>> alignment_output(Alignment(["▁Ja"], ["▁Yes"], [[1.0]]), "soft", "text")
        '1.000000'
    """
    if kind == "hard":
        return alignment.pharaoh()
    if output_format == "jsonl":
        return alignment.fields()
    return " ".join(",".join(f"{weight:.6f}" for weight in row) for row in alignment.attention)


def format_hypotheses(
    hypotheses: Sequence[Hypothesis],
    output_format: str,
    with_scores: bool,
    alignments: Sequence[str | dict] | None = None,
) -> str:
    """One sentence's hypotheses as the lines ``translate.py`` writes for it (newline-ended),
    each with its alignment (:func:`alignment_output`) when ``alignments`` are given."""
    if output_format == "jsonl":
        rows = [hypothesis.fields() for hypothesis in hypotheses]
        for row, alignment in zip(rows, alignments or [None] * len(rows), strict=True):
            if alignment is not None:
                row["alignment"] = alignment
        return json.dumps({"hypotheses": rows}, ensure_ascii=False) + "\n"
    lines = [one_line(h.text) for h in hypotheses]
    if with_scores:
        lines = [f"{h.score:.6f} ||| {line}" for h, line in zip(hypotheses, lines, strict=True)]
    if alignments is not None:
        lines = [f"{line} ||| {a}" for line, a in zip(lines, alignments, strict=True)]
    return "".join(f"{line}\n" for line in lines)
