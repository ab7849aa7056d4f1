"""Exported SavedModels behind TensorFlow Serving's REST API, with batching and a demo page.

Needs TensorFlow, ``tensorflow_text`` and the web layer (Starlette, Uvicorn), nothing of this
project. Modules: ``registry`` (the SavedModels, names, versions, signatures, status and
metadata), ``tensors`` (TF Serving's JSON for ``:predict``), ``limits`` (per-request limits),
``runner`` (a model's worker thread), ``batching`` (requests batched together), ``service``
(which of the two runs a request), ``routes`` (the endpoints), ``app`` (the ASGI app),
``errors``; ``static/`` holds the demo page. ``serve.py`` runs it.

The package imports none of its modules, so that ``limits`` and ``batching`` (their options
classes) load without TensorFlow: ``serve.py`` takes its flags' defaults from them and checks
its command line before it imports TensorFlow (seconds).

Example:
    >>> from serving.app import create_app
    >>> from serving.registry import ModelRegistry, load_model
    >>> app = create_app(ModelRegistry([load_model("de-en", "runs/de_en/saved_model")]))
"""
