"""Serving a SavedModel (``export.py``'s, or any whose signatures take 1-D strings): TensorFlow.

Signatures whose inputs are all 1-D ``tf.string`` tensors are served (the project's
``serving_default`` and ``cross_attention``); the metadata lists every signature, as TensorFlow
Serving prints them. Its variables are read by the names of :mod:`exports.contract`. The
model's invalid-argument errors are 400s with TensorFlow's message (a target language is checked
before the model runs, :meth:`serving.registry.ServedModel.check_languages`).

Example:
    >>> model = load_saved_model("de-en", "runs/de_en/saved_model")
    >>> model.signature("serving_default")(["Ein Hund."])
    {'translation': array([b'A dog.'], dtype=object)}
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping

import numpy as np
import tensorflow as tf
from google.protobuf import json_format
from tensorflow.core.protobuf import saved_model_pb2

from exports.contract import (
    BEAM_SIZE_VARIABLE,
    LANGUAGES_VARIABLE,
    MAX_SOURCE_LENGTH_VARIABLE,
    SOURCE_LENGTHS,
)
from exports.saved_model import check_version
from serving.errors import bad_request
from serving.registry import ServedModel, Signature, model_version_dir

_CLIENT_ERRORS = (
    tf.errors.InvalidArgumentError,
    tf.errors.OutOfRangeError,
    tf.errors.FailedPreconditionError,
)


def load_saved_model(name: str, path: str) -> ServedModel:
    """Loads the SavedModel of ``path`` (a SavedModel, or a directory of numbered ones: the
    highest) as ``name``.

    Example:
        >>> load_saved_model("de-en", "runs/de_en/saved_model").version
        1
    """
    import tensorflow_text  # noqa: F401  (registers the SentencePiece ops of the graph)

    version, directory = model_version_dir(
        path,
        tf.saved_model.contains_saved_model,
        f"No SavedModel in {path} (--saved_model), nor numbered versions of one; write one "
        "with export.py.",
    )
    loaded = tf.saved_model.load(directory)
    if hasattr(loaded, BEAM_SIZE_VARIABLE):  # an export of this project: of today's version
        check_version(loaded, directory)
    signatures = {}
    for signature_name, function in loaded.signatures.items():
        _, input_specs = function.structured_input_signature
        if all(spec.dtype == tf.string and spec.shape.rank == 1 for spec in input_specs.values()):
            outputs = function.structured_outputs
            signatures[signature_name] = Signature(
                signature_name,
                _numpy_function(function, tuple(sorted(input_specs))),
                tuple(sorted(input_specs)),
                tuple(sorted(outputs)),
                batchable=all(spec.shape.rank == 1 for spec in outputs.values()),
            )
    languages = ()
    if hasattr(loaded, LANGUAGES_VARIABLE):  # a multilingual export (inference.export)
        languages = tuple(lang.decode() for lang in getattr(loaded, LANGUAGES_VARIABLE).numpy())
    beam_size, source_lengths, max_source_length = 1, None, None
    if hasattr(loaded, BEAM_SIZE_VARIABLE):  # an export of this project
        beam_size = int(getattr(loaded, BEAM_SIZE_VARIABLE).numpy())
        max_source_length = int(getattr(loaded, MAX_SOURCE_LENGTH_VARIABLE).numpy())
        source_lengths = _source_lengths(getattr(loaded, SOURCE_LENGTHS))
    return ServedModel(
        name,
        version,
        directory,
        "SavedModel",
        signatures,
        _signature_defs(directory),
        loaded,
        languages,
        beam_size,
        source_lengths=source_lengths,
        max_source_length=max_source_length,
    )


def _source_lengths(function) -> Callable[[list[str], str], list[int]]:
    """The export's ``source_lengths`` function on a list of texts into one language."""

    def run(texts: list[str], language: str) -> list[int]:
        text = tf.constant(texts, tf.string, shape=[len(texts)])
        return function(text, tf.fill([len(texts)], language)).numpy().tolist()

    return run


def _numpy_function(
    function: Callable[..., Mapping[str, tf.Tensor]], inputs: tuple[str, ...]
) -> Callable[..., dict[str, np.ndarray]]:
    """A concrete function as columns of text -> numpy outputs; its input errors are 400s."""

    def run(*columns: list[str]) -> dict[str, np.ndarray]:
        tensors = {
            name: tf.constant(column, tf.string)
            for name, column in zip(inputs, columns, strict=True)
        }
        try:
            outputs = function(**tensors)
        except _CLIENT_ERRORS as error:
            raise bad_request(error.message) from None
        return {name: output.numpy() for name, output in outputs.items()}

    return run


def _signature_defs(directory: str) -> dict[str, dict]:
    """The SignatureDefs of the SavedModel's MetaGraph, as TensorFlow Serving prints them."""
    saved_model = saved_model_pb2.SavedModel()
    with open(os.path.join(directory, "saved_model.pb"), "rb") as file:
        saved_model.ParseFromString(file.read())
    return {
        name: json_format.MessageToDict(
            signature_def,
            always_print_fields_with_no_presence=True,
            preserving_proto_field_name=True,
        )
        for name, signature_def in saved_model.meta_graphs[0].signature_def.items()
    }
