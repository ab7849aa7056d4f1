"""What one request may carry and take: body size, sentences, characters per sentence, time.

Each limit is a flag of ``serve.py``; going over one is an error that names the flag: 413 for
the body's size, 408 for a body not received in time, 400 for sentences, 503 (with
``Retry-After``) for a translation not ready in time.

Example:
    >>> limits = Limits(max_sentences=2)
    >>> limits.check_sentences(["Ein Hund.", "Eine Katze.", "Ein Haus."])
    Traceback (most recent call last):
    serving.errors.ApiError: 3 sentences in the request; the limit is 2 (--max_sentences)
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Awaitable, Sequence
from typing import TypeVar

from starlette.requests import ClientDisconnect, Request

from serving.errors import ApiError, bad_request
from serving.overload import overloaded

T = TypeVar("T")


@dataclasses.dataclass(frozen=True)
class Limits:
    """Per-request limits (the defaults of ``serve.py``'s flags).

    ``max_body_bytes``: the JSON body (413 over it); ``max_sentences``: input strings of one
    request; ``max_sentence_chars``: Unicode characters of one input string (400 over either);
    ``body_timeout_seconds``: time to receive the whole body (408 after it);
    ``request_timeout_seconds``: time from the body's end to the outputs, queue included (503
    after it: the server is overloaded).
    """

    max_body_bytes: int = 1 << 20
    max_sentences: int = 64
    max_sentence_chars: int = 1000
    body_timeout_seconds: float = 10.0
    request_timeout_seconds: float = 60.0

    def __post_init__(self) -> None:
        for field in dataclasses.fields(self):
            if not getattr(self, field.name) > 0:
                raise ValueError(f"--{field.name} must be positive.")

    def check_sentences(self, sentences: Sequence[str]) -> None:
        """Raises a 400 :class:`ApiError` when ``sentences`` break a limit.

        Example:
            >>> Limits().check_sentences(["Ein Hund rennt."])   # within the limits: no error
        """
        if len(sentences) > self.max_sentences:
            raise bad_request(
                f"{len(sentences)} sentences in the request; the limit is "
                f"{self.max_sentences} (--max_sentences)"
            )
        for index, sentence in enumerate(sentences):
            if len(sentence) > self.max_sentence_chars:
                raise bad_request(
                    f"sentence {index} has {len(sentence)} characters; the limit is "
                    f"{self.max_sentence_chars} (--max_sentence_chars)"
                )

    async def read_body(self, request: Request) -> bytes:
        """The request body, read only up to ``max_body_bytes`` (413 beyond), within
        ``body_timeout_seconds`` (408 after it, and the connection closes); 499 when the client
        went away.

        Example:
            >>> body = await Limits().read_body(request)   # in a Starlette endpoint
        """
        too_large = ApiError(
            413, f"request body over {self.max_body_bytes} bytes (--max_body_bytes)"
        )
        declared = request.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > self.max_body_bytes:
            raise too_large
        body = bytearray()
        try:
            async with asyncio.timeout(self.body_timeout_seconds):
                async for chunk in request.stream():
                    body += chunk
                    if len(body) > self.max_body_bytes:
                        raise too_large
        except ClientDisconnect as error:
            raise ApiError(499, "client closed request") from error
        except TimeoutError:
            raise ApiError(
                408,
                f"the request body did not arrive within {self.body_timeout_seconds:g} s "
                "(--body_timeout_seconds)",
                {"Connection": "close"},
            ) from None
        return bytes(body)

    async def in_time(self, work: Awaitable[T]) -> T:
        """``await work``, or a 503 (``Retry-After``) after ``request_timeout_seconds``; the work
        is cancelled then (a request still waiting for its batch leaves the queue).

        Example:
            >>> outputs = await limits.in_time(service.run(model, signature, columns))
        """
        try:
            async with asyncio.timeout(self.request_timeout_seconds):
                return await work
        except TimeoutError:
            raise overloaded(
                f"no translation within {self.request_timeout_seconds:g} s "
                "(--request_timeout_seconds): the server is overloaded; try again later",
                self.request_timeout_seconds / 2,
            ) from None
