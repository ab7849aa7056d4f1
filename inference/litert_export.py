"""A work directory's translator as a LiteRT (TFLite) model for phones and embedded devices.

What is converted is the search on token ids (the config's greedy or beam search and length
penalty), with LiteRT's builtin operators only: no Flex delegate (gone from TensorFlow 2.20's
wheels and from ``ai-edge-litert``), no custom op. The app tokenizes with SentencePiece
(``spm.model`` beside the model; :mod:`exports.litert` does it in Python). Three things make
the search convertible:

* the static-shape search (``decode(..., dynamic_shapes=False)``, the one XLA compiles): the
  graph search's growing cache loses its shape invariants once frozen;
* the weights frozen into constants first: converted as resource variables, the file holds no
  weights and fails inside ``WHILE`` at run time;
* no operator LiteRT lacks (``transformer.masks`` reshapes where a boolean slice with new axes
  would need Flex).

With ``text_signature`` the model also maps one sentence's text to its translation
(``translate_text``), with ``tensorflow_text``'s ``FastSentencepieceTokenizer`` ops, the only
custom operators allowed; the app registers them (``tensorflow_text.tflite_registrar``). It is
refused for what those ops cannot do: a BPE model (their pieces differ from SentencePiece's for
BPE: none of 2,000 test2016 sentences tokenized alike, all 2,000 for unigram) and a multilingual
model (a tag written in a text is made plain by a regular expression, which no builtin runs). It
takes exactly one sentence a call, a ``[1]`` tensor, because the detokenizer crashes the process
(a segmentation fault) on batches of two or more, and a builtin cannot gather the strings of a
loop over the rows; a scalar input gave wrong pieces.

The export directory is written atomically (:mod:`exports.contract`: ``model.tflite``,
``spm.model``, ``litert.json`` with the search, the signatures and the model's operators).
"""

from __future__ import annotations

import dataclasses
import os
import tempfile

import tensorflow as tf
from tensorflow.python.framework.convert_to_constants import (
    convert_variables_to_constants_v2,
)

from common.files import atomic_directory, write_json
from common.special_tokens import EOS_ID, PAD_ID
from decoding.search import decode
from decoding.translator import ModelTranslator
from exports.contract import (
    LITERT_MODEL_FILE,
    LITERT_QUANTIZATIONS,
    LITERT_SETTINGS_FILE,
    OUTPUT_IDS,
    SENTENCEPIECE_OPS,
    SOURCE_IDS,
    TEXT,
    TOKENIZER_FILE,
    TRANSLATE_IDS,
    TRANSLATE_TEXT,
    TRANSLATION,
    ExportError,
    LiteRTSettings,
)
from exports.litert import model_ops

_SOURCE_IDS = tf.TensorSpec([None, None], tf.int32, name=SOURCE_IDS)
_TEXT = tf.TensorSpec([1], tf.string, name=TEXT)


def export_litert(
    translator: ModelTranslator,
    output_dir: str,
    quantization: str = "float32",
    text_signature: bool = False,
) -> str:
    """Writes ``translator``'s search as a LiteRT export directory, atomically.

    Args:
        translator: a work directory's translator (``inference.loading.load_translator``), one
            model or an ensemble; its search and source truncation are exported.
        output_dir: the directory to write; an existing one is replaced only once the new one
            is complete.
        quantization: the weights' type, one of ``exports.contract.LITERT_QUANTIZATIONS``:
            ``float16`` halves the file, ``dynamic_int8`` quarters it (int8 weights, computed
            in float32 or int8 per operator by LiteRT).
        text_signature: also ``translate_text`` (one sentence's text to its translation, with
            ``tensorflow_text``'s SentencePiece ops); a unigram model of one target language.

    Raises:
        ExportError: an unknown quantization, a text signature the model cannot have, or a
            model the converter refuses (its reason).

    Example:
        >>> export_litert(translator, "/tmp/run/litert", quantization="dynamic_int8")
        '/tmp/run/litert'
    """
    if quantization not in LITERT_QUANTIZATIONS:
        raise ExportError(
            f"--quantization={quantization} is not one of {', '.join(LITERT_QUANTIZATIONS)} "
            "for --format=litert."
        )
    if text_signature:
        _check_text_signature(translator)
    # The directory is claimed before the conversion (seconds, minutes for a large model): one
    # that cannot be written fails at once.
    with atomic_directory(output_dir) as staging:
        model, settings = _converted(translator, quantization, text_signature)
        with open(os.path.join(staging, LITERT_MODEL_FILE), "wb") as file:
            file.write(model)
        with open(os.path.join(staging, TOKENIZER_FILE), "wb") as file:
            file.write(translator.tokenizer.model_proto)
        write_json(os.path.join(staging, LITERT_SETTINGS_FILE), dataclasses.asdict(settings))
    return os.path.abspath(output_dir)


def _converted(
    translator: ModelTranslator, quantization: str, text_signature: bool
) -> tuple[bytes, LiteRTSettings]:
    """The LiteRT model of ``translator``'s search (and text signature) and its settings."""
    signatures = {TRANSLATE_IDS: {"inputs": [SOURCE_IDS], "outputs": [OUTPUT_IDS]}}
    functions = {TRANSLATE_IDS: _ids_search(translator)}
    if text_signature:
        signatures[TRANSLATE_TEXT] = {"inputs": [TEXT], "outputs": [TRANSLATION]}
        functions[TRANSLATE_TEXT] = _text_search(translator)
    model = _convert(functions, quantization)
    ops = model_ops(model)
    foreign = [op for op in ops if op.startswith("CUSTOM") and op not in SENTENCEPIECE_OPS]
    if foreign:
        raise ExportError(f"LiteRT has no builtin operator for {', '.join(foreign)}.")
    settings = LiteRTSettings(
        beam_size=translator.beam_size,
        length_penalty=translator.options.length_penalty,
        max_source_length=translator.max_source_length,
        quantization=quantization,
        signatures=signatures,
        ops=ops,
    )
    return model, settings


