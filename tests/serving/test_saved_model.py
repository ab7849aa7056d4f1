"""SavedModels served: versions, signatures, metadata, and the model's errors as 400s."""

import os

import pytest
import tensorflow as tf

from exports.contract import SIGNATURE_OUTPUTS
from serving.errors import ApiError
from serving.saved_model import load_saved_model


def test_the_version_is_a_numbered_directory_else_1(tiny_saved_model, tmp_path):
    assert load_saved_model("de-en", tiny_saved_model).version == 7
    base = tmp_path / "de-en"
    base.mkdir()
    for version in ("3", "12"):
        os.symlink(tiny_saved_model, base / version)
    (base / "99").mkdir()  # not a SavedModel: not a version
    served = load_saved_model("de-en", str(base))
    assert (served.version, served.path, served.runtime) == (12, str(base / "12"), "SavedModel")
    for missing in (tmp_path / "nothing", tmp_path / "de-en" / "99"):
        with pytest.raises(FileNotFoundError, match="No SavedModel in .* write one with export"):
            load_saved_model("de-en", str(missing))


def test_the_exported_model_serves_every_signature_and_shows_every_signature_def(tiny_served):
    assert set(tiny_served.signatures) == set(SIGNATURE_OUTPUTS)
    default = tiny_served.signature("serving_default")
    assert default.batchable and default.inputs == ("text",) and default.outputs == ("translation",)
    attention = tiny_served.signature("cross_attention")
    assert not attention.batchable
    assert attention.outputs == ("attention", "source_pieces", "target_pieces", "translation")
    forced = tiny_served.signature("forced_score")
    assert not forced.batchable and forced.inputs == ("target", "text")
    assert forced.outputs == ("length", "log_prob", "score", "token_log_probs")
    for name in ("n_best", "scored"):
        scored = tiny_served.signature(name)
        assert not scored.batchable and scored.inputs == ("text",)
        assert scored.outputs == ("length", "log_prob", "score", "token_log_probs", "translation")
    metadata = tiny_served.metadata()
    assert metadata["model_spec"] == {"name": "de-en", "signature_name": "", "version": "7"}
    defs = metadata["metadata"]["signature_def"]["signature_def"]
    assert set(defs) == {*tiny_served.signatures, "__saved_model_init_op"}
    assert defs["serving_default"]["method_name"] == "tensorflow/serving/predict"
    text = defs["serving_default"]["inputs"]["text"]
    assert text["dtype"] == "DT_STRING"
    assert text["tensor_shape"] == {"dim": [{"size": "-1", "name": ""}], "unknown_rank": False}
    assert defs["cross_attention"]["outputs"]["attention"]["dtype"] == "DT_FLOAT"


class _Doubler(tf.Module):
    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32, name="x")])
    def serve(self, x: tf.Tensor) -> dict[str, tf.Tensor]:
        return {"y": 2 * x}


def test_signatures_with_other_inputs_than_strings_are_listed_not_served(tmp_path):
    module = _Doubler()
    tf.saved_model.save(module, str(tmp_path / "m"), signatures={"serving_default": module.serve})
    served = load_saved_model("doubler", str(tmp_path / "m"))
    assert served.signatures == {} and "serving_default" in served.signature_defs
    with pytest.raises(ApiError, match="takes inputs other than 1-D strings") as raised:
        served.signature("serving_default")
    assert raised.value.status == 400
    with pytest.raises(ApiError, match='Serving signature name: "x" not found in signature def'):
        served.signature("x")


class _ShortOnly(tf.Module):
    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="text")])
    def serve(self, text: tf.Tensor) -> dict[str, tf.Tensor]:
        tf.debugging.assert_less(tf.strings.length(text), 5, message="too long for this model")
        return {"translation": text}


def test_the_models_invalid_argument_errors_are_400s(tmp_path):
    module = _ShortOnly()
    tf.saved_model.save(module, str(tmp_path / "m"), signatures={"serving_default": module.serve})
    signature = load_saved_model("short", str(tmp_path / "m")).signature("serving_default")
    assert signature(["ja"])["translation"].tolist() == [b"ja"]
    with pytest.raises(ApiError, match="too long for this model") as raised:
        signature(["ja", "a long one"])
    assert raised.value.status == 400
