"""The registry of served models, whatever runs them (no TensorFlow needed)."""

import pytest

from serving.errors import ApiError
from serving.registry import (
    ModelRegistry,
    model_version_dir,
    parse_model_specs,
    string_signature_def,
)


def test_model_specs_are_dirs_or_name_equals_dir():
    assert parse_model_specs(["de-en=/m/a", "/m/b"], "default") == [
        ("de-en", "/m/a"),
        ("default", "/m/b"),
    ]
    for bad in ["a/b=/m/a", "=/m/a", "de-en=", "two words=/m"]:
        with pytest.raises(ValueError, match="--saved_model entry .* give DIR or NAME=DIR"):
            parse_model_specs([bad], "default")
    with pytest.raises(ValueError, match="--ctranslate2 entry"):
        parse_model_specs(["a/b=/m"], "default", "--ctranslate2")


def test_the_version_is_a_numbered_directory_else_1(tmp_path):
    def holds_model(path: str) -> bool:
        return (tmp_path / path / "model").exists()

    for directory in ("de-en/3", "de-en/12", "de-en/99", "plain", "7"):
        (tmp_path / directory).mkdir(parents=True)
    for directory in ("de-en/3", "de-en/12", "plain", "7"):
        (tmp_path / directory / "model").touch()
    assert model_version_dir(str(tmp_path / "de-en"), holds_model, "none") == (
        12,
        str(tmp_path / "de-en" / "12"),
    )
    assert model_version_dir(str(tmp_path / "plain"), holds_model, "none")[0] == 1
    assert model_version_dir(str(tmp_path / "7"), holds_model, "none")[0] == 7
    for missing in ("nothing", "de-en/99"):
        with pytest.raises(FileNotFoundError, match="^no model here$"):
            model_version_dir(str(tmp_path / missing), holds_model, "no model here")


def test_signature_defs_of_models_that_are_not_saved_models_look_like_tf_servings():
    signature_def = string_signature_def(
        ["text"], {"translation": ("DT_STRING", 1), "attention": ("DT_FLOAT", 4)}
    )
    assert signature_def["inputs"]["text"] == {
        "name": "text:0",
        "dtype": "DT_STRING",
        "tensor_shape": {"dim": [{"size": "-1", "name": ""}], "unknown_rank": False},
    }
    assert signature_def["outputs"]["attention"]["dtype"] == "DT_FLOAT"
    assert len(signature_def["outputs"]["attention"]["tensor_shape"]["dim"]) == 4
    assert signature_def["method_name"] == "tensorflow/serving/predict"


def test_lookups_fail_with_tf_servings_404s(tiny_served):
    registry = ModelRegistry([tiny_served])
    assert registry.get("de-en", None) is registry.get("de-en", 7) is tiny_served
    assert registry.status("de-en", 7) == {
        "model_version_status": [
            {
                "version": "7",
                "state": "AVAILABLE",
                "status": {"error_code": "OK", "error_message": ""},
            }
        ]
    }
    for call, message in [
        (lambda: registry.get("fr-en", None), r"Servable not found for request: Latest\(fr-en\)"),
        (lambda: registry.get("de-en", 1), r"Servable not found for request: Specific\(de-en, 1\)"),
        (lambda: registry.status("fr-en", None), "Could not find any versions of model fr-en"),
        (lambda: registry.status("de-en", 1), "Could not find version 1 of model de-en"),
    ]:
        with pytest.raises(ApiError, match=message) as raised:
            call()
        assert raised.value.status == 404
    with pytest.raises(ValueError, match="same name"):
        ModelRegistry([tiny_served, tiny_served])
