"""BLEU and chrF with sacreBLEU on detokenized, cased text against the raw references."""

from __future__ import annotations

import dataclasses
import os

import sacrebleu

from data_pipeline import load_translation_splits
from decoding.translator import Translator
from training.checkpoints import atomic_write_text


@dataclasses.dataclass
class EvaluationResult:
    bleu: sacrebleu.metrics.bleu.BLEUScore
    chrf: sacrebleu.metrics.chrf.CHRFScore
    bleu_signature: str
    chrf_signature: str
    hypotheses_file: str
    references_file: str

    def report(self) -> str:
        return (
            f"{self.bleu} (signature: {self.bleu_signature})\n"
            f"{self.chrf} (signature: {self.chrf_signature})\n"
            f"hypotheses: {self.hypotheses_file}\nreferences: {self.references_file}"
        )


def score(
    hypotheses: list[str],
    references: list[str],
    lowercase: bool = False,
) -> tuple[sacrebleu.metrics.bleu.BLEUScore, str, sacrebleu.metrics.chrf.CHRFScore, str]:
    """Corpus BLEU (13a tokenization, cased unless ``lowercase``) and chrF, with signatures."""
    bleu, chrf = sacrebleu.metrics.BLEU(lowercase=lowercase), sacrebleu.metrics.CHRF()
    bleu_score = bleu.corpus_score(hypotheses, [references])
    chrf_score = chrf.corpus_score(hypotheses, [references])
    return bleu_score, str(bleu.get_signature()), chrf_score, str(chrf.get_signature())


def evaluate_split(
    translator: Translator,
    data_name: str,
    split: str,
    output_dir: str,
    data_dir: str | None = None,
    progress: bool = True,
) -> EvaluationResult:
    """Translates ``split`` of ``data_name``, writes hypotheses and references, scores them.

    Example:
        >>> result = evaluate_split(translator, "multi30k/de-en", "test2016", "/tmp/run/eval")
        >>> print(result.report())
    """
    pairs = load_translation_splits(data_name, [split], data_dir=data_dir)[split]
    sources, references = [], []
    for source, target in pairs.as_numpy_iterator():
        sources.append(source.decode("utf-8"))
        references.append(target.decode("utf-8"))
    hypotheses = translator.translate(sources, progress=progress)
    stem = os.path.join(output_dir, f"{data_name.replace('/', '_')}.{split}")
    hypotheses_file = f"{stem}.beam{translator.beam_size}.hyp"
    references_file = f"{stem}.ref"
    atomic_write_text(hypotheses_file, "".join(line + "\n" for line in hypotheses))
    atomic_write_text(references_file, "".join(line + "\n" for line in references))
    bleu, bleu_signature, chrf, chrf_signature = score(hypotheses, references)
    return EvaluationResult(
        bleu, chrf, bleu_signature, chrf_signature, hypotheses_file, references_file
    )
