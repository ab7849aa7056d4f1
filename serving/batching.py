"""Batching across requests: the rows of concurrent requests run as one call of the signature.

As TensorFlow Serving's batching: a batch starts when ``max_batch_size`` rows wait or when the
first waiting request has waited ``batch_timeout_micros``; a request is never split (a request
larger than ``max_batch_size`` runs alone). While a batch runs (on the model's worker thread),
new requests queue for the next one. Each request gets exactly its own rows of the outputs, in
order. A request whose client went away before its batch started is left out; when a batch
fails, its requests run one by one, so one bad request never fails the others.

Example:
    >>> batcher = Batcher(runner, signature, BatchingOptions(max_batch_size=32))
    >>> batcher.start()          # in the event loop
    >>> await batcher.run((["Ein Hund."],))
    {'translation': array([b'A dog.'], dtype=object)}
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from serving.errors import ApiError

if TYPE_CHECKING:  # Annotations only: serve.py imports BatchingOptions without TensorFlow.
    from serving.registry import Signature
    from serving.runner import ModelRunner


@dataclasses.dataclass(frozen=True)
class BatchingOptions:
    """TensorFlow Serving's batching parameters that apply here (the defaults of ``serve.py``'s
    flags)."""

    enabled: bool = True
    max_batch_size: int = 64
    batch_timeout_micros: int = 2000

    def __post_init__(self) -> None:
        if self.max_batch_size < 1 or self.batch_timeout_micros < 0:
            raise ValueError("--max_batch_size must be >= 1 and --batch_timeout_micros >= 0.")


@dataclasses.dataclass(eq=False)
class _Request:
    columns: tuple[list[str], ...]
    rows: int
    arrived: float
    future: asyncio.Future


class Batcher:
    """Batches one signature's requests; :meth:`start` and :meth:`stop` run in the event loop."""

    def __init__(self, runner: ModelRunner, signature: Signature, options: BatchingOptions):
        self.runner, self.signature, self.options = runner, signature, options
        self._waiting: collections.deque[_Request] = collections.deque()
        self._arrival = asyncio.Event()
        self._running: list[_Request] = []  # the batch the model is working on
        self._task: asyncio.Task | None = None

    def start(self) -> None:
        """Starts forming and running batches (in the running event loop)."""
        self._task = asyncio.get_running_loop().create_task(self._serve())

    async def stop(self) -> None:
        """Stops; requests not answered yet get a 503."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        for request in [*self._running, *self._waiting]:
            if not request.future.done():
                request.future.set_exception(ApiError(503, "the server is shutting down"))
        self._waiting.clear()

    async def run(self, columns: Sequence[list[str]]) -> dict[str, np.ndarray]:
        """The signature's outputs for these rows (one list per input), run in some batch.

        Example:
            >>> (await batcher.run([["Ein Hund.", "Ja"]]))["translation"].shape
            (2,)
        """
        loop = asyncio.get_running_loop()
        request = _Request(tuple(columns), len(columns[0]), loop.time(), loop.create_future())
        self._waiting.append(request)
        self._arrival.set()
        return await request.future  # cancelling this cancels the future: the rows are dropped

    async def _serve(self) -> None:
        while True:
            self._running = await self._next_batch()
            if self._running:
                await self._run(self._running)

    def _live_rows(self) -> int:
        return sum(request.rows for request in self._waiting if not request.future.done())

    async def _next_batch(self) -> list[_Request]:
        while not self._live_rows():
            self._waiting.clear()
            self._arrival.clear()
            await self._arrival.wait()
        loop = asyncio.get_running_loop()
        first = next(request for request in self._waiting if not request.future.done())
        deadline = first.arrived + self.options.batch_timeout_micros / 1e6
        while self._live_rows() < self.options.max_batch_size and loop.time() < deadline:
            self._arrival.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._arrival.wait(), deadline - loop.time())
        batch: list[_Request] = []
        rows = 0
        while self._waiting:
            request = self._waiting[0]
            if not request.future.done():
                if batch and rows + request.rows > self.options.max_batch_size:
                    break
                batch.append(request)
                rows += request.rows
            self._waiting.popleft()
        return batch

    async def _run(self, batch: list[_Request]) -> None:
        columns = [
            [row for request in batch for row in request.columns[index]]
            for index in range(len(self.signature.inputs))
        ]
        try:
            outputs = await self.runner.call(self.signature, columns)
        except ApiError as error:
            if len(batch) > 1:  # find the request at fault: run each alone
                for request in batch:
                    if not request.future.done():
                        await self._run([request])
            elif not batch[0].future.done():
                batch[0].future.set_exception(error)
            return
        start = 0
        for request in batch:
            if not request.future.done():
                end = start + request.rows
                request.future.set_result(
                    {name: value[start:end] for name, value in outputs.items()}
                )
            start += request.rows
