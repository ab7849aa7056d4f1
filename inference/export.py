"""A work directory's translator (or classifier: :func:`export_classifier`) as a SavedModel,
written through :mod:`exports.contract`.

SentencePiece tokenization, beam search and detokenization run inside the SavedModel, so
serving it needs TensorFlow and ``tensorflow_text`` (for the SentencePiece ops) and nothing of
this project; :class:`exports.saved_model.SavedModelTranslator` reads it. Its signatures,
inputs, outputs and variables are the contract's: ``serving_default`` (and ``cross_attention``
for one model, not an ensemble; the demo page of ``serve.py`` draws it) takes ``text``, and a
multilingual model's also ``target_lang``. Inputs longer than the model's ``data.max_length``
tokens are truncated to it (the CLI warns about that; the SavedModel does not).
"""

from __future__ import annotations

import os

import tensorflow as tf

from common.files import atomic_directory
from decoding.ensemble import Ensemble
from decoding.translator import ModelTranslator
from exports.contract import (
    ALIGNMENT,
    ATTENTION,
    BEAM_SIZE_VARIABLE,
    CONSTRAINED,
    CROSS_ATTENTION,
    FORCED_SCORE,
    FORCED_SCORE_OUTPUTS,
    LABEL,
    LABELS_VARIABLE,
    LANGUAGES_VARIABLE,
    MAX_LENGTH_VARIABLE,
    MAX_SOURCE_LENGTH_VARIABLE,
    MORE_INPUTS,
    N_BEST,
    PIECES,
    PRECISION_VARIABLE,
    PREFIXED,
    SCORE,
    SCORED,
    SCORED_OUTPUTS,
    SERVING_DEFAULT,
    SHORTLIST_VARIABLES,
    SOURCE_LENGTHS,
    SOURCE_PIECES,
    TARGET_LANG,
    TARGET_PIECES,
    TEXT,
    TEXT_ATTENTION,
    TRANSLATION,
)
from inference.classifier import Classifier

# The signatures translate and classify; nothing differentiates them. Saving gradients would
# trace one for each custom-gradient function in the graph. Without them, and with the
# signatures traced without autograph, the tiny model's export takes 5.6 s, not 7.3 s
# (docs/PERFORMANCE.md).
_SAVE_OPTIONS = tf.saved_model.SaveOptions(experimental_custom_gradients=False)


def export_saved_model(translator: ModelTranslator, output_dir: str) -> str:
    """Writes ``translator`` as a SavedModel to ``output_dir`` atomically.

    The SavedModel is written next to ``output_dir`` and renamed into place only when complete;
    an existing ``output_dir`` is replaced. A write the file system refuses (a full disk, a
    read-only directory) raises a StorageError naming ``output_dir``, which stays as it was.

    Example:
        >>> translator, _ = load_translator("/tmp/run")
        >>> export_saved_model(translator, "/tmp/run/saved_model")
    """
    export = tf.Module()
    # What the signatures read: the model's variables and the SentencePiece model. Not the
    # translator itself, whose graph functions the save would trace once more.
    export.model, export.tokenizer = translator.model, translator.tokenizer
    setattr(export, SHORTLIST_VARIABLES, translator.shortlist_variables)
    setattr(export, SOURCE_LENGTHS, translator.source_token_counts)
    variables = {
        BEAM_SIZE_VARIABLE: translator.beam_size,
        MAX_SOURCE_LENGTH_VARIABLE: translator.max_source_length,
        PRECISION_VARIABLE: translator.precision,
    }
    if translator.languages:
        variables[LANGUAGES_VARIABLE] = list(translator.languages)
    for name, value in variables.items():
        setattr(export, name, tf.Variable(value, trainable=False, name=name))

    # The directory is claimed before the signatures are traced (seconds, tens of seconds for
    # a large model): one that cannot be written fails at once.
    with atomic_directory(output_dir) as staging:
        signatures = {
            SERVING_DEFAULT: _signature(translator, _translation),
            SCORED: _signature(translator, _scored),
            N_BEST: _signature(translator, _n_best),
            FORCED_SCORE: _signature(translator, _forced_score, FORCED_SCORE),
            PREFIXED: _signature(translator, _prefixed, PREFIXED),
            ALIGNMENT: _signature(translator, _alignment, ALIGNMENT),
            CONSTRAINED: _signature(translator, _constrained, CONSTRAINED),
        }
        if not isinstance(translator.model, Ensemble):  # an ensemble has no one attention to show
            signatures[CROSS_ATTENTION] = _signature(translator, _cross_attention)
        tf.saved_model.save(export, staging, signatures=signatures, options=_SAVE_OPTIONS)
    return os.path.abspath(output_dir)


def _translation(translator: ModelTranslator, text: tf.Tensor, target_lang: tf.Tensor) -> dict:
    return {TRANSLATION: translator.translate_batch(text, target_lang)}


def _scored(translator: ModelTranslator, text: tf.Tensor, target_lang: tf.Tensor) -> dict:
    return dict(zip(SCORED_OUTPUTS, translator.scored_batch(text, target_lang), strict=True))


