"""BLEU and chrF with sacreBLEU on detokenized, cased text against the raw references; for
Multi30k also the tokenized lower-cased BLEU of the published papers (`inference.multi30k_bleu`).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterator, Sequence

import sacrebleu

from common.files import atomic_write_text
from common.metrics import bleu, chrf
from common.translation import RequestError, TranslationRequest, Translator
from data_pipeline import Corpus, DataSpec, load_corpus, pair_texts
from inference import multi30k_bleu


@dataclasses.dataclass
class TokenizedBleu:
    """Multi30k's tokenized lower-cased BLEU and the files it was computed on (the data set's
    line order; the references are the data set's own file)."""

    bleu: sacrebleu.metrics.bleu.BLEUScore
    signature: str
    hypotheses_file: str
    references_file: str


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
    # Of the translations, each exp(log_prob / length); None from a runtime without scores.
    mean_confidence: float | None
    tokenized: TokenizedBleu | None = None  # Multi30k's validation and test splits only.

    def report(self) -> str:
        scores = [
            f"{self.bleu} (signature: {self.bleu_signature})",
            f"{self.chrf} (signature: {self.chrf_signature})",
            f"lower-cased {self.lowercase_bleu} (signature: {self.lowercase_bleu_signature})",
        ]
        files = [f"hypotheses: {self.hypotheses_file}", f"references: {self.references_file}"]
        if self.tokenized is not None:
            scores.append(
                f"{multi30k_bleu.LABEL}: {self.tokenized.bleu} "
                f"(signature: {self.tokenized.signature})"
            )
            files += [
                f"tokenized hypotheses: {self.tokenized.hypotheses_file}",
                f"tokenized references: {self.tokenized.references_file}",
            ]
        if self.mean_confidence is not None:
            scores.append(
                f"mean confidence {self.mean_confidence:.4f} (each translation's "
                "exp(log_prob / length): the geometric mean of its tokens' probabilities)"
            )
        return "\n".join(scores + files)


def read_split(
    corpus: Corpus, split: str, data_dir: str | None = None
) -> tuple[list[str], list[str]]:
    """``(sources, references)`` of a corpus's split, untagged, in the data set's order.

    Example:
        >>> sources, references = read_split(data_spec(config).corpora[0], "validation")
        >>> len(sources)
        1014
    """
    return pair_texts(load_corpus(corpus, [split], data_dir)[split])


def evaluate_directions(
    translator: Translator,
    data: DataSpec,
    corpora: Sequence[Corpus],
    split: str,
    output_dir: str,
    progress: bool = True,
) -> Iterator[tuple[str, EvaluationResult]]:
    """``corpora`` (of ``data``; one for a model of one language pair) evaluated in turn with
    :func:`evaluate_split`, each into its direction's target language when the model or the
    data has several (a model of one target language then refuses it, naming its own):
    ``(the direction's label, its result)`` as each is scored.

    Example:
        >>> for label, result in evaluate_directions(translator, data, data.corpora, "test2016",
        ...                                          "/tmp/run/eval"):
        ...     print(label, result.bleu.score)
    """
    for corpus in corpora:
        target_lang = corpus.direction.target if translator.languages or data.tagged else None
        request = TranslationRequest(target_lang=target_lang)
        yield (
            corpus.direction.label,
            evaluate_split(translator, corpus, split, output_dir, data.data_dir, progress, request),
        )


def evaluate_split(
    translator: Translator,
    corpus: Corpus,
    split: str,
    output_dir: str,
    data_dir: str | None = None,
    progress: bool = True,
    request: TranslationRequest = TranslationRequest(),
) -> EvaluationResult:
    """Translates ``split`` of ``corpus`` as ``request`` asks (a multilingual model into its
    ``target_lang``), writes hypotheses and references, scores them (and the model's mean
    confidence in its translations); on Multi30k's validation and test splits also with the
    papers' tokenized BLEU, on files written beside them.

    Example:
        >>> corpus = data_spec(config).corpora[0]
        >>> result = evaluate_split(translator, corpus, "test2016", "/tmp/run/eval")
        >>> print(result.report())
    """
    sources, references = read_split(corpus, split, data_dir)
    # Before translating, so that missing or corrupt files fail fast.
    tokenized_references = multi30k_bleu.load_tokenized_references(
        corpus, split, list(zip(sources, references, strict=True)), data_dir
    )
    try:
        best = [row[0] for row in translator.hypotheses(sources, request, progress=progress)]
        hypotheses = [hypothesis.text for hypothesis in best]
        mean_confidence = sum(h.confidence for h in best) / len(best) if best else 0.0
    except RequestError:  # a runtime whose search gives no scores (a LiteRT export)
        hypotheses = translator.translate(sources, request, progress=progress)
        mean_confidence = None
    stem = output_stem(output_dir, corpus, split)
    hypotheses_file = f"{stem}.beam{translator.beam_size}.hyp"
    references_file = f"{stem}.ref"
    _write_lines(hypotheses_file, hypotheses)
    _write_lines(references_file, references)
    bleu_score, bleu_signature = bleu(hypotheses, references)
    chrf_score, chrf_signature = chrf(hypotheses, references)
    lowercase_score, lowercase_signature = bleu(hypotheses, references, lowercase=True)
    tokenized = None
    if tokenized_references is not None:
        tokenized_hypotheses = tokenized_references.hypotheses_in_file_order(hypotheses)
        tokenized = TokenizedBleu(
            *bleu(tokenized_hypotheses, tokenized_references.lines, tokenize="none"),
            hypotheses_file=f"{stem}.beam{translator.beam_size}.lc.norm.tok.hyp",
            references_file=f"{stem}.lc.norm.tok.ref",
        )
        _write_lines(tokenized.hypotheses_file, tokenized_hypotheses)
        _write_lines(tokenized.references_file, tokenized_references.lines)
    return EvaluationResult(
        bleu_score,
        chrf_score,
        bleu_signature,
        chrf_signature,
        hypotheses_file,
        references_file,
        lowercase_score,
        lowercase_signature,
        mean_confidence,
        tokenized,
    )


