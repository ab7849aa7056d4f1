"""Translating with an exported SavedModel (``inference.export``): a Translator.

It reads the export through :mod:`exports.contract` alone (signatures, inputs and variables by
name) and runs on TensorFlow and ``tensorflow_text`` (the SentencePiece ops the graph uses):
nothing of the model's code, the data pipeline or TensorFlow Datasets is loaded. A multilingual
export's target language is checked against its ``languages_variable`` before the graph runs,
with the message of every other runtime; the graph adds the tag.

An export of an earlier version, without a part today's have (``exports.contract.ADDED_IN``),
is refused with one line naming the commit that added it: export it again.

Example:
    >>> SavedModelTranslator("runs/de_en/saved_model").translate(["Ein Hund rennt."])
    ['A dog is running.']
"""

from __future__ import annotations

from collections.abc import Sequence

import tensorflow as tf

from common.alignment import Alignment, alignments_of
from common.errors import UserError
from common.translation import (
    Hypothesis,
    RequestError,
    Terms,
    TranslationRequest,
    hypotheses_rows,
    pairs_in_batches,
    scored_targets,
    translate_in_batches,
)
from exports.contract import (
    ADDED_IN,
    ALIGNMENT,
    AVOID,
    BEAM_SIZE_VARIABLE,
    CONSTRAINED,
    FORCED_SCORE,
    FORCED_SCORE_OUTPUTS,
    LANGUAGES_VARIABLE,
    MAX_SOURCE_LENGTH_VARIABLE,
    N_BEST,
    PREFIXED,
    SCORED,
    SCORED_OUTPUTS,
    SERVING_DEFAULT,
    SIGNATURE_OUTPUTS,
    SOURCE_LENGTHS,
    TARGET,
    TARGET_LANG,
    TARGET_PREFIX,
    TERMS,
    TEXT,
    TOKEN_LOG_PROBS,
    TRANSLATION,
)


def require_saved_model(path: str) -> None:
    """A FileNotFoundError saying how to write one, unless ``path`` holds a SavedModel.

    Example:
        >>> require_saved_model("/nowhere")
        Traceback (most recent call last):
        FileNotFoundError: No SavedModel in /nowhere; write one with export.py.
    """
    if not tf.saved_model.contains_saved_model(path):
        raise FileNotFoundError(f"No SavedModel in {path}; write one with export.py.")


