"""Corpus BLEU and chrF with sacreBLEU, on detokenized text against raw references."""

from __future__ import annotations

import sacrebleu


def bleu(
    hypotheses: list[str], references: list[str], lowercase: bool = False
) -> tuple[sacrebleu.metrics.bleu.BLEUScore, str]:
    """Corpus BLEU (13a tokenization, cased unless ``lowercase``) and its signature.

    Example:
        >>> score, signature = bleu(["A dog runs."], ["A dog runs."])
        >>> score.score
        100.00000000000004
    """
    metric = sacrebleu.metrics.BLEU(lowercase=lowercase)
    return metric.corpus_score(hypotheses, [references]), str(metric.get_signature())


def chrf(
    hypotheses: list[str], references: list[str]
) -> tuple[sacrebleu.metrics.chrf.CHRFScore, str]:
    """Corpus chrF and its signature."""
    metric = sacrebleu.metrics.CHRF()
    return metric.corpus_score(hypotheses, [references]), str(metric.get_signature())
