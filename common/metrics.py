"""Corpus BLEU and chrF with sacreBLEU, on detokenized text against raw references; a
classifier's accuracy, precision, recall, F1 and confusion matrix."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import sacrebleu


def bleu(
    hypotheses: list[str], references: list[str], lowercase: bool = False, tokenize: str = "13a"
) -> tuple[sacrebleu.metrics.bleu.BLEUScore, str]:
    """Corpus BLEU (cased unless ``lowercase``) and its signature. ``tokenize`` is sacreBLEU's
    tokenizer: ``13a`` for detokenized text, ``none`` for text tokenized beforehand.

    Example:
        >>> score, signature = bleu(["A dog runs."], ["A dog runs."])
        >>> score.score
        100.00000000000004
        >>> bleu(["a dog runs ."], ["a dog runs ."], tokenize="none")[1]
        'nrefs:1|case:mixed|eff:no|tok:none|smooth:exp|version:2.6.0'
    """
    metric = sacrebleu.metrics.BLEU(lowercase=lowercase, tokenize=tokenize)
    return metric.corpus_score(hypotheses, [references]), str(metric.get_signature())


def chrf(
    hypotheses: list[str], references: list[str]
) -> tuple[sacrebleu.metrics.chrf.CHRFScore, str]:
    """Corpus chrF and its signature."""
    metric = sacrebleu.metrics.CHRF()
    return metric.corpus_score(hypotheses, [references]), str(metric.get_signature())


@dataclasses.dataclass(frozen=True)
class ClassificationScores:
    """A classifier's scores on labelled texts: ``confusion[i][j]`` counts the texts of label
    ``labels[i]`` predicted as ``labels[j]``; ``positive``: the label whose precision, recall and
    F1 are reported (a binary task's positive class, e.g. spam), or None for the macro F1.

    Example:
        >>> scores = classification_scores([0, 1, 1], [0, 1, 0], ["ham", "spam"], "spam")
        >>> round(scores.accuracy, 3), scores.f1("spam"), scores.score
        (0.667, 0.6666666666666666, 0.6666666666666666)
    """

    labels: tuple[str, ...]
    confusion: tuple[tuple[int, ...], ...]
    positive: str | None = None

    @property
    def count(self) -> int:
        return sum(map(sum, self.confusion))

    @property
    def accuracy(self) -> float:
        correct = sum(self.confusion[i][i] for i in range(len(self.labels)))
        return correct / max(self.count, 1)

    def precision(self, label: str) -> float:
        i = self.labels.index(label)
        predicted = sum(row[i] for row in self.confusion)
        return self.confusion[i][i] / predicted if predicted else 0.0

    def recall(self, label: str) -> float:
        i = self.labels.index(label)
        actual = sum(self.confusion[i])
        return self.confusion[i][i] / actual if actual else 0.0

    def f1(self, label: str) -> float:
        precision, recall = self.precision(label), self.recall(label)
        return 2 * precision * recall / (precision + recall) if precision + recall else 0.0

    @property
    def macro_f1(self) -> float:
        return sum(map(self.f1, self.labels)) / len(self.labels)

    @property
    def score(self) -> float:
        """What chooses the best model: the positive label's F1, else the macro F1."""
        return self.f1(self.positive) if self.positive else self.macro_f1

    @property
    def score_name(self) -> str:
        return f"{self.positive} F1" if self.positive else "macro F1"

    def report(self) -> str:
        """Accuracy, each label's precision, recall and F1, and the confusion matrix, as text."""
        width = max(len(label) for label in (*self.labels, "true \\ predicted"))
        lines = [
            f"accuracy {self.accuracy:.4f} ({self.count} texts); {self.score_name} "
            f"{self.score:.4f}",
            "",
            "| label | precision | recall | F1 | texts |",
            "| --- | --- | --- | --- | --- |",
            *(
                f"| {label} | {self.precision(label):.4f} | {self.recall(label):.4f} | "
                f"{self.f1(label):.4f} | {sum(row)} |"
                for label, row in zip(self.labels, self.confusion, strict=True)
            ),
            "",
            "confusion matrix (rows: true label, columns: predicted):",
            " ".join(f"{name:>{width}}" for name in ("true \\ predicted", *self.labels)),
            *(
                " ".join(f"{cell:>{width}}" for cell in (label, *row))
                for label, row in zip(self.labels, self.confusion, strict=True)
            ),
        ]
        return "\n".join(lines)


def classification_scores(
    actual: Sequence[int], predicted: Sequence[int], labels: Sequence[str], positive: str = ""
) -> ClassificationScores:
    """The :class:`ClassificationScores` of ``predicted`` class ids against ``actual`` ones
    (ids index ``labels``); ``positive``: a label, or "" for the macro F1."""
    if positive and positive not in labels:
        raise ValueError(f"The positive label {positive!r} is not one of {list(labels)}.")
    confusion = [[0] * len(labels) for _ in labels]
    for true, guess in zip(actual, predicted, strict=True):
        confusion[true][guess] += 1
    return ClassificationScores(tuple(labels), tuple(map(tuple, confusion)), positive or None)
