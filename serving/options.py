"""Per-instance translation options of ``:predict`` rows: ``n_best`` and ``with_scores``.

Beyond TensorFlow Serving (whose rows carry a signature's inputs only): a row of
``serving_default`` in row format may also carry the options of its translation, and the rows of
one request may differ:

* ``"with_scores": true``: the row's prediction is an object, the translation and what the model
  thinks of it: ``translation``, ``score``, ``log_prob``, ``length``, ``confidence`` (the fields
  of :class:`common.translation.Hypothesis`; ``null`` for a search that never finished);
* ``"n_best": N`` (1 to the model's beam size): the object has ``translation`` and
  ``hypotheses``, the N best translations, best first, each an object of those fields.

A row without options gets what ``serving_default`` gives it, the translation as a string. Its
rows run through ``serving_default`` (batched with other requests' rows), the others through the
export contract's ``scored`` and ``n_best`` signatures. A bad value, an option in columnar format
or on another signature, and a model without those signatures are 400s.

Example:
    >>> body = {"instances": ["Ein Hund.", {"text": "Eine Katze.", "n_best": 2}]}
    >>> # -> {"predictions": ["A dog.", {"translation": "A cat.", "hypotheses": [
    >>> #        {"translation": "A cat.", "score": -0.31, "log_prob": -0.62, ...}, {...}]}]}
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Awaitable, Callable, Mapping, Sequence

import numpy as np

from common.translation import Hypothesis, RequestError, TranslationRequest
from exports.contract import LENGTH, LOG_PROB, N_BEST, SCORE, SCORED, SERVING_DEFAULT, TRANSLATION
from serving.errors import bad_request
from serving.registry import ServedModel, Signature

# The option fields of a row, and the fields the options add to its prediction.
N_BEST_FIELD, WITH_SCORES_FIELD = "n_best", "with_scores"
OPTION_FIELDS = frozenset({N_BEST_FIELD, WITH_SCORES_FIELD})
HYPOTHESES, CONFIDENCE = "hypotheses", "confidence"

# Runs a signature on named columns (``{input name: texts}``): the service's ``run``.
RunSignature = Callable[[Signature, Mapping[str, list[str]]], Awaitable[Mapping[str, np.ndarray]]]


@dataclasses.dataclass(frozen=True)
class RowOptions:
    """The options of one row: ``n_best`` hypotheses (None: not asked), ``with_scores``."""

    n_best: int | None = None
    with_scores: bool = False

    @property
    def signature(self) -> str:
        """The export contract's signature that answers the row."""
        if self.n_best is not None:
            return N_BEST
        return SCORED if self.with_scores else SERVING_DEFAULT


def row_options(payload: object, columnar: bool) -> list[RowOptions] | None:
    """Each row's options from a request's ``instances`` (``payload``), or None when no row
    asks for any; 400 for a bad value, or for options in columnar format (``inputs``).

    Example:
        >>> row_options(["Ja", {"text": "Nein", "n_best": 2}], columnar=False)
        [RowOptions(n_best=None, with_scores=False), RowOptions(n_best=2, with_scores=False)]
    """
    if columnar:
        if isinstance(payload, dict) and OPTION_FIELDS & set(payload):
            raise bad_request(
                f"{', '.join(sorted(OPTION_FIELDS & set(payload)))}: options are given per row, "
                "in row format ('instances')"
            )
        return None
    if not isinstance(payload, list):
        return None  # the columns' parser names the error
    options = [_options(row, f"instances[{index}]") for index, row in enumerate(payload)]
    return options if any(option != RowOptions() for option in options) else None


def _options(row: object, where: str) -> RowOptions:
    if not isinstance(row, dict):
        return RowOptions()
    n_best = row.get(N_BEST_FIELD)
    if n_best is not None and (isinstance(n_best, bool) or not isinstance(n_best, int)):
        raise bad_request(f"{where}.{N_BEST_FIELD} must be a positive integer, not {n_best!r}")
    with_scores = row.get(WITH_SCORES_FIELD, False)
    if not isinstance(with_scores, bool):
        raise bad_request(f"{where}.{WITH_SCORES_FIELD} must be true or false, not {with_scores!r}")
    try:
        if n_best is not None:
            TranslationRequest(n_best=n_best)
    except RequestError as error:
        raise bad_request(f"{where}: {error}") from None
    return RowOptions(n_best, with_scores)


