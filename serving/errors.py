"""The API's errors: an HTTP status and a message, sent as ``{"error": "..."}``.

Statuses follow TensorFlow Serving's mapping of error codes to HTTP: invalid argument 400,
not found 404, client closed request 499, internal 500, unavailable 503 (an overloaded server:
with ``Retry-After``); a body over the size limit is 413, a body that stalls 408.

Example:
    >>> raise ApiError(404, "Servable not found for request: Latest(de-en)")
"""

from __future__ import annotations

from starlette.responses import JSONResponse


class ApiError(Exception):
    """An error answered with ``status`` and ``{"error": message}``."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.headers = status, message, headers or {}

    def response(self) -> JSONResponse:
        """The JSON response for this error.

        Example:
            >>> ApiError(400, "bad").response().body
            b'{"error":"bad"}'
        """
        return JSONResponse({"error": self.message}, self.status, self.headers)


def bad_request(message: str) -> ApiError:
    """A 400 (TensorFlow Serving's INVALID_ARGUMENT).

    Example:
        >>> bad_request("instances must be a list").status
        400
    """
    return ApiError(400, message)