def _n_best(translator: ModelTranslator, text: tf.Tensor, target_lang: tf.Tensor) -> dict:
    return dict(zip(SCORED_OUTPUTS, translator.n_best_batch(text, target_lang), strict=True))


def _cross_attention(
    translator: ModelTranslator, text: tf.Tensor, target_lang: tf.Tensor
) -> dict[str, tf.Tensor]:
    outputs = translator.cross_attention(text, target_lang)
    return {
        TRANSLATION: outputs.translation,
        SOURCE_PIECES: outputs.source_pieces,
        TARGET_PIECES: outputs.target_pieces,
        ATTENTION: outputs.attention,
    }


def _signature(
    translator: ModelTranslator, outputs, name: str = SERVING_DEFAULT
) -> tf.types.experimental.ConcreteFunction:
    """The concrete function of signature ``name`` with the contract's inputs: ``text``,
    ``target_lang`` for a multilingual model (the graph checks and tags it), and the string
    columns ``name`` takes besides (:data:`~exports.contract.MORE_INPUTS`), passed to
    ``outputs(translator, text, target_lang, *more)`` in that order."""
    text = tf.TensorSpec([None], tf.string, name=TEXT)
    more = [tf.TensorSpec([None], tf.string, name=column) for column in MORE_INPUTS.get(name, ())]
    if translator.languages:
        target_lang = tf.TensorSpec([None], tf.string, name=TARGET_LANG)
        function = tf.function(
            lambda text, target_lang, *more: outputs(translator, text, target_lang, *more),
            autograph=False,
        )
        return function.get_concrete_function(text, target_lang, *more)
    function = tf.function(
        lambda text, *more: outputs(translator, text, tf.fill(tf.shape(text), ""), *more),
        autograph=False,
    )
    return function.get_concrete_function(text, *more)


def _forced_score(
    translator: ModelTranslator, text: tf.Tensor, target_lang: tf.Tensor, target: tf.Tensor
) -> dict:
    scores = translator.score_targets(text, target_lang, target)
    return dict(zip(FORCED_SCORE_OUTPUTS, scores, strict=True))


def _alignment(
    translator: ModelTranslator, text: tf.Tensor, target_lang: tf.Tensor, target: tf.Tensor
) -> dict:
    aligned = translator.align_targets(text, target_lang, target)
    return {
        SOURCE_PIECES: aligned.source_pieces,
        TARGET_PIECES: aligned.target_pieces,
        ATTENTION: aligned.attention,
    }


def _prefixed(
    translator: ModelTranslator, text: tf.Tensor, target_lang: tf.Tensor, target_prefix: tf.Tensor
) -> dict:
    return {TRANSLATION: translator.prefixed_batch(text, target_lang, target_prefix)}


def _constrained(
    translator: ModelTranslator,
    text: tf.Tensor,
    target_lang: tf.Tensor,
    target_prefix: tf.Tensor,
    terms: tf.Tensor,
    avoid: tf.Tensor,
) -> dict:
    constrained = translator.constrained(1)(text, target_lang, target_prefix, terms, avoid)
    return dict(zip(SCORED_OUTPUTS, constrained, strict=True))


def export_classifier(classifier: Classifier, output_dir: str) -> str:
    """Writes ``classifier`` as a SavedModel to ``output_dir`` atomically (as
    :func:`export_saved_model`): the contract's ``serving_default`` and ``text_attention``
    signatures (tokenization in the graph) and its ``labels_variable`` and
    ``max_length_variable``.

    Example:
        >>> classifier, _ = load_classifier("runs/spam")
        >>> export_classifier(classifier, "runs/spam/saved_model")
    """
    export = tf.Module()
    export.model, export.tokenizer = classifier.model, classifier.tokenizer
    setattr(export, LABELS_VARIABLE, tf.Variable(list(classifier.labels), trainable=False))
    setattr(export, MAX_LENGTH_VARIABLE, tf.Variable(classifier.max_length, trainable=False))
    text = tf.TensorSpec([None], tf.string, name=TEXT)

    def label_and_score(text: tf.Tensor) -> dict[str, tf.Tensor]:
        classified = classifier.classify_texts(text)
        return {LABEL: classified["label"], SCORE: classified["score"]}

    def with_attention(text: tf.Tensor) -> dict[str, tf.Tensor]:
        attended = classifier.attend(text)
        return {
            **label_and_score(text),
            PIECES: attended["pieces"],
            ATTENTION: attended["attention"],
        }

    functions = {SERVING_DEFAULT: label_and_score, TEXT_ATTENTION: with_attention}
    with atomic_directory(output_dir) as staging:  # claimed first, as export_saved_model's
        signatures = {
            name: tf.function(function, autograph=False).get_concrete_function(text)
            for name, function in functions.items()
        }
        tf.saved_model.save(export, staging, signatures=signatures, options=_SAVE_OPTIONS)
    return os.path.abspath(output_dir)
