"""Served models for the serving tests: the tiny run's exports and a model that shouts.

``tiny_saved_model`` and ``tiny_ctranslate2`` (tests/conftest.py) are the tiny run's exports.
``shout_saved_model`` maps each text to ``<TEXT IN CAPITALS>``: its answers differ for every
sentence, so a response carrying another request's rows cannot pass for right (the tiny model's
translations are much alike). ``server`` is ``serve.py`` serving them on a free loopback port.
"""

from __future__ import annotations

import base64
import dataclasses
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import tensorflow as tf

from tests.script_runner import default_signal_handling

REPO_ROOT = Path(__file__).resolve().parents[2]


def _shout(text: str) -> str:
    return f"<{text.upper()}>"


@pytest.fixture(scope="session")
def shout():
    """``shout(text)``: what ``shout_saved_model`` answers for ``text``."""
    return _shout


class _ShoutModule(tf.Module):
    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="text")])
    def serve(self, text: tf.Tensor) -> dict[str, tf.Tensor]:
        return {"translation": tf.strings.join(["<", tf.strings.upper(text, "utf-8"), ">"])}


@pytest.fixture(scope="session")
def shout_saved_model(tmp_path_factory) -> str:
    path = str(tmp_path_factory.mktemp("models") / "shout")
    module = _ShoutModule()
    tf.saved_model.save(module, path, signatures={"serving_default": module.serve})
    return path


@pytest.fixture(scope="session")
def tiny_served(tiny_saved_model):
    from serving.saved_model import load_saved_model

    return load_saved_model("de-en", tiny_saved_model)


@pytest.fixture(scope="session")
def shout_served(shout_saved_model):
    from serving.saved_model import load_saved_model

    return load_saved_model("shout", shout_saved_model)


@pytest.fixture(scope="session")
def ctranslate2_served(tiny_ctranslate2):
    from serving.ctranslate2_model import load_ctranslate2_model

    return load_ctranslate2_model("de-en-ct2", tiny_ctranslate2, threads=1)


@pytest.fixture(scope="session")
def multilingual_served(tiny_multilingual_saved_model):
    from serving.saved_model import load_saved_model

    return load_saved_model("multi", tiny_multilingual_saved_model)


@pytest.fixture(scope="session")
def multilingual_ctranslate2_served(tiny_multilingual_ctranslate2):
    from serving.ctranslate2_model import load_ctranslate2_model

    return load_ctranslate2_model("multi-ct2", tiny_multilingual_ctranslate2, threads=1)


def _translate_directly(served, sentences: list[str]) -> list[str]:
    serve = served.signature("serving_default")
    outputs = [serve([sentence])["translation"][0] for sentence in sentences]
    return [output.decode("utf-8", errors="replace") for output in outputs]


@pytest.fixture(scope="session")
def translate_directly():
    """``translate_directly(served, sentences)``: the served model's own translations, each
    sentence alone (its ``serving_default`` called in this process): what a server must answer
    for each row of any request."""
    return _translate_directly


def _start_server(*args: str, timeout: float = 120) -> tuple[subprocess.Popen, str]:
    """Starts ``serve.py --port=0 args``; returns the process and its base URL once it serves."""
    process = subprocess.Popen(
        [sys.executable, "serve.py", "--port=0", *args],
        cwd=REPO_ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=default_signal_handling,
    )
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if line.startswith("Serving on "):
            return process, line.split()[2].rstrip("/")
        if not line and process.poll() is not None:
            break
    process.kill()
    pytest.fail(f"serve.py did not start: {process.communicate()[1][-3000:]}")


@pytest.fixture(scope="session")
def start_server():
    """``start_server(*args) -> (process, url)``: serve.py on a free loopback port, serving."""
    return _start_server


@pytest.fixture(scope="session")
def limits():
    """The small limits the tests serve with (``bad_requests`` goes over each)."""
    from serving.limits import Limits

    return Limits(max_body_bytes=4096, max_sentences=8, max_sentence_chars=200)


@pytest.fixture(scope="session")
def server(
    tiny_saved_model,
    shout_saved_model,
    tiny_ctranslate2,
    tiny_multilingual_saved_model,
    tiny_multilingual_ctranslate2,
    tiny_beam4_exports,
    limits,
) -> Iterator[str]:
    """serve.py with de-en (the tiny model, given by its base directory: version 7), shout,
    de-en-ct2 (the tiny model's CTranslate2 export), multi and multi-ct2 (the tiny
    multilingual model's exports), and beam4 and beam4-ct2 (the tiny model's exports with a beam
    of 4), with ``limits``; yields its URL."""
    beam4, beam4_ctranslate2 = tiny_beam4_exports
    process, url = _start_server(  # the model flags comma-separated and repeated
        f"--saved_model=de-en={Path(tiny_saved_model).parent},shout={shout_saved_model}",
        f"--saved_model=multi={tiny_multilingual_saved_model}",
        f"--saved_model=beam4={beam4}",
        f"--ctranslate2=de-en-ct2={tiny_ctranslate2},multi-ct2={tiny_multilingual_ctranslate2}",
        f"--ctranslate2=beam4-ct2={beam4_ctranslate2}",
        "--ctranslate2_threads=1",
        *(f"--{field}={value}" for field, value in dataclasses.asdict(limits).items()),
        "--batch_timeout_micros=5000",
    )
    yield url
    process.terminate()
    process.communicate(timeout=60)


