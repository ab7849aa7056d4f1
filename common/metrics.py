"""Corpus BLEU and chrF with sacreBLEU, on detokenized text against raw references."""

from __future__ import annotations

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
