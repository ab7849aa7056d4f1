"""Serves exported models with TensorFlow Serving's REST API, batching and a demo page.

python serve.py --saved_model=runs/de_en/saved_model          # the model "default"
python serve.py --saved_model=de-en=runs/de_en/saved_model,en-de=runs/en_de/saved_model
python serve.py --ctranslate2=de-en=runs/de_en/ct2_int8        # no TensorFlow loaded
curl -d '{"instances": ["Ein Hund rennt."]}' http://127.0.0.1:8501/v1/models/de-en:predict

Open http://127.0.0.1:8501/ for the demo page. SavedModels need TensorFlow and tensorflow_text,
CTranslate2 exports ctranslate2 and sentencepiece; the web layer is Starlette and Uvicorn.
A full queue or a late translation is a 503 with ``Retry-After``, a stalled body a 408. SIGTERM
or Ctrl-C stop accepting connections, finish the requests in flight (at most
``--graceful_shutdown_seconds``) and exit.
"""

from __future__ import annotations

import logging
import signal
import sys

from absl import app, flags

import cli  # noqa: F401  (first: filters TensorFlow's start-up lines from stderr)

# The flags' defaults. These two modules load without TensorFlow (see serving/__init__.py).
from serving.batching import BatchingOptions
from serving.limits import Limits
from serving.sockets import listen

# Repeated or comma-separated: every entry of every occurrence is served.
_SAVED_MODEL = flags.DEFINE_multi_string(
    "saved_model",
    [],
    "SavedModel directories, comma-separated or the flag repeated: DIR or NAME=DIR (a DIR of "
    "numbered versions serves the highest).",
)
_CTRANSLATE2 = flags.DEFINE_multi_string(
    "ctranslate2",
    [],
    "CTranslate2 exports (export.py --format=ctranslate2), comma-separated or the flag "
    "repeated: DIR or NAME=DIR.",
)
_CTRANSLATE2_THREADS = flags.DEFINE_integer(
    "ctranslate2_threads",
    1,
    "CPU threads of each CTranslate2 model (0: one per core). One leaves a core to the server: "
    "faster on two cores (docs/PERFORMANCE.md).",
    lower_bound=0,
)
_MODEL_NAME = flags.DEFINE_string("model_name", "default", "The name of a DIR given without one.")
_HOST = flags.DEFINE_string("host", "127.0.0.1", "Address to listen on (loopback by default).")
_PORT = flags.DEFINE_integer(
    "port", 8501, "Port (0: any free port).", lower_bound=0, upper_bound=65535
)
_ENABLE_BATCHING = flags.DEFINE_boolean(
    "enable_batching",
    BatchingOptions.enabled,
    "Translate the sentences of concurrent requests together.",
)
_MAX_BATCH_SIZE = flags.DEFINE_integer(
    "max_batch_size", BatchingOptions.max_batch_size, "Most sentences in one batch.", lower_bound=1
)
_BATCH_TIMEOUT_MICROS = flags.DEFINE_integer(
    "batch_timeout_micros",
    BatchingOptions.batch_timeout_micros,
    "Longest wait for more sentences before a batch starts.",
    lower_bound=0,
)
_MAX_ENQUEUED_BATCHES = flags.DEFINE_integer(
    "max_enqueued_batches",
    BatchingOptions.max_enqueued_batches,
    "Most full batches (without batching: requests) waiting per model; more get a 503.",
    lower_bound=1,
)
_MAX_BODY_BYTES = flags.DEFINE_integer(
    "max_body_bytes", Limits.max_body_bytes, "Largest request body (413 over it).", lower_bound=1
)
_MAX_SENTENCES = flags.DEFINE_integer(
    "max_sentences",
    Limits.max_sentences,
    "Most sentences in one request (400 over it).",
    lower_bound=1,
)
_MAX_SENTENCE_CHARS = flags.DEFINE_integer(
    "max_sentence_chars",
    Limits.max_sentence_chars,
    "Longest sentence, in characters (400 over it).",
    lower_bound=1,
)
_BODY_TIMEOUT_SECONDS = flags.DEFINE_float(
    "body_timeout_seconds",
    Limits.body_timeout_seconds,
    "Longest time to receive a request's body (408 after it).",
)
_REQUEST_TIMEOUT_SECONDS = flags.DEFINE_float(
    "request_timeout_seconds",
    Limits.request_timeout_seconds,
    "Longest wait for a translation, queue included (503 after it).",
)
_GRACEFUL_SHUTDOWN_SECONDS = flags.DEFINE_float(
    "graceful_shutdown_seconds",
    30.0,
    "On SIGTERM, longest wait for the requests in flight before exiting.",
    lower_bound=0.0,
)