def _check_text_signature(translator: ModelTranslator) -> None:
    """An ExportError unless ``tensorflow_text``'s LiteRT SentencePiece ops can tokenize for
    the model (see the module's docstring)."""
    if translator.tokenizer.model_type != "unigram":
        raise ExportError(
            f"--litert_text needs a unigram SentencePiece model, and this one is "
            f"{translator.tokenizer.model_type}: tensorflow_text's LiteRT tokenizer splits BPE "
            "text into other pieces. Export without --litert_text: the app tokenizes with "
            "SentencePiece and calls translate_ids."
        )
    if translator.languages:
        raise ExportError(
            "--litert_text cannot take a multilingual model's target language (its tag needs a "
            "regular expression no LiteRT builtin runs). Export without --litert_text: the app "
            "tags and tokenizes with SentencePiece and calls translate_ids."
        )


def _ids_search(translator: ModelTranslator) -> tf.types.experimental.ConcreteFunction:
    """``translate_ids``: the static-shape search on ``(batch, source_len)`` source ids."""
    search = tf.function(
        lambda source_ids: {OUTPUT_IDS: decode(translator.model, source_ids, translator.options)},
        input_signature=[_SOURCE_IDS],
        autograph=False,
    )
    return search.get_concrete_function()


def _text_search(translator: ModelTranslator) -> tf.types.experimental.ConcreteFunction:
    """``translate_text``: one sentence (``[1]``) tokenized as in training, searched and
    detokenized, with ``FastSentencepieceTokenizer`` and builtins only (no ragged op)."""
    import tensorflow_text

    sentencepiece = tensorflow_text.FastSentencepieceTokenizer(translator.tokenizer.model_proto)

    def translate(text: tf.Tensor) -> dict[str, tf.Tensor]:
        pieces = sentencepiece.tokenize(tf.reshape(text, [1]))  # a batch of 2 fails here
        values = tf.cast(pieces.values, tf.int32)
        length = tf.minimum(tf.size(values), translator.max_source_length - 1)
        source_ids = tf.concat([values[:length], [EOS_ID]], axis=0)[tf.newaxis]  # (1, len)
        output_ids = decode(translator.model, source_ids, translator.options)[0]  # (out_len,)
        kept = tf.math.cumsum(tf.cast(output_ids == EOS_ID, tf.int32)) == 0
        words = tf.boolean_mask(output_ids, kept & (output_ids != PAD_ID))
        row = tf.RaggedTensor.from_row_splits(words, tf.stack([0, tf.size(words)]), validate=False)
        return {TRANSLATION: sentencepiece.detokenize(row)}

    search = tf.function(translate, input_signature=[_TEXT], autograph=False)
    return search.get_concrete_function()


def _convert(
    functions: dict[str, tf.types.experimental.ConcreteFunction], quantization: str
) -> bytes:
    """The ``.tflite`` bytes of the signatures ``functions``, weights frozen, builtin operators
    (and ``tensorflow_text``'s SentencePiece ones, checked by the caller) only."""
    # The converter names a model's signatures after a SavedModel's, so the frozen functions
    # go through one (holding no variables; custom gradients are for training, not kept).
    module, signatures = tf.Module(), {}
    for name, function in functions.items():
        wrapper = _frozen(function)
        setattr(module, name, wrapper)
        signatures[name] = wrapper.get_concrete_function()
    with tempfile.TemporaryDirectory() as directory:
        tf.saved_model.save(
            module,
            directory,
            signatures=signatures,
            options=tf.saved_model.SaveOptions(experimental_custom_gradients=False),
        )
        converter = tf.lite.TFLiteConverter.from_saved_model(
            directory, signature_keys=list(signatures)
        )
        converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS]
        converter.allow_custom_ops = TRANSLATE_TEXT in signatures  # its SentencePiece ops
        if quantization != "float32":
            converter.optimizations = [tf.lite.Optimize.DEFAULT]
        if quantization == "float16":
            converter.target_spec.supported_types = [tf.float16]
        try:
            return converter.convert()
        except Exception as error:  # the converter raises its own ConverterError, or others
            raise ExportError(
                f"LiteRT cannot convert this model with builtin operators: {_first_line(error)}"
            ) from None


def _frozen(function: tf.types.experimental.ConcreteFunction) -> tf.types.experimental.Function:
    """``function`` (of one input) with its variables as constants, its outputs named as its."""
    frozen = convert_variables_to_constants_v2(function)
    outputs = sorted(function.structured_outputs)  # the order of the frozen function's list

    def call(inputs: tf.Tensor) -> dict[str, tf.Tensor]:
        return dict(zip(outputs, frozen(inputs), strict=True))

    return tf.function(
        call, input_signature=function.structured_input_signature[0], autograph=False
    )


def _first_line(error: Exception) -> str:
    """The converter's reason: the first line of its message that says ``error:``."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    reasons = [line for line in lines if "error:" in line]
    return (reasons or lines or [type(error).__name__])[0][:300]
