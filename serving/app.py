"""The ASGI application: the endpoints, JSON errors, and the service's lifespan.

Every error is ``{"error": "..."}`` with TensorFlow Serving's status codes; an unexpected
exception fails only its request (500), never the server.

Example:
    >>> app = create_app(ModelRegistry([load_saved_model("de-en", "runs/de_en/saved_model")]))
    >>> uvicorn.run(app, host="127.0.0.1", port=8501)
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse

from serving.batching import BatchingOptions
from serving.errors import ApiError
from serving.limits import Limits
from serving.registry import ModelRegistry
from serving.routes import Endpoints
from serving.service import ModelService


def create_app(
    registry: ModelRegistry,
    limits: Limits = Limits(),
    batching: BatchingOptions = BatchingOptions(),
) -> Starlette:
    """The Starlette app serving ``registry``'s models.

    Example:
        >>> with TestClient(create_app(registry)) as client:
        ...     client.post("/v1/models/de-en:predict", json={"instances": ["Ein Hund."]}).json()
        {'predictions': ['A dog.']}
    """
    service = ModelService(registry, batching)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        del app
        service.start()
        try:
            yield
        finally:
            await service.stop()

    return Starlette(
        routes=Endpoints(service, limits).routes(),
        exception_handlers={
            ApiError: _api_error,
            HTTPException: _http_error,
            Exception: _internal_error,
        },
        lifespan=lifespan,
    )


async def _api_error(request: Request, error: Exception) -> JSONResponse:
    del request
    assert isinstance(error, ApiError)
    return error.response()


async def _http_error(request: Request, error: Exception) -> JSONResponse:
    del request
    assert isinstance(error, HTTPException)
    return JSONResponse({"error": error.detail}, status_code=error.status_code)


async def _internal_error(request: Request, error: Exception) -> JSONResponse:
    del request
    return JSONResponse({"error": f"internal error: {type(error).__name__}"}, status_code=500)