def parse_flags(argv: list[str]) -> list[str]:
    """absl's flag parsing, with a one-line error instead of its usage text."""
    try:
        return flags.FLAGS(argv)
    except flags.Error as error:
        sys.exit(f"error: bad command line: {error}")


def main(argv: list[str]) -> None:
    del argv
    if not _SAVED_MODEL.value and not _CTRANSLATE2.value:
        sys.exit("error: nothing to serve: give --saved_model=DIR or --ctranslate2=DIR (or both)")
    try:
        limits = Limits(
            max_body_bytes=_MAX_BODY_BYTES.value,
            max_sentences=_MAX_SENTENCES.value,
            max_sentence_chars=_MAX_SENTENCE_CHARS.value,
            body_timeout_seconds=_BODY_TIMEOUT_SECONDS.value,
            request_timeout_seconds=_REQUEST_TIMEOUT_SECONDS.value,
        )
        batching = BatchingOptions(
            enabled=_ENABLE_BATCHING.value,
            max_batch_size=_MAX_BATCH_SIZE.value,
            batch_timeout_micros=_BATCH_TIMEOUT_MICROS.value,
            max_enqueued_batches=_MAX_ENQUEUED_BATCHES.value,
        )
        listening = listen(_HOST.value, _PORT.value)
    except ValueError as error:
        sys.exit(f"error: bad command line: {error}")
    except OSError as error:
        sys.exit(f"error: cannot listen on {_HOST.value}:{_PORT.value}: {error.strerror}")
    # Imported after the flags are checked: TensorFlow takes seconds to import (and only a
    # SavedModel needs it).
    import uvicorn

    from serving.app import create_app
    from serving.registry import ModelRegistry

    try:
        registry = ModelRegistry(_load_models())
    except (ValueError, FileNotFoundError) as error:
        sys.exit(f"error: {error}")
    _log_server_messages()
    host, port = listening.getsockname()[:2]
    for model in registry.models.values():
        print(f"{model.runtime} {model.name!r} version {model.version}: {model.path}", flush=True)
    print(f"Serving on http://{host}:{port}/ (Ctrl-C or SIGTERM stops)", flush=True)
    config = uvicorn.Config(
        create_app(registry, limits, batching),
        log_level="warning",
        timeout_graceful_shutdown=_GRACEFUL_SHUTDOWN_SECONDS.value,
    )
    uvicorn.Server(config).run(sockets=[listening])


def _log_server_messages() -> None:
    """The serving package's warnings and errors on stderr as ``serve.py: WARNING: ...`` (not
    through absl's handler, whose lines read like TensorFlow's and are filtered as such)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("serve.py: %(levelname)s: %(message)s"))
    logger = logging.getLogger("serving")
    logger.addHandler(handler)
    logger.propagate = False


def _entries(occurrences: list[str]) -> list[str]:
    """The model entries of a repeatable flag: each occurrence split at its commas."""
    return [entry for occurrence in occurrences for entry in occurrence.split(",") if entry]


def _load_models() -> list:
    """The models of --saved_model and --ctranslate2 (each runtime imported only if used)."""
    from serving.registry import parse_model_specs

    models = []
    if _SAVED_MODEL.value:
        from serving.saved_model import load_saved_model

        for name, path in parse_model_specs(_entries(_SAVED_MODEL.value), _MODEL_NAME.value):
            models.append(load_saved_model(name, path))
    if _CTRANSLATE2.value:
        from serving.ctranslate2_model import load_ctranslate2_model

        entries = _entries(_CTRANSLATE2.value)
        specs = parse_model_specs(entries, _MODEL_NAME.value, "--ctranslate2")
        for name, path in specs:
            models.append(load_ctranslate2_model(name, path, _CTRANSLATE2_THREADS.value))
    return models


def _exit_cleanly(signum: int, frame: object) -> None:
    # Uvicorn shuts down gracefully on SIGTERM or SIGINT, then raises the signal again: exit 0.
    del signum, frame
    sys.exit(0)


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, _exit_cleanly)
    signal.signal(signal.SIGINT, _exit_cleanly)
    app.run(main, flags_parser=parse_flags)
