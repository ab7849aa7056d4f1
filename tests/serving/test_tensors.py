import base64
import json

import numpy as np
import pytest

from serving.errors import ApiError
from serving.tensors import outputs_to_json, parse_predict_body


def body(document) -> bytes:
    return json.dumps(document).encode()


def b64(raw: bytes) -> dict:
    return {"b64": base64.b64encode(raw).decode()}


@pytest.mark.parametrize(
    "document, columnar",
    [
        ({"instances": ["Ein Hund.", "Ja"]}, False),
        ({"instances": [{"text": "Ein Hund."}, {"text": "Ja"}]}, False),
        ({"instances": [b64(b"Ein Hund."), "Ja"]}, False),
        ({"inputs": ["Ein Hund.", "Ja"]}, True),
        ({"inputs": {"text": ["Ein Hund.", b64(b"Ja")]}}, True),
    ],
)
def test_row_and_columnar_requests_give_the_same_columns(document, columnar):
    request = parse_predict_body(body(document))
    assert request.columnar is columnar and request.signature_name == "serving_default"
    assert request.columns(("text",)) == {"text": ["Ein Hund.", "Ja"]}


def test_several_named_inputs_in_both_formats():
    rows = parse_predict_body(body({"instances": [{"a": "1", "b": "x"}, {"a": "2", "b": "y"}]}))
    columns = parse_predict_body(body({"inputs": {"a": ["1", "2"], "b": ["x", "y"]}}))
    expected = {"a": ["1", "2"], "b": ["x", "y"]}
    assert rows.columns(("a", "b")) == columns.columns(("a", "b")) == expected
    with pytest.raises(ApiError, match="different numbers of rows"):
        parse_predict_body(body({"inputs": {"a": ["1"], "b": ["x", "y"]}})).columns(("a", "b"))
    with pytest.raises(ApiError, match=r"instances\[0\] must be an object naming the inputs"):
        parse_predict_body(body({"instances": ["1"]})).columns(("a", "b"))
    with pytest.raises(ApiError, match="'inputs' must be an object naming the inputs"):
        parse_predict_body(body({"inputs": ["1"]})).columns(("a", "b"))


@pytest.mark.parametrize(
    "raw, message",
    [
        (b"\xff{}", "not valid UTF-8"),
        (b'{"instances": [', "JSON Parse error"),
        (b"[" * 100_000, "JSON Parse error"),
        (b'["Ein Hund."]', "must be a JSON object"),
        (b"{}", "exactly one of 'instances' or 'inputs'"),
        (b'{"instances": [], "inputs": []}', "exactly one of"),
        (b'{"instances": ["a"], "signature_name": 3}', "'signature_name' must be a string"),
    ],
)
def test_bad_bodies_are_400s(raw, message):
    with pytest.raises(ApiError, match=message) as raised:
        parse_predict_body(raw)
    assert raised.value.status == 400


@pytest.mark.parametrize(
    "document, message",
    [
        ({"instances": "Ein Hund."}, "'instances' must be a non-empty list"),
        ({"instances": []}, "'instances' must be a non-empty list"),
        ({"instances": ["a", 3]}, r"instances\[1\] must be a string .*not int"),
        ({"instances": [None]}, r"instances\[0\] must be a string .*not NoneType"),
        ({"instances": [["a"]]}, "not list"),
        ({"instances": [{"txt": "a"}]}, r"instances\[0\] must name the inputs text; it has txt"),
        ({"instances": [{"b64": "!!!"}]}, r"instances\[0\]: invalid base64"),
        ({"instances": [{"b64": "ÄÖ=="}]}, "invalid base64"),
        ({"instances": [b64(b"\xff\xfe")]}, r"instances\[0\]: not valid UTF-8 \(byte 0\)"),
        ({"instances": ["\ud800"]}, "lone surrogate"),
        ({"inputs": "Ein Hund."}, "inputs.text must be a non-empty list"),
        ({"inputs": {"text": [1.5]}}, r"inputs.text\[0\] must be a string .*not float"),
        ({"inputs": {}}, "'inputs' must name the inputs text; it has none"),
    ],
)
def test_bad_inputs_are_400s_that_say_where(document, message):
    request = parse_predict_body(body(document))
    with pytest.raises(ApiError, match=message) as raised:
        request.columns(("text",))
    assert raised.value.status == 400


def test_outputs_in_tf_servings_row_and_columnar_shapes():
    one = {"translation": np.array([b"A dog.", b"Yes \xc3\xa4"], object)}
    assert outputs_to_json(one, columnar=False) == {"predictions": ["A dog.", "Yes ä"]}
    assert outputs_to_json(one, columnar=True) == {"outputs": ["A dog.", "Yes ä"]}
    several = {
        "pieces": np.array([[b"a", b""], [b"b", b"c"]], object),
        "weights": np.array([[0.5, 0.0], [0.25, 0.75]], np.float32),
        "raw_bytes": np.array([b"\xff", b"x"], object),
    }
    assert outputs_to_json(several, columnar=False) == {
        "predictions": [
            {"pieces": ["a", ""], "weights": [0.5, 0.0], "raw_bytes": {"b64": "/w=="}},
            {"pieces": ["b", "c"], "weights": [0.25, 0.75], "raw_bytes": {"b64": "eA=="}},
        ]
    }
    assert outputs_to_json(several, columnar=True)["outputs"]["pieces"] == [["a", ""], ["b", "c"]]
    invalid = {"translation": np.array([b"\xffx"], object)}
    assert outputs_to_json(invalid, columnar=False) == {"predictions": ["\ufffdx"]}


def test_a_score_json_cannot_hold_is_null():
    outputs = {"score": np.array([[-0.5, -np.inf]], np.float32), "length": np.array([[3, 0]])}
    assert outputs_to_json(outputs, columnar=False) == {
        "predictions": [{"score": [-0.5, None], "length": [3, 0]}]
    }
