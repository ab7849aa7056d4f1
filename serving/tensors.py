"""TensorFlow Serving's JSON for ``:predict``: request bodies to string columns, outputs to JSON.

Requests hold ``instances`` (row format: a value or an object of named inputs per row) or
``inputs`` (columnar: a list, or an object of named lists), and an optional
``signature_name``. String values are JSON strings or ``{"b64": "..."}``; the text must be valid
UTF-8 (the models read text). Row requests get ``{"predictions": [...]}`` (one value per row, or
an object per row when the signature has several outputs), columnar ones ``{"outputs": ...}``.
String outputs are text, or ``{"b64": ...}`` when their name ends in ``_bytes``.

Example:
    >>> request = parse_predict_body(b'{"instances": ["Ein Hund.", {"b64": "SmE="}]}')
    >>> request.columns(("text",))
    {'text': ['Ein Hund.', 'Ja']}
    >>> outputs_to_json({"translation": np.array([b"A dog.", b"Yes"], object)}, columnar=False)
    {'predictions': ['A dog.', 'Yes']}
"""

from __future__ import annotations

import base64
import dataclasses
import json
from collections.abc import Mapping, Sequence

import numpy as np

from exports.contract import SERVING_DEFAULT
from serving.errors import bad_request
from serving.options import OPTION_FIELDS


@dataclasses.dataclass(frozen=True)
class PredictRequest:
    """A parsed ``:predict`` body: the signature, the format and the raw inputs."""

    signature_name: str
    columnar: bool
    payload: object

    def columns(self, input_names: Sequence[str]) -> dict[str, list[str]]:
        """The text of each named input, one entry per row; 400 for anything else.

        Example:
            >>> parse_predict_body(b'{"inputs": {"text": ["Ja"]}}').columns(("text",))
            {'text': ['Ja']}
        """
        if self.columnar:
            columns = _columnar_columns(self.payload, input_names)
        else:
            columns = _row_columns(self.payload, input_names)
        if len({len(column) for column in columns.values()}) > 1:
            raise bad_request(f"inputs {', '.join(input_names)} have different numbers of rows")
        return columns


def parse_predict_body(body: bytes) -> PredictRequest:
    """Parses a ``:predict`` body; 400 for invalid UTF-8, bad JSON or a missing field.

    Example:
        >>> parse_predict_body(b'{"inputs": ["Ja"], "signature_name": "x"}').signature_name
        'x'
    """
    try:
        document = json.loads(body.decode("utf-8"))
    except UnicodeDecodeError as error:
        raise bad_request(f"the request body is not valid UTF-8 (byte {error.start})") from None
    except (json.JSONDecodeError, RecursionError) as error:
        raise bad_request(f"JSON Parse error: {error}") from None
    if not isinstance(document, dict):
        raise bad_request("the request body must be a JSON object")
    if ("instances" in document) == ("inputs" in document):
        raise bad_request("the request must have exactly one of 'instances' or 'inputs'")
    signature_name = document.get("signature_name", SERVING_DEFAULT)
    if not isinstance(signature_name, str):
        raise bad_request("'signature_name' must be a string")
    columnar = "inputs" in document
    return PredictRequest(signature_name, columnar, document["inputs" if columnar else "instances"])


def _is_named_inputs(value: object) -> bool:
    return isinstance(value, dict) and "b64" not in value


def _named_values(value: dict, input_names: Sequence[str], where: str) -> dict:
    """The named inputs of a row (or of ``inputs``), beside which a row may carry options
    (:mod:`serving.options`)."""
    names = set(value) - OPTION_FIELDS
    if names != set(input_names):
        raise bad_request(
            f"{where} must name the inputs {', '.join(input_names)}; it has "
            f"{', '.join(map(str, sorted(names))) or 'none'}"
        )
    return value


def _row_columns(instances: object, input_names: Sequence[str]) -> dict[str, list[str]]:
    if not isinstance(instances, list) or not instances:
        raise bad_request("'instances' must be a non-empty list")
    columns: dict[str, list[str]] = {name: [] for name in input_names}
    for row, instance in enumerate(instances):
        where = f"instances[{row}]"
        if _is_named_inputs(instance):
            values = _named_values(instance, input_names, where)
            for name in input_names:
                columns[name].append(_text(values[name], f"{where}.{name}"))
        elif len(input_names) == 1:
            columns[input_names[0]].append(_text(instance, where))
        else:
            raise bad_request(
                f"{where} must be an object naming the inputs {', '.join(input_names)}"
            )
    return columns


def _columnar_columns(inputs: object, input_names: Sequence[str]) -> dict[str, list[str]]:
    if _is_named_inputs(inputs):
        values = _named_values(inputs, input_names, "'inputs'")
    elif len(input_names) == 1:
        values = {input_names[0]: inputs}
    else:
        raise bad_request(f"'inputs' must be an object naming the inputs {', '.join(input_names)}")
    columns = {}
    for name in input_names:
        column = values[name]
        if not isinstance(column, list) or not column:
            raise bad_request(f"inputs.{name} must be a non-empty list of strings")
        columns[name] = [_text(value, f"inputs.{name}[{row}]") for row, value in enumerate(column)]
    return columns


def _text(value: object, where: str) -> str:
    """A JSON string or ``{"b64": ...}`` as text; 400 for other types, bad base64 or UTF-8."""
    if isinstance(value, dict) and set(value) == {"b64"} and isinstance(value["b64"], str):
        try:
            raw = base64.b64decode(value["b64"], validate=True)
        except ValueError:  # binascii.Error, or non-ASCII characters
            raise bad_request(f"{where}: invalid base64") from None
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as error:
            raise bad_request(f"{where}: not valid UTF-8 (byte {error.start})") from None
    if not isinstance(value, str):
        kind = "an object" if isinstance(value, dict) else type(value).__name__
        raise bad_request(f'{where} must be a string or {{"b64": "..."}}, not {kind}')
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise bad_request(f"{where}: not valid Unicode (a lone surrogate)") from None
    return value


def outputs_to_json(outputs: Mapping[str, np.ndarray], columnar: bool) -> dict:
    """The response to a request in row format (``predictions``) or columnar (``outputs``).

    Example:
        >>> outputs_to_json({"a": np.array([1, 2]), "b": np.array([3.5, 4])}, columnar=False)
        {'predictions': [{'a': 1, 'b': 3.5}, {'a': 2, 'b': 4.0}]}
    """
    values = {name: _json_value(name, array) for name, array in outputs.items()}
    if columnar:
        return {"outputs": next(iter(values.values())) if len(values) == 1 else values}
    if len(values) == 1:
        return {"predictions": next(iter(values.values()))}
    rows = len(next(iter(values.values())))
    return {
        "predictions": [{name: value[row] for name, value in values.items()} for row in range(rows)]
    }


def _json_value(name: str, array: np.ndarray) -> object:
    if array.dtype.kind == "f" and not np.all(np.isfinite(array)):  # JSON has no -inf: null
        return np.where(np.isfinite(array), array, None).tolist()
    if array.dtype != object:  # numbers and booleans
        return array.tolist()
    if name.endswith("_bytes"):
        return np.vectorize(
            lambda raw: {"b64": base64.b64encode(raw).decode("ascii")}, otypes=[object]
        )(array).tolist()
    return np.vectorize(lambda raw: raw.decode("utf-8", errors="replace"), otypes=[object])(
        array
    ).tolist()
