import os

import pytest
import tensorflow as tf

from serving.errors import ApiError
from serving.registry import ModelRegistry, load_model, model_version_dir, parse_model_specs


def test_model_specs_are_dirs_or_name_equals_dir():
    assert parse_model_specs(["de-en=/m/a", "/m/b"], "default") == [
        ("de-en", "/m/a"),
        ("default", "/m/b"),
    ]
    for bad in ["a/b=/m/a", "=/m/a", "de-en=", "two words=/m"]:
        with pytest.raises(ValueError, match="give DIR or NAME=DIR"):
            parse_model_specs([bad], "default")


def test_the_version_is_a_numbered_directory_else_1(tiny_saved_model, tmp_path):
    assert model_version_dir(tiny_saved_model) == (7, tiny_saved_model)
    base = tmp_path / "de-en"
    base.mkdir()
    for version in ("3", "12"):
        os.symlink(tiny_saved_model, base / version)
    (base / "99").mkdir()  # not a SavedModel: not a version
    assert model_version_dir(str(base)) == (12, str(base / "12"))
    os.symlink(tiny_saved_model, tmp_path / "saved_model")
    assert model_version_dir(str(tmp_path / "saved_model")) == (1, str(tmp_path / "saved_model"))
    for missing in (tmp_path / "nothing", tmp_path / "de-en" / "99"):
        with pytest.raises(FileNotFoundError, match="No SavedModel in .* write one with export"):
            model_version_dir(str(missing))


def test_the_exported_model_serves_both_signatures_and_shows_every_signature_def(tiny_served):
    assert set(tiny_served.signatures) == {"serving_default", "cross_attention"}
    default = tiny_served.signature("serving_default")
    assert default.batchable and default.inputs == ("text",) and default.outputs == ("translation",)
    attention = tiny_served.signature("cross_attention")
    assert not attention.batchable
    assert attention.outputs == ("attention", "source_pieces", "target_pieces", "translation")
    metadata = tiny_served.metadata()
    assert metadata["model_spec"] == {"name": "de-en", "signature_name": "", "version": "7"}
    defs = metadata["metadata"]["signature_def"]["signature_def"]
    assert set(defs) == {"serving_default", "cross_attention", "__saved_model_init_op"}
    assert defs["serving_default"]["method_name"] == "tensorflow/serving/predict"
    text = defs["serving_default"]["inputs"]["text"]
    assert text["dtype"] == "DT_STRING"
    assert text["tensor_shape"] == {"dim": [{"size": "-1", "name": ""}], "unknown_rank": False}
    assert defs["cross_attention"]["outputs"]["attention"]["dtype"] == "DT_FLOAT"


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


class _Doubler(tf.Module):
    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32, name="x")])
    def serve(self, x: tf.Tensor) -> dict[str, tf.Tensor]:
        return {"y": 2 * x}


def test_signatures_with_other_inputs_than_strings_are_listed_not_served(tmp_path):
    module = _Doubler()
    tf.saved_model.save(module, str(tmp_path / "m"), signatures={"serving_default": module.serve})
    served = load_model("doubler", str(tmp_path / "m"))
    assert served.signatures == {} and "serving_default" in served.signature_defs
    with pytest.raises(ApiError, match="takes inputs other than 1-D strings") as raised:
        served.signature("serving_default")
    assert raised.value.status == 400
    with pytest.raises(ApiError, match='Serving signature name: "x" not found in signature def'):
        served.signature("x")