@dataclasses.dataclass(frozen=True)
class BadRequest:
    """A request the API must refuse with ``status`` and an error containing ``message``."""

    what: str
    method: str
    path: str
    status: int
    message: str
    json: object = None
    content: object = None


def _b64(raw: bytes) -> dict:
    return {"b64": base64.b64encode(raw).decode()}


def _chunks(size: int) -> Iterator[bytes]:
    yield b'{"instances": ["'
    yield b"x" * size
    yield b'"]}'


@pytest.fixture
def bad_requests() -> list[BadRequest]:
    """Every kind of bad input, for a server with the ``limits`` above serving de-en (v7)."""
    predict = "/v1/models/de-en:predict"
    return [
        BadRequest("malformed JSON", "POST", predict, 400, "JSON Parse error", content=b'{"in'),
        BadRequest("deep JSON", "POST", predict, 400, "JSON Parse error", content=b"[" * 4000),
        BadRequest("not an object", "POST", predict, 400, "JSON object", json=["Ein Hund."]),
        BadRequest("no field", "POST", predict, 400, "exactly one of", json={}),
        BadRequest("a string", "POST", predict, 400, "non-empty list", json={"instances": "Ja"}),
        BadRequest("empty", "POST", predict, 400, "non-empty list", json={"instances": []}),
        BadRequest("number", "POST", predict, 400, "not int", json={"instances": ["Ja", 3]}),
        BadRequest("null", "POST", predict, 400, "not NoneType", json={"inputs": [None]}),
        BadRequest(
            "wrong input name", "POST", predict, 400, "inputs text", json={"inputs": {"t": ["a"]}}
        ),
        BadRequest(
            "signature type",
            "POST",
            predict,
            400,
            "'signature_name' must be a string",
            json={"instances": ["Ja"], "signature_name": 1},
        ),
        BadRequest(
            "unknown signature",
            "POST",
            predict,
            400,
            'Serving signature name: "translate" not found',
            json={"instances": ["Ja"], "signature_name": "translate"},
        ),
        BadRequest(
            "unknown model",
            "POST",
            "/v1/models/fr-en:predict",
            404,
            "Servable not found for request: Latest(fr-en)",
            json={"instances": ["Ja"]},
        ),
        BadRequest(
            "unknown version",
            "POST",
            "/v1/models/de-en/versions/3:predict",
            404,
            "Servable not found for request: Specific(de-en, 3)",
            json={"instances": ["Ja"]},
        ),
        BadRequest(
            "invalid base64",
            "POST",
            predict,
            400,
            "instances[0]: invalid base64",
            json={"instances": [{"b64": "*!"}]},
        ),
        BadRequest(
            "invalid UTF-8 in base64",
            "POST",
            predict,
            400,
            "instances[0]: not valid UTF-8",
            json={"instances": [_b64(b"Ein \xff")]},
        ),
        BadRequest(
            "invalid UTF-8 body",
            "POST",
            predict,
            400,
            "body is not valid UTF-8",
            content=b'{"instances": ["Ein \xff"]}',
        ),
        BadRequest(
            "lone surrogate",
            "POST",
            predict,
            400,
            "lone surrogate",
            content=b'{"instances": ["\\ud800"]}',
        ),
        BadRequest(
            "too many sentences",
            "POST",
            predict,
            400,
            "9 sentences in the request; the limit is 8 (--max_sentences)",
            json={"instances": ["Ja"] * 9},
        ),
        BadRequest(
            "sentence too long",
            "POST",
            predict,
            400,
            "sentence 1 has 201 characters; the limit is 200 (--max_sentence_chars)",
            json={"inputs": ["Ja", "x" * 201]},
        ),
        BadRequest(
            "body too large",
            "POST",
            predict,
            413,
            "request body over 4096 bytes (--max_body_bytes)",
            json={"instances": ["x" * 5000]},
        ),
        BadRequest(
            "body too large, chunked",
            "POST",
            predict,
            413,
            "request body over 4096 bytes (--max_body_bytes)",
            content=_chunks(5000),
        ),
        BadRequest("no such verb", "POST", "/v1/models/de-en:explain", 400, "Malformed request"),
        BadRequest(
            "version not a number", "GET", "/v1/models/de-en/versions/x", 400, "Malformed request"
        ),
        BadRequest(
            "status, unknown model",
            "GET",
            "/v1/models/fr-en",
            404,
            "Could not find any versions of model fr-en",
        ),
        BadRequest(
            "status, unknown version",
            "GET",
            "/v1/models/de-en/versions/3",
            404,
            "Could not find version 3 of model de-en",
        ),
        BadRequest(
            "metadata, unknown model",
            "GET",
            "/v1/models/fr-en/metadata",
            404,
            "Servable not found for request: Latest(fr-en)",
        ),
        BadRequest("wrong method", "PUT", "/v1/models/de-en", 405, "Method Not Allowed"),
        BadRequest("unknown path", "GET", "/v2/models", 404, "Not Found"),
    ]


@pytest.fixture(scope="session")
def classifier_server(tiny_classifier_saved_model) -> Iterator[str]:
    """serve.py with the tiny classifier's SavedModel as "spam"; yields its URL."""
    process, url = _start_server(f"--saved_model=spam={tiny_classifier_saved_model}")
    yield url
    process.terminate()
    process.communicate(timeout=60)