async def predict_rows(
    model: ServedModel,
    signature: Signature,
    columns: Mapping[str, list[str]],
    options: Sequence[RowOptions],
    run: RunSignature,
) -> list[object]:
    """Each row's prediction, its rows run by the signature their options ask for (all at once).

    Example:
        >>> await predict_rows(model, model.signature("serving_default"), {"text": ["Ja"]},
        ...                    [RowOptions(with_scores=True)], service_run)
        [{'translation': 'Yes.', 'score': -0.2, 'log_prob': -0.3, 'length': 3, 'confidence': 0.9}]
    """
    if signature.name != SERVING_DEFAULT:
        raise bad_request(
            f"{', '.join(sorted(OPTION_FIELDS))} are options of {SERVING_DEFAULT}'s rows, not of "
            f"the signature {signature.name}"
        )
    rows_by_signature: dict[str, list[int]] = {}
    for row, option in enumerate(options):
        rows_by_signature.setdefault(option.signature, []).append(row)
    _check(model, options, rows_by_signature)
    names = list(rows_by_signature)
    outputs = await asyncio.gather(
        *(run(model.signature(name), _rows(columns, rows_by_signature[name])) for name in names)
    )
    predictions: list[object] = [None] * len(options)
    for name, output in zip(names, outputs, strict=True):
        for position, row in enumerate(rows_by_signature[name]):
            predictions[row] = _prediction(output, position, options[row])
    return predictions


def _rows(columns: Mapping[str, list[str]], rows: list[int]) -> dict[str, list[str]]:
    return {name: [column[row] for row in rows] for name, column in columns.items()}


def _check(
    model: ServedModel, options: Sequence[RowOptions], rows_by_signature: Mapping[str, list[int]]
) -> None:
    """400s, before anything runs, for a model without the signatures asked for and for more
    hypotheses than its beam keeps."""
    for name in rows_by_signature:
        if name not in model.signatures:
            raise bad_request(
                f"model {model.name} has no {name} signature, which the options "
                f"{', '.join(sorted(OPTION_FIELDS))} need: export it again with this version's "
                "export.py"
            )
    for row, option in enumerate(options):
        if option.n_best is not None:
            try:
                TranslationRequest(n_best=option.n_best).hypotheses_count(model.beam_size or 1)
            except RequestError as error:
                raise bad_request(f"instances[{row}]: {error}") from None


def _prediction(outputs: Mapping[str, np.ndarray], row: int, option: RowOptions) -> object:
    """Row ``row`` of a signature's outputs as the prediction ``option`` asks for."""
    if option == RowOptions():
        return _text(outputs[TRANSLATION][row])
    texts, scores = outputs[TRANSLATION][row], outputs[SCORE][row]
    log_probs, lengths = outputs[LOG_PROB][row], outputs[LENGTH][row]
    prediction: dict[str, object] = {TRANSLATION: _text(texts[0])}
    if option.with_scores:
        prediction.update(_hypothesis(texts[0], scores[0], log_probs[0], lengths[0]))
    if option.n_best is not None:
        prediction[HYPOTHESES] = [
            _hypothesis(*values)
            for values in list(zip(texts, scores, log_probs, lengths, strict=True))[: option.n_best]
            if values[3] > 0  # a hypothesis the search never finished is left out
        ]
    return prediction


def _hypothesis(text: bytes, score: float, log_prob: float, length: int) -> dict[str, object]:
    """A hypothesis' JSON fields; its numbers ``null`` when the search never finished it."""
    if length == 0:
        return {TRANSLATION: _text(text), SCORE: None, LOG_PROB: None, LENGTH: 0, CONFIDENCE: None}
    hypothesis = Hypothesis(_text(text), float(score), float(log_prob), int(length))
    return {
        TRANSLATION: hypothesis.text,
        SCORE: hypothesis.score,
        LOG_PROB: hypothesis.log_prob,
        LENGTH: hypothesis.length,
        CONFIDENCE: hypothesis.confidence,
    }


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", errors="replace")
