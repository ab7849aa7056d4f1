"""Serves exported SavedModels with TensorFlow Serving's REST API, batching and a demo page.

python serve.py --saved_model=runs/de_en/saved_model          # the model "default"
python serve.py --saved_model=de-en=runs/de_en/saved_model,en-de=runs/en_de/saved_model
curl -d '{"instances": ["Ein Hund rennt."]}' http://127.0.0.1:8501/v1/models/de-en:predict

Open http://127.0.0.1:8501/ for the demo page. Needs only TensorFlow, tensorflow_text,
Starlette and Uvicorn (the ``serving`` package imports nothing else of this project).
SIGTERM or Ctrl-C stop accepting connections, finish the requests in flight and exit.
"""

from __future__ import annotations

import signal
import socket
import sys

from absl import app, flags

import cli  # noqa: F401  (first: filters TensorFlow's start-up lines from stderr)

# The flags' defaults. These two modules load without TensorFlow (see serving/__init__.py).
from serving.batching import BatchingOptions
from serving.limits import Limits

_SAVED_MODEL = flags.DEFINE_list(
    "saved_model",
    None,
    "SavedModel directories, comma-separated: DIR or NAME=DIR (a DIR of numbered versions "
    "serves the highest).",
    required=True,
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


def parse_flags(argv: list[str]) -> list[str]:
    """absl's flag parsing, with a one-line error instead of its usage text."""
    try:
        return flags.FLAGS(argv)
    except flags.Error as error:
        sys.exit(f"error: bad command line: {error}")


def main(argv: list[str]) -> None:
    del argv
    try:
        listening = socket.create_server((_HOST.value, _PORT.value))
    except OSError as error:
        sys.exit(f"error: cannot listen on {_HOST.value}:{_PORT.value}: {error.strerror}")
    # Imported after the flags are checked: TensorFlow takes seconds to import.
    import uvicorn

    from serving.app import create_app
    from serving.registry import ModelRegistry, load_model, parse_model_specs

    try:
        specs = parse_model_specs(_SAVED_MODEL.value, _MODEL_NAME.value)
        registry = ModelRegistry([load_model(name, path) for name, path in specs])
    except (ValueError, FileNotFoundError) as error:
        sys.exit(f"error: {error}")
    application = create_app(
        registry,
        Limits(_MAX_BODY_BYTES.value, _MAX_SENTENCES.value, _MAX_SENTENCE_CHARS.value),
        BatchingOptions(_ENABLE_BATCHING.value, _MAX_BATCH_SIZE.value, _BATCH_TIMEOUT_MICROS.value),
    )
    host, port = listening.getsockname()[:2]
    for model in registry.models.values():
        print(f"model {model.name!r} version {model.version}: {model.path}", flush=True)
    print(f"Serving on http://{host}:{port}/ (Ctrl-C or SIGTERM stops)", flush=True)
    server = uvicorn.Server(uvicorn.Config(application, log_level="warning"))
    server.run(sockets=[listening])


def _exit_cleanly(signum: int, frame: object) -> None:
    # Uvicorn shuts down gracefully on SIGTERM or SIGINT, then raises the signal again: exit 0.
    del signum, frame
    sys.exit(0)


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, _exit_cleanly)
    signal.signal(signal.SIGINT, _exit_cleanly)
    app.run(main, flags_parser=parse_flags)
