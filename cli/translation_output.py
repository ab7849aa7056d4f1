"""How ``translate.py`` writes n-best lists and scores: plain text or JSON lines.

* ``text``: a line per hypothesis (``--n_best`` lines per sentence, best first); with scores,
  ``SCORE ||| TRANSLATION`` (OpenNMT-tf's n-best format; SCORE is the search's,
  ``log_prob / lp(length)``). A line break inside a translation (a byte piece the model wrote:
  sampling can) is written as a space, so that line N is always sentence N's (:func:`one_line`).
* ``jsonl``: a JSON object per sentence, ``{"hypotheses": [{"translation", "score",
  "log_prob", "length", "confidence", "token_log_probs"}, ...]}``
  (``common.translation.Hypothesis.fields``).

Example:
    >>> format_hypotheses([Hypothesis("A dog.", -0.5, -0.8, 4)], "text", with_scores=True)
    '-0.500000 ||| A dog.\\n'
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from common.translation import Hypothesis

OUTPUT_FORMATS = ("text", "jsonl")
# The characters str.splitlines breaks a line at.
_LINE_BREAKS = str.maketrans(dict.fromkeys("\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029", " "))


def one_line(text: str) -> str:
    """``text`` with each character that breaks a line (``str.splitlines``'s) as a space.

    Example:
        >>> one_line("A dog\\nruns.\\u2028")
        'A dog runs. '
    """
    return text.translate(_LINE_BREAKS)


def format_hypotheses(
    hypotheses: Sequence[Hypothesis], output_format: str, with_scores: bool
) -> str:
    """One sentence's hypotheses as the lines ``translate.py`` writes for it (newline-ended)."""
    if output_format == "jsonl":
        rows = [hypothesis.fields() for hypothesis in hypotheses]
        return json.dumps({"hypotheses": rows}, ensure_ascii=False) + "\n"
    if with_scores:
        return "".join(f"{h.score:.6f} ||| {one_line(h.text)}\n" for h in hypotheses)
    return "".join(f"{one_line(h.text)}\n" for h in hypotheses)
