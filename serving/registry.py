"""The served models: each SavedModel loaded once, found by name and version.

A model's version is its directory's name when that is a number (TensorFlow Serving's layout,
``BASE/123/saved_model.pb``), else 1; a ``--saved_model`` directory that holds numbered
SavedModels serves the highest, as TensorFlow Serving does. Signatures whose inputs are all 1-D
``tf.string`` tensors are served (the project's ``serving_default`` and ``cross_attention``);
the metadata lists every signature.

Example:
    >>> registry = ModelRegistry([load_model("de-en", "runs/de_en/saved_model")])
    >>> registry.get("de-en", None).signature("serving_default")(["Ein Hund."])
    {'translation': array([b'A dog.'], dtype=object)}
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Callable, Mapping, Sequence

import numpy as np
import tensorflow as tf
from google.protobuf import json_format
from tensorflow.core.protobuf import saved_model_pb2

from serving.errors import ApiError, bad_request

MODEL_NAME = re.compile(r"[^/:,=\s]+")


@dataclasses.dataclass(frozen=True)
class Signature:
    """One servable signature: call it with one list of texts per input, get numpy outputs."""

    name: str
    function: Callable[..., Mapping[str, tf.Tensor]]
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    batchable: bool  # every output is 1-D: rows of several requests can run as one batch

    def __call__(self, *columns: Sequence[str]) -> dict[str, np.ndarray]:
        """Runs the signature on the columns (in the order of ``inputs``).

        Example:
            >>> model.signature("serving_default")(["Ein Hund."])["translation"]
            array([b'A dog.'], dtype=object)
        """
        tensors = {
            name: tf.constant(list(column), tf.string)
            for name, column in zip(self.inputs, columns, strict=True)
        }
        outputs = self.function(**tensors)
        return {name: outputs[name].numpy() for name in self.outputs}


@dataclasses.dataclass(frozen=True)
class ServedModel:
    """A loaded SavedModel under a name and version, with its servable signatures and metadata."""

    name: str
    version: int
    path: str
    signatures: Mapping[str, Signature]
    signature_defs: Mapping[str, dict]
    loaded: object  # keeps the SavedModel's variables alive

    def signature(self, name: str) -> Signature:
        """The signature called ``name``; 400 (as TensorFlow Serving) when there is none.

        Example:
            >>> model.signature("cross_attention").batchable
            False
        """
        if name not in self.signatures:
            if name in self.signature_defs:
                raise bad_request(f'Serving signature "{name}" takes inputs other than 1-D strings')
            raise bad_request(f'Serving signature name: "{name}" not found in signature def')
        return self.signatures[name]

    def status(self) -> dict:
        """TensorFlow Serving's ``ModelVersionStatus`` JSON for this version.

        Example:
            >>> model.status()["state"]
            'AVAILABLE'
        """
        return {
            "version": str(self.version),
            "state": "AVAILABLE",
            "status": {"error_code": "OK", "error_message": ""},
        }

    def metadata(self) -> dict:
        """TensorFlow Serving's ``GetModelMetadataResponse`` JSON (the signature defs).

        Example:
            >>> sorted(model.metadata()["metadata"]["signature_def"]["signature_def"])
            ['__saved_model_init_op', 'cross_attention', 'serving_default']
        """
        return {
            "model_spec": {"name": self.name, "signature_name": "", "version": str(self.version)},
            "metadata": {"signature_def": {"signature_def": dict(self.signature_defs)}},
        }


class ModelRegistry:
    """The served models by name (one version each); lookups fail as TensorFlow Serving's do.

    Example:
        >>> ModelRegistry(models).get("fr-en", 3)
        Traceback (most recent call last):
        serving.errors.ApiError: Servable not found for request: Specific(fr-en, 3)
    """

    def __init__(self, models: Sequence[ServedModel]) -> None:
        self.models = {model.name: model for model in models}
        if len(self.models) != len(models):
            raise ValueError("Two served models have the same name; name each (NAME=DIR).")

    def get(self, name: str, version: int | None) -> ServedModel:
        """The model ``name`` (at ``version``, if given); 404 otherwise.

        Example:
            >>> registry.get("de-en", None).version
            1
        """
        model = self.models.get(name)
        if model is None or version not in (None, model.version):
            spec = f"Latest({name})" if version is None else f"Specific({name}, {version})"
            raise ApiError(404, f"Servable not found for request: {spec}")
        return model

    def status(self, name: str, version: int | None) -> dict:
        """``{"model_version_status": [...]}``; 404 for an unknown model or version.

        Example:
            >>> registry.status("de-en", 1)["model_version_status"][0]["state"]
            'AVAILABLE'
        """
        model = self.models.get(name)
        if model is None:
            raise ApiError(404, f"Could not find any versions of model {name}")
        if version not in (None, model.version):
            raise ApiError(404, f"Could not find version {version} of model {name}")
        return {"model_version_status": [model.status()]}


def parse_model_specs(entries: Sequence[str], default_name: str) -> list[tuple[str, str]]:
    """``NAME=DIR`` or ``DIR`` entries (the latter named ``default_name``) -> ``(name, dir)``.

    Example:
        >>> parse_model_specs(["de-en=runs/a/saved_model", "runs/b/saved_model"], "default")
        [('de-en', 'runs/a/saved_model'), ('default', 'runs/b/saved_model')]
    """
    specs = []
    for entry in entries:
        name, separator, path = entry.partition("=")
        if not separator:
            name, path = default_name, entry
        if not MODEL_NAME.fullmatch(name) or not path:
            raise ValueError(
                f"--saved_model entry {entry!r}: give DIR or NAME=DIR, NAME without / : , = or "
                "spaces."
            )
        specs.append((name, path))
    return specs


def model_version_dir(path: str) -> tuple[int, str]:
    """``(version, SavedModel directory)`` for a ``--saved_model`` directory.

    Example:
        >>> model_version_dir("/models/de-en")   # holds 1/ and 3/, SavedModels
        (3, '/models/de-en/3')
    """
    if tf.saved_model.contains_saved_model(path):
        name = os.path.basename(os.path.normpath(path))
        return (int(name) if name.isdigit() else 1), path
    numbered = [
        int(entry)
        for entry in (os.listdir(path) if os.path.isdir(path) else [])
        if entry.isdigit() and tf.saved_model.contains_saved_model(os.path.join(path, entry))
    ]
    if not numbered:
        raise FileNotFoundError(
            f"No SavedModel in {path} (--saved_model), nor numbered versions of one; write one "
            "with export.py."
        )
    return max(numbered), os.path.join(path, str(max(numbered)))


def load_model(name: str, path: str) -> ServedModel:
    """Loads the SavedModel of ``path`` (see :func:`model_version_dir`) as ``name``.

    Example:
        >>> load_model("de-en", "runs/de_en/saved_model").version
        1
    """
    import tensorflow_text  # noqa: F401  (registers the SentencePiece ops of the graph)

    version, directory = model_version_dir(path)
    loaded = tf.saved_model.load(directory)
    signatures = {}
    for signature_name, function in loaded.signatures.items():
        _, input_specs = function.structured_input_signature
        if all(spec.dtype == tf.string and spec.shape.rank == 1 for spec in input_specs.values()):
            outputs = function.structured_outputs
            signatures[signature_name] = Signature(
                signature_name,
                function,
                tuple(sorted(input_specs)),
                tuple(sorted(outputs)),
                batchable=all(spec.shape.rank == 1 for spec in outputs.values()),
            )
    return ServedModel(name, version, directory, signatures, _signature_defs(directory), loaded)


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
