"""Exported models behind TensorFlow Serving's REST API, with batching, overload control and a
demo page.

A SavedModel needs TensorFlow and ``tensorflow_text``, a CTranslate2 export ctranslate2 and
sentencepiece (and of this project only ``exports``, the export contract and its readers); the web
layer is Starlette and Uvicorn. Modules: ``registry`` (served models: names, versions, signatures,
status and metadata, whatever runs them), ``saved_model`` and ``ctranslate2_model`` (loading each
kind), ``tensors`` (TF Serving's JSON for ``:predict``), ``options`` (a row's translation options:
``n_best``, ``with_scores``), ``limits`` (per-request limits and
timeouts), ``runner`` (a model's worker thread and its bounded queue), ``batching`` (requests
batched together, a bounded queue), ``overload`` (503s with ``Retry-After``), ``service`` (which of
the two runs a request), ``routes`` (the endpoints), ``app`` (the ASGI app), ``errors``; ``static/``
holds the demo page. ``serve.py`` runs it.

The package imports none of its modules, and only ``saved_model`` imports TensorFlow: ``serve.py``
takes its flags' defaults from ``limits`` and ``batching`` and checks its command line before it
imports TensorFlow (seconds), and a server of CTranslate2 exports never imports it.

Example:
    >>> from serving.app import create_app
    >>> from serving.registry import ModelRegistry
    >>> from serving.saved_model import load_saved_model
    >>> app = create_app(ModelRegistry([load_saved_model("de-en", "runs/de_en/saved_model")]))
"""
