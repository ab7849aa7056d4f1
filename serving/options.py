"""Per-instance translation options of ``:predict`` rows: ``n_best``, ``with_scores``,
``target_prefix``, ``alignments``, ``sampling`` and ``document``.

Beyond TensorFlow Serving (whose rows carry a signature's inputs only): a row of
``serving_default`` in row format may also carry the options of its translation, and the rows of
one request may differ:

* ``"with_scores": true``: the row's prediction is an object, the translation and what the model
  thinks of it: ``translation``, ``score``, ``log_prob``, ``length``, ``confidence`` and
  ``token_log_probs`` (:meth:`common.translation.Hypothesis.fields`);
* ``"n_best": N`` (1 to the model's beam size): the object has ``translation`` and
  ``hypotheses``, the N best translations, best first, each an object of those fields (fewer
  when the search finished fewer);
* ``"target_prefix": "A dog"``: the translation starts with it and the search goes on from
  there (not with ``n_best`` or ``with_scores``: the export contract's ``prefixed`` signature
  gives translations only);
* ``"alignments": "hard"`` or ``"soft"``: the object (and each of its ``hypotheses``) has an
  ``alignment`` with the source: Pharaoh links (``"0-0 1-2"``) or the soft alignment's pieces and
  ``attention`` (:meth:`common.alignment.Alignment.fields`);
* ``"sampling": {"top_k": 10, "top_p": 1.0, "temperature": 1.0, "seed": 0}`` (any of them): the
  translation is sampled (:class:`common.translation.Sampling`), by a model whose runtime samples
  (a CTranslate2 export; a SavedModel translates with the search it was exported with); not with
  ``n_best``, ``with_scores`` or ``target_prefix``. The rows of one request with the same
  settings are sampled together: the same request gives the same samples;
* ``"terms": ["a hound"]`` and ``"avoid": ["dog"]`` (either): the translation holds every term
  and no avoided phrase (constrained beam search; the export contract's ``constrained``
  signature, whose one translation ``with_scores`` scores, from a ``target_prefix`` if given);
  not with ``n_best`` over 1, ``sampling`` or ``document``; a CTranslate2 export avoids
  phrases but places no terms (a 400);
* ``"document": true`` (and ``"source_lang": "de"``, the source's language for sentence
  splitting, ``en`` by default): the text is running text, translated sentence by sentence into
  one string with its spaces, line breaks and blank lines kept (:mod:`common.documents`; a
  sentence longer than the model reads is cut first); not with the other options. Its text is
  bounded by ``--max_body_bytes``, not ``--max_sentence_chars``. ``"html": true``: the text is
  HTML, its tags placed in the translation by the ``alignment`` signature's word alignments
  (:mod:`common.markup`).

A row without options gets what ``serving_default`` gives it, the translation as a string. Its
rows run through ``serving_default`` (batched with other requests' rows), the others through the
export contract's ``scored``, ``n_best``, ``prefixed`` and ``constrained`` signatures, then
the ``alignment`` signature for the rows that ask for alignments. A bad value, an option in
columnar format or on another signature, and a model without the signatures needed are 400s.

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

from common.alignment import alignments_of
from common.documents import Document, split_document
from common.markup import Markup, place_markup
from common.translation import (
    RequestError,
    Sampling,
    Terms,
    TranslationRequest,
    hypotheses_rows,
)
from exports.contract import (
    ALIGNMENT,
    ATTENTION,
    AVOID,
    CONSTRAINED,
    LENGTH,
    LOG_PROB,
    N_BEST,
    PREFIXED,
    SCORE,
    SCORED,
    SERVING_DEFAULT,
    SOURCE_PIECES,
    TARGET,
    TARGET_LANG,
    TARGET_PIECES,
    TARGET_PREFIX,
    TERMS,
    TEXT,
    TOKEN_LOG_PROBS,
    TRANSLATION,
)
from serving.errors import bad_request
from serving.registry import SAMPLED, ServedModel, Signature

# The option fields of a row, and the fields the options add to its prediction (beside
# Hypothesis.fields()).
N_BEST_FIELD, WITH_SCORES_FIELD = "n_best", "with_scores"
TARGET_PREFIX_FIELD, ALIGNMENTS_FIELD, SAMPLING_FIELD = TARGET_PREFIX, "alignments", "sampling"
DOCUMENT_FIELD, SOURCE_LANG_FIELD, HTML_FIELD = "document", "source_lang", "html"
TERMS_FIELD, AVOID_FIELD = TERMS, AVOID
OPTION_FIELDS = frozenset(
    {
        TERMS_FIELD,
        AVOID_FIELD,
        N_BEST_FIELD,
        WITH_SCORES_FIELD,
        TARGET_PREFIX_FIELD,
        ALIGNMENTS_FIELD,
        SAMPLING_FIELD,
        DOCUMENT_FIELD,
        SOURCE_LANG_FIELD,
        HTML_FIELD,
    }
)
SAMPLING_SETTINGS = tuple(field.name for field in dataclasses.fields(Sampling))
ALIGNMENT_KINDS = ("hard", "soft")
HYPOTHESES, CONFIDENCE, ALIGNMENT_FIELD = "hypotheses", "confidence", "alignment"

# Runs a signature on named columns (``{input name: texts}``): the service's ``run``.
RunSignature = Callable[[Signature, Mapping[str, list[str]]], Awaitable[Mapping[str, np.ndarray]]]


@dataclasses.dataclass(frozen=True)
class RowOptions:
    """The options of one row: ``n_best`` hypotheses (None: not asked), ``with_scores``, the
    ``target_prefix`` its translation starts with, its ``alignments`` (hard, soft or None) and
    its ``sampling``; a ``document``'s ``source_lang`` and ``html``; its ``terms`` (required
    and avoided)."""

    n_best: int | None = None
    with_scores: bool = False
    target_prefix: str | None = None
    alignments: str | None = None
    sampling: Sampling | None = None
    document: bool = False
    source_lang: str = "en"
    terms: Terms | None = None
    html: bool = False

    @property
    def signature(self) -> str:
        """The signature that answers the row (its translation): the export contract's, or the
        model's sampler's."""
        if self.sampling is not None:
            return SAMPLED
        if self.terms is not None:
            return CONSTRAINED
        if self.n_best is not None:
            return N_BEST
        if self.with_scores:
            return SCORED
        return SERVING_DEFAULT if self.target_prefix is None else PREFIXED

    @property
    def run_key(self) -> str | Sampling:
        """What rows run together: those of one signature (sampled rows: of one setting)."""
        return self.signature if self.sampling is None else self.sampling


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
    if n_best is not None:
        try:
            TranslationRequest(n_best=n_best)  # the request's own check: a positive integer
        except RequestError as error:
            raise bad_request(f"{where}: {error}") from None
    terms = _terms(row, where)
    if terms is not None and (n_best or 1) > 1:
        raise bad_request(
            f"{where}: a translation with {TERMS_FIELD} comes alone (the '{CONSTRAINED}' "
            f"signature): drop {N_BEST_FIELD}"
        )
    target_prefix = row.get(TARGET_PREFIX_FIELD)
    if target_prefix is not None and not isinstance(target_prefix, str):
        raise bad_request(f"{where}.{TARGET_PREFIX_FIELD} must be a string, not {target_prefix!r}")
    if target_prefix is not None and (n_best is not None or with_scores) and terms is None:
        raise bad_request(
            f"{where}: a {TARGET_PREFIX_FIELD} is continued without scores: drop {N_BEST_FIELD} "
            f"and {WITH_SCORES_FIELD}, or the prefix"
        )
    alignments = row.get(ALIGNMENTS_FIELD)
    if alignments is not None and alignments not in ALIGNMENT_KINDS:
        raise bad_request(
            f"{where}.{ALIGNMENTS_FIELD} must be one of {', '.join(ALIGNMENT_KINDS)}, not "
            f"{alignments!r}"
        )
    sampling = _sampling(row.get(SAMPLING_FIELD), where)
    others = [n_best is not None, with_scores, target_prefix is not None, terms is not None]
    if sampling is not None and any(others):
        raise bad_request(
            f"{where}: a sampled translation comes alone: drop {N_BEST_FIELD}, "
            f"{WITH_SCORES_FIELD}, {TARGET_PREFIX_FIELD} and {TERMS_FIELD}, or {SAMPLING_FIELD}"
        )
    document = row.get(DOCUMENT_FIELD, False)
    if not isinstance(document, bool):
        raise bad_request(f"{where}.{DOCUMENT_FIELD} must be true or false, not {document!r}")
    source_lang = row.get(SOURCE_LANG_FIELD, "en")
    if not isinstance(source_lang, str) or not source_lang:
        raise bad_request(
            f"{where}.{SOURCE_LANG_FIELD} must be a language code, not {source_lang!r}"
        )
    html = row.get(HTML_FIELD, False)
    if not isinstance(html, bool):
        raise bad_request(f"{where}.{HTML_FIELD} must be true or false, not {html!r}")
    for field in (SOURCE_LANG_FIELD, HTML_FIELD):
        if field in row and not document:
            raise bad_request(f'{where}.{field} goes with "{DOCUMENT_FIELD}": true')
    others = [n_best is not None, with_scores, target_prefix, alignments, sampling, terms]
    if document and any(value not in (None, False) for value in others):
        raise bad_request(
            f"{where}: a {DOCUMENT_FIELD} comes back as one text: drop {N_BEST_FIELD}, "
            f"{WITH_SCORES_FIELD}, {TARGET_PREFIX_FIELD}, {ALIGNMENTS_FIELD}, {SAMPLING_FIELD} "
            f"and {TERMS_FIELD}"
        )
    return RowOptions(
        n_best, with_scores, target_prefix, alignments, sampling, document, source_lang, terms, html
    )


def _terms(row: dict, where: str) -> Terms | None:
    """A row's ``terms`` and ``avoid`` as its :class:`Terms` (None without either; 400s
    naming a bad one)."""
    fields = {name: row[name] for name in (TERMS_FIELD, AVOID_FIELD) if name in row}
    if not fields:
        return None
    try:
        return Terms.from_fields(fields) or None
    except RequestError as error:
        raise bad_request(f"{where}: {error}") from None


def _sampling(value: object, where: str) -> Sampling | None:
    """A row's ``sampling`` object as a :class:`Sampling` (400s naming a bad setting)."""
    if value is None:
        return None
    if not isinstance(value, dict) or not set(value) <= set(SAMPLING_SETTINGS):
        raise bad_request(
            f"{where}.{SAMPLING_FIELD} must be an object of any of {', '.join(SAMPLING_SETTINGS)}"
            f", not {value!r}"
        )
    try:
        return Sampling(**value)
    except (RequestError, TypeError) as error:
        raise bad_request(f"{where}.{SAMPLING_FIELD}: {error}") from None


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
        [{'translation': 'Yes.', 'score': -0.2, 'log_prob': -0.3, 'length': 3, 'confidence': 0.9,
          'token_log_probs': [-0.1, -0.1, -0.1]}]
    """
    if signature.name != SERVING_DEFAULT:
        raise bad_request(
            f"{', '.join(sorted(OPTION_FIELDS))} are options of {SERVING_DEFAULT}'s rows, not of "
            f"the signature {signature.name}"
        )
    rows_by_run: dict[str | Sampling, list[int]] = {}
    for row, option in enumerate(options):
        if not option.document:
            rows_by_run.setdefault(option.run_key, []).append(row)
    _check(model, options)
    keys = list(rows_by_run)
    documents = [row for row, option in enumerate(options) if option.document]
    *outputs, translated = await asyncio.gather(
        *(
            run(_signature_of(model, key), _rows(columns, rows_by_run[key], options))
            for key in keys
        ),
        _translate_documents(model, columns, documents, options, run),
    )
    predictions: list[object] = [None] * len(options)
    for row, text in zip(documents, translated, strict=True):
        predictions[row] = text
    for key, output in zip(keys, outputs, strict=True):
        for position, row in enumerate(rows_by_run[key]):
            predictions[row] = _prediction(output, position, options[row])
    if any(option.alignments for option in options):
        await _add_alignments(model, columns, options, predictions, run)
    return predictions


async def _translate_documents(
    model: ServedModel,
    columns: Mapping[str, list[str]],
    rows: list[int],
    options: Sequence[RowOptions],
    run: RunSignature,
) -> list[str]:
    """Each document row translated (:func:`common.documents.split_document`): the sentences
    of all of them run through ``serving_default`` at once, each put back in its place (an
    ``html`` row's tags by the ``alignment`` signature: :func:`_place_markup`)."""
    if not rows:
        return []
    documents, markups = [], []
    for row in rows:
        language = columns[TARGET_LANG][row] if TARGET_LANG in columns else ""
        markups.append(Markup.parse(columns[TEXT][row]) if options[row].html else None)
        text = columns[TEXT][row] if markups[-1] is None else markups[-1].plain
        documents.append(split_document(text, options[row].source_lang, _too_long(model, language)))
    sentences = {TEXT: [sentence for document in documents for sentence in document.sentences]}
    if TARGET_LANG in columns:
        sentences[TARGET_LANG] = [
            columns[TARGET_LANG][row]
            for row, document in zip(rows, documents, strict=True)
            for _ in document.sentences
        ]
    translations = []
    if sentences[TEXT]:
        output = await run(model.signature(SERVING_DEFAULT), sentences)
        translations = [text.decode("utf-8", errors="replace") for text in output[TRANSLATION]]
    joined, start = [], 0
    for row, document, markup in zip(rows, documents, markups, strict=True):
        end = start + len(document.sentences)
        if markup is None:
            joined.append(document.joined(translations[start:end]))
        else:
            language = [columns[TARGET_LANG][row]] if TARGET_LANG in columns else None
            texts = (markup, document, translations[start:end], language)
            joined.append(await _place_markup(model, *texts, run))
        start = end
    return joined


async def _place_markup(
    model: ServedModel,
    markup: Markup,
    document: Document,
    translations: list[str],
    language: list[str] | None,
    run: RunSignature,
) -> str:
    """An ``html`` document's translation with its tags placed by the word alignments of its
    sentences with tags inside (:func:`common.markup.place_markup`)."""
    tagged = markup.sentences_with_tags(document)
    links = {}
    if tagged:
        aligned = {
            TEXT: [document.sentences[row] for row in tagged],
            TARGET: [translations[row] for row in tagged],
        }
        if language is not None:
            aligned[TARGET_LANG] = language * len(tagged)
        output = await run(model.signature(ALIGNMENT), aligned)
        alignments = alignments_of(
            *(output[name].tolist() for name in (SOURCE_PIECES, TARGET_PIECES, ATTENTION))
        )
        links = {row: alignment.links() for row, alignment in zip(tagged, alignments, strict=True)}
    return place_markup(markup, document, translations, links)


def _too_long(model: ServedModel, language: str) -> Callable[[list[str]], list[bool]] | None:
    """Which sentences ``model`` would truncate (into ``language``); None when it cannot say."""
    if model.source_lengths is None or model.max_source_length is None:
        return None
    limit = model.max_source_length - 1
    return lambda texts: [length > limit for length in model.source_lengths(texts, language)]


def _signature_of(model: ServedModel, key: str | Sampling) -> Signature:
    """The signature that runs the rows of ``key``: a name, or the sampler's settings."""
    return model.signature(key) if isinstance(key, str) else model.sampler(key)


def _rows(
    columns: Mapping[str, list[str]], rows: list[int], options: Sequence[RowOptions]
) -> dict[str, list[str]]:
    """The columns of ``rows`` (and, for prefixed rows, their ``target_prefix`` column)."""
    chosen = {name: [column[row] for row in rows] for name, column in columns.items()}
    if options[rows[0]].signature in (PREFIXED, CONSTRAINED):
        chosen[TARGET_PREFIX] = [options[row].target_prefix or "" for row in rows]
    if options[rows[0]].signature == CONSTRAINED:
        chosen[TERMS], chosen[AVOID] = (
            list(column)
            for column in zip(*(options[row].terms.lines() for row in rows), strict=True)
        )
    return chosen


async def _add_alignments(
    model: ServedModel,
    columns: Mapping[str, list[str]],
    options: Sequence[RowOptions],
    predictions: list[object],
    run: RunSignature,
) -> None:
    """Gives each prediction whose row asks for alignments (and each of its hypotheses) an
    ``alignment``, from one run of the ``alignment`` signature over every translation (a
    prediction with hypotheses takes its best one's, aligned once)."""
    translations = []  # (row, the object the alignment goes in)
    for row, option in enumerate(options):
        if option.alignments:
            hypotheses = predictions[row].get(HYPOTHESES) or [predictions[row]]
            translations += [(row, hypothesis) for hypothesis in hypotheses]
    rows = [row for row, _ in translations]
    aligned = {
        name: [columns[name][row] for row in rows]
        for name in (TEXT, TARGET_LANG)
        if name in columns
    }
    aligned[TARGET] = [found[TRANSLATION] for _, found in translations]
    output = await run(model.signature(ALIGNMENT), aligned)
    alignments = alignments_of(
        *(output[name].tolist() for name in (SOURCE_PIECES, TARGET_PIECES, ATTENTION))
    )
    for (row, found), alignment in zip(translations, alignments, strict=True):
        hard = options[row].alignments == "hard"
        found[ALIGNMENT_FIELD] = alignment.pharaoh() if hard else alignment.fields()
    for row, option in enumerate(options):
        if option.alignments and predictions[row].get(HYPOTHESES):
            predictions[row][ALIGNMENT_FIELD] = predictions[row][HYPOTHESES][0][ALIGNMENT_FIELD]


def _check(model: ServedModel, options: Sequence[RowOptions]) -> None:
    """400s, before anything runs, for a model without the signatures asked for (or that cannot
    sample) and for more hypotheses than its beam keeps."""
    needed = {option.signature for option in options} - {SAMPLED}
    if any(option.alignments or option.html for option in options):
        needed.add(ALIGNMENT)
    if any(option.sampling for option in options) and model.sampler is None:
        raise bad_request(
            f"model {model.name} ({model.runtime}) translates with the search it was exported "
            "with and cannot sample: serve a CTranslate2 export of it (--ctranslate2) to sample"
        )
    for name in sorted(needed):
        if name not in model.signatures:
            raise bad_request(
                f"model {model.name} has no {name} signature, which the options "
                f"{', '.join(sorted(OPTION_FIELDS))} need: export it again with this version's "
                "export.py"
            )
    for row, option in enumerate(options):
        if option.n_best is not None:
            try:
                TranslationRequest(n_best=option.n_best).hypotheses_count(model.beam_size)
            except RequestError as error:
                raise bad_request(f"instances[{row}]: {error}") from None


def _prediction(outputs: Mapping[str, np.ndarray], row: int, option: RowOptions) -> object:
    """Row ``row`` of a signature's outputs as the prediction ``option`` asks for."""
    if option.signature in (SERVING_DEFAULT, PREFIXED, SAMPLED):  # a translation a row
        translation = outputs[TRANSLATION][row].decode("utf-8", errors="replace")
    else:  # (batch, n) hypotheses, best first
        translation = outputs[TRANSLATION][row][0].decode("utf-8", errors="replace")
    if not option.with_scores and option.n_best is None:
        return {TRANSLATION: translation} if option.alignments else translation
    columns = [outputs[name][row : row + 1].tolist() for name in (SCORE, LOG_PROB, LENGTH)]
    (hypotheses,) = hypotheses_rows(
        outputs[TRANSLATION][row : row + 1].tolist(),
        *columns,
        outputs[TOKEN_LOG_PROBS][row : row + 1].tolist(),
        n_best=option.n_best or 1,
    )
    prediction: dict[str, object] = {TRANSLATION: translation}
    if option.with_scores and hypotheses:  # (a search that never finished: no scores)
        prediction |= hypotheses[0].fields()
    if option.n_best is not None:
        prediction[HYPOTHESES] = [hypothesis.fields() for hypothesis in hypotheses]
    return prediction
