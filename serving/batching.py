"""Batching across requests: the rows of concurrent requests run as one call of the signature.

As TensorFlow Serving's batching: a batch starts when ``max_batch_size`` rows wait or when the
first waiting request has waited ``batch_timeout_micros``; a request is never split (a request
larger than ``max_batch_size`` runs alone). While a batch runs (on the model's worker thread),
new requests queue for the next one, at most ``max_enqueued_batches`` full batches of them: a
request that would pass that is refused at once with a 503 and ``Retry-After`` (the time the
rows ahead of it should take at the recent pace). Each request gets exactly its own rows of the
outputs, in order. A request whose client went away before its batch started is left out. When a
batch fails for a request's own fault (a 4xx), its requests run one by one, so one bad request
never fails the others; any other failure (a 500) is every request's answer, without retries.
A failure of the batching loop itself fails its batch's requests (500, logged) and the loop goes
on: it never dies while requests wait.

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
import logging
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from serving.errors import ApiError
from serving.overload import Pace, overloaded

if TYPE_CHECKING:  # Annotations only: serve.py imports BatchingOptions before any model.
    from serving.registry import Signature
    from serving.runner import ModelRunner

_LOG = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class BatchingOptions:
    """TensorFlow Serving's batching parameters that apply here (the defaults of ``serve.py``'s
    flags). ``max_enqueued_batches`` also bounds a model's calls waiting without batching."""

    enabled: bool = True
    max_batch_size: int = 64
    batch_timeout_micros: int = 2000
    max_enqueued_batches: int = 16

    def __post_init__(self) -> None:
        if self.max_batch_size < 1 or self.batch_timeout_micros < 0:
            raise ValueError("--max_batch_size must be >= 1 and --batch_timeout_micros >= 0.")
        if self.max_enqueued_batches < 1:
            raise ValueError("--max_enqueued_batches must be >= 1.")


@dataclasses.dataclass(eq=False)
class _Request:
    columns: tuple[list[str], ...]
    rows: int
    arrived: float
    future: asyncio.Future
    queued: bool = True  # counted in the batcher's waiting rows


class Batcher:
    """Batches one signature's requests; :meth:`start` and :meth:`stop` run in the event loop."""

    def __init__(self, runner: ModelRunner, signature: Signature, options: BatchingOptions):
        self.runner, self.signature, self.options = runner, signature, options
        self.max_waiting_rows = options.max_enqueued_batches * options.max_batch_size
        self._waiting: collections.deque[_Request] = collections.deque()
        self._waiting_rows = 0  # rows of the waiting requests whose clients still wait
        self._arrival = asyncio.Event()
        self._running: list[_Request] = []  # the batch the model is working on
        self._pace = Pace()  # seconds per row
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
            _answer(request, ApiError(503, "the server is shutting down"))
        self._waiting.clear()

    async def run(self, columns: Sequence[list[str]]) -> dict[str, np.ndarray]:
        """The signature's outputs for these rows (one list per input), run in some batch; a
        503 at once when the queue is full.

        Example:
            >>> (await batcher.run([["Ein Hund.", "Ja"]]))["translation"].shape
            (2,)
        """
        rows = len(columns[0])
        if self._waiting_rows and self._waiting_rows + rows > self.max_waiting_rows:
            raise overloaded(
                f"{self._waiting_rows} sentences wait already, the most is "
                f"{self.max_waiting_rows} (--max_enqueued_batches x --max_batch_size); try again "
                "later",
                self._pace.seconds_for(self._waiting_rows),
            )
        loop = asyncio.get_running_loop()
        request = _Request(tuple(columns), rows, loop.time(), loop.create_future())
        request.future.add_done_callback(lambda _: self._dequeue(request))
        self._waiting.append(request)
        self._waiting_rows += rows
        self._arrival.set()
        return await request.future  # cancelling this cancels the future: the rows are dropped

    def _dequeue(self, request: _Request) -> None:
        """Stops counting ``request`` among the waiting (it joins a batch, or is answered)."""
        if request.queued:
            request.queued = False
            self._waiting_rows -= request.rows

    async def _serve(self) -> None:
        while True:
            self._running = []
            try:
                self._running = await self._next_batch()
                await self._run(self._running)
            except asyncio.CancelledError:
                raise
            except Exception:  # a bug here must not strand the waiting requests
                _LOG.exception("batching %s: the batch failed", self.signature.name)
                for request in self._running:
                    _answer(request, ApiError(500, "internal error while batching"))

    async def _next_batch(self) -> list[_Request]:
        while True:  # until a request whose client still waits is first in the queue
            while self._waiting and self._waiting[0].future.done():
                self._waiting.popleft()  # its client has gone (already uncounted, or about to be)
            if self._waiting:
                break
            self._arrival.clear()
            await self._arrival.wait()
        loop = asyncio.get_running_loop()
        deadline = self._waiting[0].arrived + self.options.batch_timeout_micros / 1e6
        while self._waiting_rows < self.options.max_batch_size and loop.time() < deadline:
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
                self._dequeue(request)
            self._waiting.popleft()
        return batch

    async def _run(self, batch: list[_Request]) -> None:
        if not batch:
            return
        columns = [
            [row for request in batch for row in request.columns[index]]
            for index in range(len(self.signature.inputs))
        ]
        started = time.perf_counter()
        try:
            outputs = await self.runner.call(self.signature, columns)
        except ApiError as error:
            if error.status < 500 and len(batch) > 1:  # find the request at fault: each alone
                for request in batch:
                    if not request.future.done():
                        await self._run([request])
            else:
                for request in batch:
                    _answer(request, error)
            return
        total = len(columns[0])
        self._pace.observe(total, time.perf_counter() - started)
        for name, value in outputs.items():
            if len(value) != total:
                raise ValueError(f"output {name} has {len(value)} rows for {total} inputs")
        start = 0
        for request in batch:
            end = start + request.rows
            _answer(request, {name: value[start:end] for name, value in outputs.items()})
            start = end


def _answer(request: _Request, outcome: dict[str, np.ndarray] | ApiError) -> None:
    if request.future.done():
        return
    if isinstance(outcome, ApiError):
        request.future.set_exception(outcome)
    else:
        request.future.set_result(outcome)