def output_stem(output_dir: str, corpus: Corpus, split: str) -> str:
    """Where :func:`evaluate_split` writes a split's files, without the endings (``.ref``,
    ``.beam4.hyp``, ...).

    Example:
        >>> output_stem("/tmp/run/eval", data_spec(config).corpora[0], "test2016")
        '/tmp/run/eval/multi30k_de-fr.test2016'
    """
    return os.path.join(output_dir, f"{corpus.name.replace('/', '_')}.{split}")


def directions_table(results: dict[str, EvaluationResult]) -> str:
    """A Markdown table of each direction's scores (the papers' tokenized BLEU where the data
    set has those references, else "-"), and their mean when there are several.

    Example:
        >>> print(directions_table({"de-fr": result}))
        | direction | BLEU | lower-cased BLEU | chrF2 | tokenized BLEU |
        | --- | --- | --- | --- | --- |
        | de-fr | 30.12 | 31.05 | 55.20 | 30.80 |
    """
    rows = [_row("direction", *_SCORE_COLUMNS), _row(*["---"] * 5)]
    rows += [_row(label, *_formatted(_scores({label: r}))) for label, r in results.items()]
    if len(results) > 1:
        rows.append(_row("mean", *_formatted(_scores(results))))
    return "\n".join(rows)


def length_penalties_table(
    results: dict[float, dict[str, EvaluationResult]],
) -> tuple[str, float]:
    """A Markdown table of the scores of each length penalty (of its directions' results: their
    mean when there are several), and the penalty of the highest cased BLEU (the first of a
    tie), in bold.

    Example:
        >>> table, best = length_penalties_table({1.0: {"en-de": r1}, 1.4: {"en-de": r2}})
        >>> print(table)
        | length penalty | BLEU | lower-cased BLEU | chrF2 | tokenized BLEU |
        | --- | --- | --- | --- | --- |
        | 1.0 | 39.80 | 40.21 | 63.90 | 40.20 |
        | **1.4** | **40.12** | 40.50 | 64.10 | 40.47 |
    """
    scores = {penalty: _scores(by_direction) for penalty, by_direction in results.items()}
    best = max(scores, key=lambda penalty: scores[penalty][0])
    rows = [_row("length penalty", *_SCORE_COLUMNS), _row(*["---"] * 5)]
    for penalty, penalty_scores in scores.items():
        cells = [f"{penalty}", *_formatted(penalty_scores)]
        if penalty == best:
            cells[:2] = [f"**{cell}**" for cell in cells[:2]]
        rows.append(_row(*cells))
    return "\n".join(rows), best


_SCORE_COLUMNS = ("BLEU", "lower-cased BLEU", "chrF2", "tokenized BLEU")


def _scores(results: dict[str, EvaluationResult]) -> tuple[float, float, float, float | None]:
    """The mean over ``results`` of BLEU, lower-cased BLEU, chrF2 and the papers' tokenized
    BLEU (None unless every result has it)."""

    def mean(values: list[float]) -> float:
        return sum(values) / len(values)

    tokenized = [r.tokenized.bleu.score for r in results.values() if r.tokenized]
    return (
        mean([r.bleu.score for r in results.values()]),
        mean([r.lowercase_bleu.score for r in results.values()]),
        mean([r.chrf.score for r in results.values()]),
        mean(tokenized) if len(tokenized) == len(results) else None,
    )


def _formatted(scores: tuple[float, float, float, float | None]) -> list[str]:
    return [f"{score:.2f}" if score is not None else "-" for score in scores]


def _row(*cells: str) -> str:
    return f"| {' | '.join(cells)} |"


def _write_lines(path: str, lines: Sequence[str]) -> None:
    atomic_write_text(path, "".join(line + "\n" for line in lines))
