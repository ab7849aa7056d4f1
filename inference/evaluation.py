"""BLEU and chrF with sacreBLEU on detokenized, cased text against the raw references."""

from __future__ import annotations

import dataclasses
import os

import sacrebleu

from common.files import atomic_write_text
from common.metrics import bleu, chrf
from data_pipeline import load_translation_splits
from decoding.translator import Translator


@dataclasses.dataclass
class EvaluationResult:
    bleu: sacrebleu.metrics.bleu.BLEUScore
    chrf: sacrebleu.metrics.chrf.CHRFScore
    bleu_signature: str
    chrf_signature: str
    hypotheses_file: str
    references_file: str
    lowercase_bleu: sacrebleu.metrics.bleu.BLEUScore
    lowercase_bleu_signature: str

    def report(self) -> str:
        return (
            f"{self.bleu} (signature: {self.bleu_signature})\n"
            f"{self.chrf} (signature: {self.chrf_signature})\n"
            f"lower-cased {self.lowercase_bleu} (signature: {self.lowercase_bleu_signature})\n"
            f"hypotheses: {self.hypotheses_file}\nreferences: {self.references_file}"
        )


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
    bleu_score, bleu_signature = bleu(hypotheses, references)
    chrf_score, chrf_signature = chrf(hypotheses, references)
    lowercase_score, lowercase_signature = bleu(hypotheses, references, lowercase=True)
    return EvaluationResult(
        bleu_score,
        chrf_score,
        bleu_signature,
        chrf_signature,
        hypotheses_file,
        references_file,
        lowercase_score,
        lowercase_signature,
    )
