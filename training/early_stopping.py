"""Early stopping on the validation score: BLEU, or a classifier's F1
(``train.early_stopping_patience``, ``..._min_delta``).

A run ends after ``patience`` validations in a row none of which beat the reference score by more
than ``min_delta``; the reference is the first validation's score, then each one that beat it so.
``best/`` keeps the best model throughout. Each validation's step and score are written to the work
directory (``RunDirectory.validations``), so a resumed run counts on from where it was, exactly:
the history is cut at the step it resumes from.

Example:
    >>> stopping = EarlyStopping(patience=2, min_delta=0.1)
    >>> for step, bleu in [(1000, 20.0), (2000, 20.05), (3000, 19.0)]:
    ...     stopping.add(step, bleu)
    >>> stopping.due
    True
"""

from __future__ import annotations

import dataclasses

from common.files import read_json

_NAMES = {"bleu": "BLEU", "f1": "F1"}  # how the reason names a metric


@dataclasses.dataclass
class EarlyStopping:
    """The validations of a run so far and whether they say it should stop."""

    patience: int  # 0: never
    min_delta: float
    history: list[tuple[int, float]] = dataclasses.field(default_factory=list)  # (step, score)
    metric: str = "bleu"  # the score's name: "bleu", a classifier's "f1"

    def add(self, step: int, bleu: float) -> None:
        self.history.append((step, bleu))

    def resume(self, path: str, step: int) -> None:
        """The history written at ``path``, up to ``step`` (a run resumed from an earlier
        checkpoint validates the later steps again)."""
        saved = read_json(path) or {}
        self.history = [(s, b) for s, b in saved.get("validations", []) if s <= step]

    def record(self) -> dict:
        """What :meth:`resume` reads back (JSON)."""
        return {"validations": [list(entry) for entry in self.history]}

    def _reference(self) -> tuple[tuple[int, float] | None, int]:
        """The reference validation (the last that beat the one before it by more than
        ``min_delta``) and the validations since it."""
        reference, stalled = None, 0
        for step, bleu in self.history:
            if reference is None or bleu > reference[1] + self.min_delta:
                reference, stalled = (step, bleu), 0
            else:
                stalled += 1
        return reference, stalled

    @property
    def stalled(self) -> int:
        """Validations in a row since the reference score was last beaten by ``min_delta``."""
        return self._reference()[1]

    @property
    def due(self) -> bool:
        return bool(self.patience) and self.stalled >= self.patience

    def reason(self) -> str:
        """Why the run stops, for its last line."""
        (step, bleu), stalled = self._reference()
        validations = f"{stalled} validation" + ("" if stalled == 1 else "s in a row")
        return (
            f"{validations} without a {_NAMES.get(self.metric, self.metric)} more than "
            f"{self.min_delta} above {bleu:.2f} (step "
            f"{step}); best/ holds the best model"
        )