class SavedModelTranslator:
    """A :class:`~common.translation.Translator` over an exported SavedModel.

    Args:
        path: the SavedModel's directory (``export.py --output``).

    Example:
        >>> SavedModelTranslator("/tmp/run/saved_model").beam_size
        4
    """

    def __init__(self, path: str) -> None:
        import tensorflow_text  # noqa: F401  (registers the SentencePiece ops the graph uses)

        require_saved_model(path)
        self.loaded = tf.saved_model.load(path)
        check_version(self.loaded, path)
        self.serve = self.loaded.signatures[SERVING_DEFAULT]
        self.max_source_length = int(getattr(self.loaded, MAX_SOURCE_LENGTH_VARIABLE).numpy())
        if hasattr(self.loaded, LANGUAGES_VARIABLE):
            values = getattr(self.loaded, LANGUAGES_VARIABLE).numpy()
            self.languages = tuple(language.decode() for language in values)
        else:
            self.languages = ()

    @property
    def beam_size(self) -> int:
        return int(getattr(self.loaded, BEAM_SIZE_VARIABLE).numpy())

    def translate(
        self,
        sentences: Sequence[str],
        request: TranslationRequest = TranslationRequest(),
        batch_size: int = 64,
        progress: bool = True,
    ) -> list[str]:
        language = request.language(self.languages)
        if request.sampling is not None:
            raise RequestError(
                "A SavedModel translates with the search it was exported with; sample with the "
                "work directory (--workdir) or a CTranslate2 export (--ctranslate2)."
            )

        prefixes = request.prefixes(sentences)
        if request.sentence_terms(sentences) is not None:
            rows = self.hypotheses(sentences, request, batch_size, progress)
            return [row[0].text if row else "" for row in rows]
        serve = self.serve if prefixes is None else self._signature(PREFIXED)

        def translate_rows(rows: list[int]) -> list[str]:
            inputs = self._inputs([sentences[row] for row in rows], language)
            if prefixes is not None:
                inputs[TARGET_PREFIX] = tf.constant([prefixes[row] for row in rows], tf.string)
            outputs = serve(**inputs)[TRANSLATION]
            return [output.decode("utf-8", errors="replace") for output in outputs.numpy()]

        return translate_in_batches(translate_rows, sentences, batch_size, progress)

    def hypotheses(
        self,
        sentences: Sequence[str],
        request: TranslationRequest = TranslationRequest(),
        batch_size: int = 64,
        progress: bool = True,
    ) -> list[list[Hypothesis]]:
        """Each sentence's ``request.n_best`` best translations with their scores, from the
        export's ``scored`` (one) or ``n_best`` signature; with terms, the one translation of
        its ``constrained`` signature."""
        language = request.language(self.languages)
        n_best = request.hypotheses_count(self.beam_size)
        terms = request.sentence_terms(sentences)
        if terms is not None:
            return self._constrained(sentences, request, language, terms, batch_size, progress)
        if request.prefixes(sentences) is not None or request.return_alternatives:
            raise RequestError(
                "A SavedModel continues target prefixes without scores (its 'prefixed' "
                "signature) and has no alternatives; for scored, n-best or alternative "
                "translations of a prefix use the work directory (--workdir) or a CTranslate2 "
                "export (--ctranslate2)."
            )
        signature = self._signature(SCORED if n_best == 1 else N_BEST)

        def translate_rows(rows: list[int]) -> list[list[Hypothesis]]:
            outputs = signature(**self._inputs([sentences[row] for row in rows], language))
            columns = {name: outputs[name].numpy().tolist() for name in outputs}
            return hypotheses_rows(*(columns[name] for name in SCORED_OUTPUTS), n_best=n_best)

        return translate_in_batches(translate_rows, sentences, batch_size, progress)

    def _constrained(
        self,
        sentences: Sequence[str],
        request: TranslationRequest,
        language: str | None,
        terms: list[Terms],
        batch_size: int,
        progress: bool,
    ) -> list[list[Hypothesis]]:
        """Each sentence's translation with its terms placed (from its prefix), scored."""
        if request.n_best > 1:
            raise RequestError(
                "A SavedModel gives one translation with terms (its 'constrained' signature); "
                "for n-best lists with terms use the work directory (--workdir)."
            )
        signature = self._signature(CONSTRAINED)
        prefixes = request.prefixes(sentences)

        def translate_rows(rows: list[int]) -> list[list[Hypothesis]]:
            inputs = self._inputs([sentences[row] for row in rows], language)
            prefix = [""] * len(rows) if prefixes is None else [prefixes[row] for row in rows]
            inputs[TARGET_PREFIX] = tf.constant(prefix, tf.string, shape=[len(rows)])
            required, avoided = zip(*(terms[row].lines() for row in rows), strict=True)
            inputs[TERMS] = tf.constant(list(required), tf.string)
            inputs[AVOID] = tf.constant(list(avoided), tf.string)
            outputs = signature(**inputs)
            columns = {name: outputs[name].numpy().tolist() for name in outputs}
            return hypotheses_rows(*(columns[name] for name in SCORED_OUTPUTS), n_best=1)

        return translate_in_batches(translate_rows, sentences, batch_size, progress)

    def score(
        self,
        sources: Sequence[str],
        targets: Sequence[str],
        request: TranslationRequest = TranslationRequest(),
        batch_size: int = 64,
        progress: bool = True,
    ) -> list[Hypothesis]:
        """Forced decoding with the export's ``forced_score`` signature."""
        language = request.language(self.languages)
        signature = self._signature(FORCED_SCORE)

        def score_batch(batch_sources: list[str], batch_targets: list[str]) -> list[Hypothesis]:
            outputs = signature(**self._pair_inputs(batch_sources, batch_targets, language))
            columns = [outputs[output].numpy().tolist() for output in FORCED_SCORE_OUTPUTS]
            return scored_targets(batch_targets, *columns)

        return pairs_in_batches(score_batch, sources, targets, batch_size, progress, "score")

    def align(
        self,
        sources: Sequence[str],
        targets: Sequence[str],
        request: TranslationRequest = TranslationRequest(),
        batch_size: int = 64,
        progress: bool = True,
    ) -> list[Alignment]:
        """Word alignments from the export's ``alignment`` signature."""
        language = request.language(self.languages)
        signature = self._signature(ALIGNMENT)

        def align_batch(batch_sources: list[str], batch_targets: list[str]) -> list[Alignment]:
            outputs = signature(**self._pair_inputs(batch_sources, batch_targets, language))
            return alignments_of(
                *(outputs[name].numpy().tolist() for name in SIGNATURE_OUTPUTS[ALIGNMENT])
            )

        return pairs_in_batches(align_batch, sources, targets, batch_size, progress, "align")

    def _signature(self, name: str):
        """The export's signature ``name``; a RequestError naming what to do when an export
        of an earlier version lacks it."""
        if name not in self.loaded.signatures:
            raise RequestError(
                f"This SavedModel has no '{name}' signature (it was exported by an earlier "
                "version): export it again with export.py."
            )
        return self.loaded.signatures[name]

    def source_lengths(
        self, sentences: Sequence[str], request: TranslationRequest = TranslationRequest()
    ) -> list[int]:
        """Each sentence's token count (without EOS) as the model reads it (tag included)."""
        language = request.language(self.languages)
        if not sentences:
            return []
        text = tf.constant(list(sentences), tf.string)
        target_lang = tf.fill([len(sentences)], language or "")
        return getattr(self.loaded, SOURCE_LENGTHS)(text, target_lang).numpy().tolist()

    def _pair_inputs(
        self, sources: list[str], targets: list[str], language: str | None
    ) -> dict[str, tf.Tensor]:
        """The inputs of a signature that takes ``target`` besides the sources."""
        return {**self._inputs(sources, language), TARGET: tf.constant(targets, tf.string)}

    def _inputs(self, batch: list[str], language: str | None) -> dict[str, tf.Tensor]:
        """The signature's inputs by name: ``text``, and a multilingual export's
        ``target_lang`` (the same, checked language for every row)."""
        inputs = {TEXT: tf.constant(batch, tf.string)}
        if language is not None:
            inputs[TARGET_LANG] = tf.fill([len(batch)], language)
        return inputs


