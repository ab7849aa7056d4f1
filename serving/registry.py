"""The served models, found by name and version, whatever runs them.

A model is loaded once, by :mod:`serving.saved_model` (a SavedModel: TensorFlow) or
:mod:`serving.ctranslate2_model` (a CTranslate2 export: no TensorFlow), as a
:class:`ServedModel`: its :class:`Signature` s (text columns in, numpy arrays out) and TensorFlow
Serving's metadata. A model's version is its directory's name when that is a number (TensorFlow
Serving's layout, ``BASE/123/``), else 1; a directory that holds numbered models serves the
highest, as TensorFlow Serving does (:func:`model_version_dir`). This module imports no
TensorFlow.

Example:
    >>> registry = ModelRegistry([load_saved_model("de-en", "runs/de_en/saved_model")])
    >>> registry.get("de-en", None).signature("serving_default")(["Ein Hund."])
    {'translation': array([b'A dog.'], dtype=object)}
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from common.language_tags import UnknownLanguageError, check_language
from common.translation import Sampling
from exports.contract import TARGET_LANG
from serving.errors import ApiError, bad_request

MODEL_NAME = re.compile(r"[^/:,=\s]+")


@dataclasses.dataclass(frozen=True)
class Signature:
    """One servable signature: call it with one list of texts per input, get numpy outputs.

    ``run`` takes the columns in the order of ``inputs`` and returns every output, one row per
    input row; it raises a 400 :class:`ApiError` for input the model refuses.
    """

    name: str
    run: Callable[..., Mapping[str, np.ndarray]]
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    batchable: bool  # every output is 1-D: rows of several requests can run as one batch

    def __call__(self, *columns: Sequence[str]) -> dict[str, np.ndarray]:
        """Runs the signature on the columns (in the order of ``inputs``).

        Example:
            >>> model.signature("serving_default")(["Ein Hund."])["translation"]
            array([b'A dog.'], dtype=object)
        """
        outputs = self.run(*(list(column) for column in columns))
        return {name: outputs[name] for name in self.outputs}


# The name of a sampler's signature (a server's, not an export's: ServedModel.sampler).
SAMPLED = "sampled"


@dataclasses.dataclass(frozen=True)
class ServedModel:
    """A loaded model under a name and version, with its servable signatures and metadata."""

    name: str
    version: int
    path: str
    runtime: str  # "SavedModel" or "CTranslate2"
    signatures: Mapping[str, Signature]
    signature_defs: Mapping[str, dict]  # TensorFlow Serving's SignatureDef JSON, by name
    loaded: object  # keeps the model alive
    # A multilingual model's target languages (its signatures take `target_lang`); () for one.
    languages: tuple[str, ...] = ()
    beam_size: int = 1  # the hypotheses its search keeps (the n_best signature's width)
    # A runtime that samples (CTranslate2): the signature of translations sampled with the given
    # settings, taking serving_default's inputs; None for one that cannot (a SavedModel).
    sampler: Callable[[Sampling], Signature] | None = None
    # Sources' token counts (texts and their one target language, "" for none), and the tokens
    # a source may have (EOS included): document rows cut longer sentences first. None for a
    # model that does not tell (a SavedModel not exported by this project).
    source_lengths: Callable[[list[str], str], list[int]] | None = None
    max_source_length: int | None = None

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

    def check_languages(self, columns: Mapping[str, Sequence[str]]) -> None:
        """A 400 naming the model's languages when a row's ``target_lang`` is not one of them
        (checked before the model runs, so one bad request never fails a batch of others).

        Example:
            >>> model.check_languages({"text": ["Ja"], "target_lang": ["xx"]})
            Traceback (most recent call last):
            serving.errors.ApiError: Unknown target language 'xx': this model translates into de.
        """
        for language in columns.get(TARGET_LANG, ()):
            try:
                check_language(language, self.languages)
            except UnknownLanguageError as error:
                raise bad_request(str(error)) from None

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
            >>> sorted(model.metadata()["metadata"]["signature_def"]["signature_def"])[:3]
            ['__saved_model_init_op', 'cross_attention', 'forced_score']
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


def parse_model_specs(
    entries: Sequence[str], default_name: str, flag: str = "--saved_model"
) -> list[tuple[str, str]]:
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
                f"{flag} entry {entry!r}: give DIR or NAME=DIR, NAME without / : , = or spaces."
            )
        specs.append((name, path))
    return specs


def model_version_dir(
    path: str, holds_model: Callable[[str], bool], missing: str
) -> tuple[int, str]:
    """``(version, model directory)`` for a served directory: ``path`` itself when
    ``holds_model(path)``, else its highest numbered subdirectory that holds one.

    Raises:
        FileNotFoundError: with ``missing`` when there is neither.

    Example:
        >>> model_version_dir("/models/de-en", tf.saved_model.contains_saved_model, "...")
        (3, '/models/de-en/3')   # it holds 1/ and 3/, SavedModels
    """
    if holds_model(path):
        name = os.path.basename(os.path.normpath(path))
        return (int(name) if name.isdigit() else 1), path
    numbered = [
        int(entry)
        for entry in (os.listdir(path) if os.path.isdir(path) else [])
        if entry.isdigit() and holds_model(os.path.join(path, entry))
    ]
    if not numbered:
        raise FileNotFoundError(missing)
    return max(numbered), os.path.join(path, str(max(numbered)))


def string_signature_def(inputs: Sequence[str], outputs: Mapping[str, tuple[str, int]]) -> dict:
    """TensorFlow Serving's SignatureDef JSON for tf.string inputs of shape ``[-1]`` and outputs
    given as ``name: (dtype, rank)`` (the metadata of a model that is not a SavedModel).

    Example:
        >>> string_signature_def(["text"], {"translation": ("DT_STRING", 1)})["method_name"]
        'tensorflow/serving/predict'
    """

    def tensor(name: str, dtype: str, rank: int) -> dict:
        return {
            "name": name,
            "dtype": dtype,
            "tensor_shape": {"dim": [{"size": "-1", "name": ""}] * rank, "unknown_rank": False},
        }

    return {
        "inputs": {name: tensor(f"{name}:0", "DT_STRING", 1) for name in inputs},
        "outputs": {
            name: tensor(f"{name}:0", dtype, rank) for name, (dtype, rank) in outputs.items()
        },
        "method_name": "tensorflow/serving/predict",
        "defaults": {},
    }
