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

The export directory is written atomically (:mod:`exports.contract`: ``model.tflite``,
``spm.model``, ``litert.json`` with the search, the signature and the model's operators).
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
from decoding.search import decode
from decoding.translator import ModelTranslator
from exports.contract import (
    LITERT_MODEL_FILE,
    LITERT_QUANTIZATIONS,
    LITERT_SETTINGS_FILE,
    OUTPUT_IDS,
    SOURCE_IDS,
    TOKENIZER_FILE,
    TRANSLATE_IDS,
    ExportError,
    LiteRTSettings,
)
from exports.litert import model_ops

_SOURCE_IDS = tf.TensorSpec([None, None], tf.int32, name=SOURCE_IDS)


def export_litert(
    translator: ModelTranslator, output_dir: str, quantization: str = "float32"
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

    Raises:
        ExportError: an unknown quantization, or a model the converter refuses (its reason).

    Example:
        >>> export_litert(translator, "/tmp/run/litert", quantization="dynamic_int8")
        '/tmp/run/litert'
    """
    if quantization not in LITERT_QUANTIZATIONS:
        raise ExportError(
            f"--quantization={quantization} is not one of {', '.join(LITERT_QUANTIZATIONS)} "
            "for --format=litert."
        )
    model = _convert(translator, quantization)
    settings = LiteRTSettings(
        beam_size=translator.beam_size,
        length_penalty=translator.options.length_penalty,
        max_source_length=translator.max_source_length,
        quantization=quantization,
        signatures={TRANSLATE_IDS: {"inputs": [SOURCE_IDS], "outputs": [OUTPUT_IDS]}},
        ops=model_ops(model),
    )
    with atomic_directory(output_dir) as staging:
        with open(os.path.join(staging, LITERT_MODEL_FILE), "wb") as file:
            file.write(model)
        with open(os.path.join(staging, TOKENIZER_FILE), "wb") as file:
            file.write(translator.tokenizer.model_proto)
        write_json(os.path.join(staging, LITERT_SETTINGS_FILE), dataclasses.asdict(settings))
    return os.path.abspath(output_dir)


def _convert(translator: ModelTranslator, quantization: str) -> bytes:
    """The ``.tflite`` bytes of the search on ids, weights frozen, builtin operators only."""
    search = tf.function(
        lambda source_ids: decode(translator.model, source_ids, translator.options),
        input_signature=[_SOURCE_IDS],
        autograph=False,
    )
    frozen = convert_variables_to_constants_v2(search.get_concrete_function())
    # The converter names a model's signatures after a SavedModel's, so the frozen search goes
    # through one (holding no variables; custom gradients are for training, not kept).
    module = tf.Module()
    module.translate_ids = tf.function(
        lambda source_ids: {OUTPUT_IDS: frozen(source_ids)[0]},
        input_signature=[_SOURCE_IDS],
        autograph=False,
    )
    with tempfile.TemporaryDirectory() as directory:
        tf.saved_model.save(
            module,
            directory,
            signatures={TRANSLATE_IDS: module.translate_ids.get_concrete_function()},
            options=tf.saved_model.SaveOptions(experimental_custom_gradients=False),
        )
        converter = tf.lite.TFLiteConverter.from_saved_model(
            directory, signature_keys=[TRANSLATE_IDS]
        )
        converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS]
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


def _first_line(error: Exception) -> str:
    """The converter's reason: the first line of its message that says ``error:``."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    reasons = [line for line in lines if "error:" in line]
    return (reasons or lines or [type(error).__name__])[0][:300]
