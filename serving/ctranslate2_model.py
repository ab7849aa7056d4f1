"""Serving a CTranslate2 export (``export.py --format=ctranslate2``, any quantization): the same
signatures as the project's SavedModel, without TensorFlow (ctranslate2 and sentencepiece only).

``serving_default`` maps ``text`` to ``translation`` (a multilingual export's signatures take
``target_lang`` too, one per row, as the SavedModel's); ``cross_attention`` adds the pieces read
and written and the attention CTranslate2 returns: one map (the export's alignment heads: the
heads' mean of the decoder layer before the last), as ``attention`` ``(batch, 1, output pieces,
source pieces)``,
padded like the SavedModel's (pieces ``""``, weights 0). The search is the export's
(``decoding.json``: beam size, CTranslate2's length penalty, our output length limits).

Example:
    >>> model = load_ctranslate2_model("de-en", "runs/de_en/ct2_int8")
    >>> model.signature("serving_default")(["Ein Hund."])
    {'translation': array([b'A dog.'], dtype=object)}
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np

from common.alignment import Alignment
from common.translation import PHRASE_SEPARATOR, Hypothesis, Sampling, TranslationRequest
from exports.contract import (
    ALIGNMENT,
    ATTENTION,
    AVOID,
    CONSTRAINED,
    CROSS_ATTENTION,
    CTRANSLATE2_MODEL_FILE,
    FORCED_SCORE,
    LENGTH,
    LOG_PROB,
    N_BEST,
    PREFIXED,
    SCORE,
    SCORED,
    SERVING_DEFAULT,
    SIGNATURE_OUTPUTS,
    SOURCE_PIECES,
    TARGET,
    TARGET_LANG,
    TARGET_PIECES,
    TARGET_PREFIX,
    TERMS,
    TEXT,
    TOKEN_LOG_PROBS,
    TRANSLATION,
    signature_inputs,
)
from exports.ctranslate2 import CTranslate2Translator
from serving.errors import bad_request
from serving.registry import (
    SAMPLED,
    ServedModel,
    Signature,
    model_version_dir,
    string_signature_def,
)


def _holds_export(path: str) -> bool:
    return os.path.isfile(os.path.join(path, CTRANSLATE2_MODEL_FILE))


def load_ctranslate2_model(name: str, path: str, threads: int = 0) -> ServedModel:
    """Loads the CTranslate2 export of ``path`` (or the highest numbered one in it) as ``name``,
    computing on ``threads`` CPU threads (0: one per core).

    Example:
        >>> load_ctranslate2_model("de-en", "runs/de_en/ct2_int8").runtime
        'CTranslate2'
    """
    version, directory = model_version_dir(
        path,
        _holds_export,
        f"No CTranslate2 export in {path} (--ctranslate2), nor numbered versions of one; write "
        "one with `python export.py --workdir=DIR --format=ctranslate2 --output=...`.",
    )
    translator = CTranslate2Translator(directory, threads=threads)
    inputs = {
        signature: signature_inputs(translator.languages, signature)
        for signature in SIGNATURE_OUTPUTS
    }

    def by_name(columns: Sequence[list[str]]) -> tuple[list[str], list[str] | None]:
        """The ``text`` column and, for a multilingual export, the ``target_lang`` one."""
        named = dict(zip(inputs[SERVING_DEFAULT], columns, strict=True))
        return named[TEXT], named.get(TARGET_LANG)

    def translation(*columns: list[str]) -> dict[str, np.ndarray]:
        return {TRANSLATION: _strings(translator.translate_batch(*by_name(columns)))}

    def cross_attention(*columns: list[str]) -> dict[str, np.ndarray]:
        return _cross_attention(translator, *by_name(columns))

    def scored(*columns: list[str]) -> dict[str, np.ndarray]:
        return _hypotheses_columns(translator.hypotheses_batch(*by_name(columns), 1), 1)

    def n_best(*columns: list[str]) -> dict[str, np.ndarray]:
        beam = translator.beam_size
        return _hypotheses_columns(translator.hypotheses_batch(*by_name(columns), beam), beam)

    def forced_score(*columns: list[str]) -> dict[str, np.ndarray]:
        named = dict(zip(inputs[FORCED_SCORE], columns, strict=True))
        scores = translator.score_batch(named[TEXT], named[TARGET], named.get(TARGET_LANG))
        return _forced_score_columns(scores)

    def alignment(*columns: list[str]) -> dict[str, np.ndarray]:
        named = dict(zip(inputs[ALIGNMENT], columns, strict=True))
        aligned = translator.align_batch(named[TEXT], named[TARGET], named.get(TARGET_LANG))
        return _alignment_columns(aligned)

    def prefixed(*columns: list[str]) -> dict[str, np.ndarray]:
        named = dict(zip(inputs[PREFIXED], columns, strict=True))
        texts = translator.translate_batch(
            named[TEXT], named.get(TARGET_LANG), named[TARGET_PREFIX]
        )
        return {TRANSLATION: _strings(texts)}

    def constrained(*columns: list[str]) -> dict[str, np.ndarray]:
        """The ``constrained`` signature with avoided phrases only (CTranslate2 suppresses
        them, a batch of one set at a time); required terms are a 400."""
        named = dict(zip(inputs[CONSTRAINED], columns, strict=True))
        if any(named[TERMS]):
            raise bad_request(
                f"{TERMS}: CTranslate2 has no constrained search to place terms (it avoids "
                "phrases only): serve the model's SavedModel (--saved_model) for terms"
            )
        found: list = [None] * len(named[TEXT])
        for avoided in dict.fromkeys(named[AVOID]):
            rows = [row for row, phrases in enumerate(named[AVOID]) if phrases == avoided]
            languages = named.get(TARGET_LANG)
            avoiding = translator.avoiding(avoided.split(PHRASE_SEPARATOR) if avoided else ())
            for row, hypothesis in zip(
                rows,
                avoiding.hypotheses_batch(
                    [named[TEXT][row] for row in rows],
                    None if languages is None else [languages[row] for row in rows],
                    1,
                    [named[TARGET_PREFIX][row] for row in rows],
                ),
                strict=True,
            ):
                found[row] = hypothesis
        return _hypotheses_columns(found, 1)

    def sampler(sampling: Sampling) -> Signature:
        """``serving_default`` with CTranslate2's sampler in place of the search: the rows of
        one target language sampled together (its ``sample`` takes one)."""

        def sample(*columns: list[str]) -> dict[str, np.ndarray]:
            text, target_langs = by_name(columns)
            languages = target_langs or [None] * len(text)
            sampled = [""] * len(text)
            for language in dict.fromkeys(languages):
                rows = [row for row, lang in enumerate(languages) if lang == language]
                batch = [text[row] for row in rows]
                for row, output in zip(
                    rows, translator.sample(batch, sampling, language, progress=False), strict=True
                ):
                    sampled[row] = output
            return {TRANSLATION: _strings(sampled)}

        inputs_of_sampled = inputs[SERVING_DEFAULT]
        return Signature(SAMPLED, sample, inputs_of_sampled, (TRANSLATION,), batchable=False)

    runs = {
        SERVING_DEFAULT: translation,
        CROSS_ATTENTION: cross_attention,
        SCORED: scored,
        N_BEST: n_best,
        FORCED_SCORE: forced_score,
        PREFIXED: prefixed,
        ALIGNMENT: alignment,
        CONSTRAINED: constrained,
    }
    signatures = {
        signature: Signature(
            signature,
            runs[signature],
            inputs[signature],
            tuple(sorted(outputs)),
            batchable=signature == SERVING_DEFAULT,
        )
        for signature, outputs in SIGNATURE_OUTPUTS.items()
    }
    signature_defs = {
        signature: string_signature_def(list(inputs[signature]), SIGNATURE_OUTPUTS[signature])
        for signature in signatures
    }
    return ServedModel(
        name,
        version,
        directory,
        "CTranslate2",
        signatures,
        signature_defs,
        translator,
        translator.languages,
        translator.beam_size,
        sampler,
        source_lengths=lambda texts, language: translator.source_lengths(
            texts, TranslationRequest(target_lang=language or None)
        ),
        max_source_length=translator.max_source_length,
    )


def _strings(texts: list[str]) -> np.ndarray:
    return np.array([text.encode("utf-8") for text in texts], dtype=object)


def _padded_pieces(rows: list[list[str]], width: int) -> np.ndarray:
    return np.array(
        [[piece.encode("utf-8") for piece in row] + [b""] * (width - len(row)) for row in rows],
        dtype=object,
    ).reshape(len(rows), width)


def _hypotheses_columns(rows: list[list[Hypothesis]], n: int) -> dict[str, np.ndarray]:
    """Each row's hypotheses as the SavedModel's ``(batch, n)`` outputs and ``(batch, n,
    out_len)`` token log-probabilities (a row with fewer: ``""``, score -inf, length 0)."""
    padded = [row + [Hypothesis("", -np.inf, -np.inf, 0)] * (n - len(row)) for row in rows]

    def column(value, dtype) -> np.ndarray:
        return np.array([[value(h) for h in row] for row in padded], dtype).reshape(len(rows), n)

    width = max((h.length for row in rows for h in row), default=0)
    tokens = np.zeros([len(rows), n, width], np.float32)
    for row, hypotheses in enumerate(rows):
        for index, hypothesis in enumerate(hypotheses):
            tokens[row, index, : hypothesis.length] = hypothesis.token_log_probs
    return {
        TRANSLATION: column(lambda h: h.text.encode("utf-8"), object),
        SCORE: column(lambda h: h.score, np.float32),
        LOG_PROB: column(lambda h: h.log_prob, np.float32),
        LENGTH: column(lambda h: h.length, np.int32),
        TOKEN_LOG_PROBS: tokens,
    }


def _forced_score_columns(scores: list[Hypothesis]) -> dict[str, np.ndarray]:
    """Forced scores as the SavedModel's ``forced_score`` outputs (token log-probabilities
    padded with 0)."""
    width = max((len(scored.token_log_probs) for scored in scores), default=0)
    tokens = np.zeros([len(scores), width], np.float32)
    for row, scored in enumerate(scores):
        tokens[row, : len(scored.token_log_probs)] = scored.token_log_probs
    return {
        SCORE: np.array([scored.score for scored in scores], np.float32),
        LOG_PROB: np.array([scored.log_prob for scored in scores], np.float32),
        LENGTH: np.array([scored.length for scored in scores], np.int32),
        TOKEN_LOG_PROBS: tokens,
    }


def _alignment_columns(alignments: list[Alignment]) -> dict[str, np.ndarray]:
    """Alignments as the SavedModel's ``alignment`` outputs, padded (pieces ``""``, weights 0;
    CTranslate2's have no ``</s>``)."""
    source_width = max((len(a.source_pieces) for a in alignments), default=0)
    target_width = max((len(a.target_pieces) for a in alignments), default=0)
    attention = np.zeros([len(alignments), target_width, source_width], np.float32)
    for row, aligned in enumerate(alignments):
        weights = np.asarray(aligned.attention, np.float32)
        if weights.size:
            attention[row, : weights.shape[0], : weights.shape[1]] = weights
    return {
        SOURCE_PIECES: _padded_pieces([list(a.source_pieces) for a in alignments], source_width),
        TARGET_PIECES: _padded_pieces([list(a.target_pieces) for a in alignments], target_width),
        ATTENTION: attention,
    }


def _cross_attention(
    translator: CTranslate2Translator, text: list[str], target_langs: list[str] | None
) -> dict[str, np.ndarray]:
    results = translator.cross_attention(text, target_langs)
    source_width = max((len(result.source_pieces) for result in results), default=0)
    target_width = max((len(result.target_pieces) for result in results), default=0)
    attention = np.zeros([len(results), 1, target_width, source_width], np.float32)
    for row, result in enumerate(results):
        weights = np.asarray(result.attention, np.float32).reshape(
            len(result.target_pieces), len(result.source_pieces)
        )
        attention[row, 0, : weights.shape[0], : weights.shape[1]] = weights
    return {
        TRANSLATION: _strings([result.translation for result in results]),
        SOURCE_PIECES: _padded_pieces([result.source_pieces for result in results], source_width),
        TARGET_PIECES: _padded_pieces([result.target_pieces for result in results], target_width),
        ATTENTION: attention,
    }
