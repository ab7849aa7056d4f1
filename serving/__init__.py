"""Exported SavedModels behind TensorFlow Serving's REST API, with batching and a demo page.

Needs TensorFlow, ``tensorflow_text`` and the web layer (Starlette, Uvicorn), nothing of this
project. Modules: ``registry`` (the SavedModels, names, versions, signatures, status and
metadata), ``tensors`` (TF Serving's JSON for ``:predict``), ``limits`` (per-request limits),
``runner`` (a model's worker thread), ``batching`` (requests batched together), ``service``
(which of the two runs a request), ``routes`` (the endpoints), ``app`` (the ASGI app),
``errors``; ``static/`` holds the demo page. ``serve.py`` runs it.

Example:
    >>> from serving import ModelRegistry, create_app, load_model
    >>> app = create_app(ModelRegistry([load_model("de-en", "runs/de_en/saved_model")]))
"""

from serving.app import create_app
from serving.batching import BatchingOptions
from serving.limits import Limits
from serving.registry import ModelRegistry, load_model, parse_model_specs

__all__ = [
    "BatchingOptions",
    "Limits",
    "ModelRegistry",
    "create_app",
    "load_model",
    "parse_model_specs",
]
