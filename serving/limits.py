"""What one request may carry: body size, sentences and characters per sentence.

Each limit is a flag of ``serve.py``; going over one is a 4xx error that names the flag.

Example:
    >>> limits = Limits(max_sentences=2)
    >>> limits.check_sentences(["Ein Hund.", "Eine Katze.", "Ein Haus."])
    Traceback (most recent call last):
    serving.errors.ApiError: 3 sentences in the request; the limit is 2 (--max_sentences)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from starlette.requests import ClientDisconnect, Request

from serving.errors import ApiError, bad_request


@dataclasses.dataclass(frozen=True)
class Limits:
    """Per-request limits (the defaults of ``serve.py``'s flags).

    ``max_body_bytes``: the JSON body (413 over it); ``max_sentences``: input strings of one
    request; ``max_sentence_chars``: Unicode characters of one input string (400 over either).
    """

    max_body_bytes: int = 1 << 20
    max_sentences: int = 64
    max_sentence_chars: int = 1000

    def __post_init__(self) -> None:
        for field in dataclasses.fields(self):
            if getattr(self, field.name) < 1:
                raise ValueError(f"--{field.name} must be at least 1.")

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
        """The request body, read only up to ``max_body_bytes`` (413 beyond; 499 when the client
        went away).

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
            async for chunk in request.stream():
                body += chunk
                if len(body) > self.max_body_bytes:
                    raise too_large
        except ClientDisconnect as error:
            raise ApiError(499, "client closed request") from error
        return bytes(body)
