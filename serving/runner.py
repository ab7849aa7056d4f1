"""Running a model's signatures on its own worker thread, so the event loop stays free.

One thread per model: its calls (batches, or single requests without batching) run one after
the other, each using TensorFlow's own thread pools. Errors become :class:`ApiError`: the
model's invalid-argument errors a 400, anything else a 500 for that call only.

Example:
    >>> runner = ModelRunner("de-en")
    >>> await runner.call(model.signature("serving_default"), [["Ein Hund."]])
    {'translation': array([b'A dog.'], dtype=object)}
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Sequence

import numpy as np
import tensorflow as tf

from serving.errors import ApiError, bad_request
from serving.registry import Signature

_CLIENT_ERRORS = (
    tf.errors.InvalidArgumentError,
    tf.errors.OutOfRangeError,
    tf.errors.FailedPreconditionError,
)


class ModelRunner:
    """A model's worker thread."""

    def __init__(self, model_name: str) -> None:
        self._executor = concurrent.futures.ThreadPoolExecutor(
            1, thread_name_prefix=f"model-{model_name}"
        )

    async def call(
        self, signature: Signature, columns: Sequence[list[str]]
    ) -> dict[str, np.ndarray]:
        """Runs ``signature`` on ``columns`` on the worker thread and waits for it.

        Example:
            >>> outputs = await runner.call(signature, [["Ein Hund.", "Ja"]])
        """
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(self._executor, signature, *columns)
        except _CLIENT_ERRORS as error:
            raise bad_request(error.message) from None
        except Exception as error:  # a failed call fails its own request only
            raise ApiError(500, f"{type(error).__name__}: {error}") from None

    def close(self) -> None:
        """Waits for the running call, then ends the thread."""
        self._executor.shutdown(wait=True)
