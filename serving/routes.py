"""The HTTP endpoints: TensorFlow Serving's REST API under ``/v1/``, and the demo page's.

``POST /v1/models/NAME[/versions/V]:predict``, ``GET /v1/models/NAME[/versions/V]`` (status)
and ``GET /v1/models/NAME[/versions/V]/metadata``, matched as TensorFlow Serving matches them
(case-insensitive; anything else under ``/v1/`` is a 400 "Malformed request", elsewhere a 404).
``GET /demo/models`` lists the served models for the page at ``/``.

Example:
    >>> routes = Endpoints(service, Limits()).routes()   # Starlette routes
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Mapping
from pathlib import Path
from typing import TypeVar

from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from exports import contract
from serving.errors import ApiError, bad_request
from serving.limits import Limits
from serving.options import (
    ALIGNMENT_FIELD,
    ALIGNMENTS_FIELD,
    CONFIDENCE,
    DOCUMENT_FIELD,
    HTML_FIELD,
    HYPOTHESES,
    N_BEST_FIELD,
    SOURCE_LANG_FIELD,
    TARGET_PREFIX_FIELD,
    TERMS_FIELD,
    WITH_SCORES_FIELD,
    RunSignature,
    predict_rows,
    row_options,
)
from serving.registry import ServedModel, Signature
from serving.service import ModelService
from serving.tensors import outputs_to_json, parse_predict_body

STATIC_DIR = Path(__file__).resolve().parent / "static"
_PREDICT = re.compile(r"/v1/models/([^/:]+)(?:/versions/(\d+))?:predict", re.IGNORECASE)
_MODEL = re.compile(r"/v1/models/([^/:]+)(?:/versions/(\d+))?(/metadata)?", re.IGNORECASE)
T = TypeVar("T")
# The export contract's names and the row options the demo page uses, so that it spells none.
DEMO_NAMES = {
    "translate": contract.SERVING_DEFAULT,
    "crossAttention": contract.CROSS_ATTENTION,
    "scoredSignature": contract.SCORED,
    "nBestSignature": contract.N_BEST,
    "prefixedSignature": contract.PREFIXED,
    "constrainedSignature": contract.CONSTRAINED,
    "alignmentSignature": contract.ALIGNMENT,
    "textAttention": contract.TEXT_ATTENTION,
    "label": contract.LABEL,
    "pieces": contract.PIECES,
    "text": contract.TEXT,
    "targetLang": contract.TARGET_LANG,
    "translation": contract.TRANSLATION,
    "score": contract.SCORE,
    "attention": contract.ATTENTION,
    "sourcePieces": contract.SOURCE_PIECES,
    "targetPieces": contract.TARGET_PIECES,
    "nBest": N_BEST_FIELD,
    "withScores": WITH_SCORES_FIELD,
    "targetPrefix": TARGET_PREFIX_FIELD,
    "terms": TERMS_FIELD,
    "alignments": ALIGNMENTS_FIELD,
    "document": DOCUMENT_FIELD,
    "sourceLang": SOURCE_LANG_FIELD,
    "html": HTML_FIELD,
    "alignment": ALIGNMENT_FIELD,
    "hypotheses": HYPOTHESES,
    "confidence": CONFIDENCE,
}


class Endpoints:
    """The endpoints over a :class:`ModelService` and the request :class:`Limits`."""

    def __init__(self, service: ModelService, limits: Limits) -> None:
        self.service, self.limits = service, limits

    def routes(self) -> list[BaseRoute]:
        """The Starlette routes: ``/``, ``/static/``, ``/demo/models``, then the REST API."""
        return [
            Route("/", lambda _: FileResponse(STATIC_DIR / "index.html")),
            Mount("/static", StaticFiles(directory=STATIC_DIR), name="static"),
            Route("/demo/models", self.models),
            Route("/{path:path}", self.v1, methods=["GET", "POST"]),
        ]

    async def models(self, request: Request) -> JSONResponse:
        """``{"models": [{"name", "version", "runtime", "signatures", "languages", "beam_size"}],
        "names": {...}}`` for the demo page (``languages``: a multilingual model's target
        languages, else empty; ``names``: the signature, input, output and option names it uses)."""
        del request
        models = self.service.registry.models.values()
        return JSONResponse(
            {
                "models": [
                    {
                        "name": m.name,
                        "version": m.version,
                        "runtime": m.runtime,
                        "signatures": sorted(m.signatures),
                        "languages": list(m.languages),
                        "beam_size": m.beam_size,
                    }
                    for m in models
                ],
                "names": DEMO_NAMES,
            }
        )

    async def v1(self, request: Request) -> Response:
        """TensorFlow Serving's REST API."""
        method, path = request.method, request.url.path
        if method == "POST" and (match := _PREDICT.fullmatch(path)):
            return await self.predict(request, match[1], _version(match[2]))
        if method == "GET" and (match := _MODEL.fullmatch(path)):
            name, version = match[1], _version(match[2])
            if match[3]:
                return JSONResponse(self.service.registry.get(name, version).metadata())
            return JSONResponse(self.service.registry.status(name, version))
        if not path.lower().startswith("/v1/"):
            raise ApiError(404, "Not Found")
        raise bad_request(f"Malformed request: {method} {path}")

    async def predict(self, request: Request, name: str, version: int | None) -> JSONResponse:
        """``:predict`` in row or columnar format (see :mod:`serving.tensors`), rows with
        translation options (see :mod:`serving.options`)."""
        body = await self.limits.read_body(request)
        parsed = parse_predict_body(body)
        model = self.service.registry.get(name, version)
        signature = model.signature(parsed.signature_name)
        options = row_options(parsed.payload, parsed.columnar)
        columns = parsed.columns(signature.inputs)
        documents = {row for row, option in enumerate(options or ()) if option.document}
        for column in columns.values():  # a document row's text: bounded by the body's size
            self.limits.check_sentences([t for row, t in enumerate(column) if row not in documents])
        model.check_languages(columns)
        if options is not None:
            rows = predict_rows(model, signature, columns, options, self._runner(model))
            predictions = await unless_disconnected(request, self.limits.in_time(rows))
            return JSONResponse({"predictions": predictions})
        run = self.service.run(model, signature, [columns[name] for name in signature.inputs])
        outputs = await unless_disconnected(request, self.limits.in_time(run))
        return JSONResponse(outputs_to_json(outputs, parsed.columnar))

    def _runner(self, model: ServedModel) -> RunSignature:
        """Runs one of ``model``'s signatures on named columns, through the service."""

        def run(signature: Signature, columns: Mapping[str, list[str]]) -> Awaitable[dict]:
            return self.service.run(model, signature, [columns[name] for name in signature.inputs])

        return run


def _version(digits: str | None) -> int | None:
    return None if digits is None else int(digits)


async def unless_disconnected(request: Request, work: Awaitable[T]) -> T:
    """``await work``, cancelled (a 499) if the client disconnects first.

    Example:
        >>> outputs = await unless_disconnected(request, service.run(model, signature, columns))
    """
    work_task = asyncio.ensure_future(work)
    watcher = asyncio.ensure_future(_disconnect(request))
    await asyncio.wait({work_task, watcher}, return_when=asyncio.FIRST_COMPLETED)
    if work_task.done():
        watcher.cancel()
        return work_task.result()
    work_task.cancel()
    raise ApiError(499, "client closed request")


async def _disconnect(request: Request) -> None:
    """Returns when the client has gone (the body has been read already)."""
    while (await request.receive())["type"] != "http.disconnect":
        pass