class EarlierExportError(UserError, ValueError):
    """An export of an earlier version: the message names what it lacks and what to do."""


def check_version(loaded, path: str) -> None:
    """An EarlierExportError unless the loaded SavedModel of this project at ``path`` has every
    part of today's exports (``exports.contract.ADDED_IN``).

    Example:
        >>> check_version(tf.saved_model.load("/tmp/run/saved_model"), "/tmp/run/saved_model")
    """
    source_lengths = getattr(loaded, SOURCE_LENGTHS, None)
    scored = loaded.signatures.get(SCORED)
    lacking = {  # each part of ADDED_IN: whether it lacks it, and how to say what it is
        MAX_SOURCE_LENGTH_VARIABLE: (
            not hasattr(loaded, MAX_SOURCE_LENGTH_VARIABLE),
            MAX_SOURCE_LENGTH_VARIABLE,
        ),
        SOURCE_LENGTHS: (
            source_lengths is None
            or len(source_lengths.concrete_functions[0].structured_input_signature[0]) != 2,
            f"the {TARGET_LANG} input of {SOURCE_LENGTHS}",
        ),
        TOKEN_LOG_PROBS: (
            scored is not None and TOKEN_LOG_PROBS not in scored.structured_outputs,
            f"{TOKEN_LOG_PROBS} among the outputs of '{SCORED}'",
        ),
    }
    for part, commit in ADDED_IN.items():
        lacks, what = lacking[part]
        if lacks:
            raise EarlierExportError(
                f"{path} was exported by a version before {commit}, which added {what}: export "
                "it again with export.py from its work directory (or read it with that version)."
            )
