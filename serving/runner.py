"""Running a model's calls on its own worker thread, so the event loop stays free.

One thread per model: its calls (batches, or single requests without batching) run one after
the other, each using the runtime's own thread pools. At most ``max_waiting`` calls wait for the
thread; one more is refused at once with a 503 whose ``Retry-After`` is how long the waiting
calls should take. A call whose caller has gone (a disconnect, a timeout) before it starts is
skipped. A signature's :class:`ApiError` (its input's fault: a 400) is the call's answer; any
other exception a 500 for that call only.

The thread is a daemon: a model call that never returns cannot keep the process from exiting;
:meth:`ModelRunner.close` waits for it a bounded time, off the event loop.

Example:
    >>> runner = ModelRunner("de-en", max_waiting=16)
    >>> await runner.call(model.signature("serving_default"), [["Ein Hund."]])
    {'translation': array([b'A dog.'], dtype=object)}
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import queue
import threading
import time
from collections.abc import Sequence

import numpy as np

from serving.errors import ApiError
from serving.overload import Pace, overloaded
from serving.registry import Signature

_LOG = logging.getLogger(__name__)


class ModelRunner:
    """A model's worker thread and its bounded queue of calls."""

    def __init__(self, model_name: str, max_waiting: int = 16) -> None:
        if max_waiting < 1:
            raise ValueError(f"max_waiting must be at least 1, got {max_waiting}.")
        self.model_name, self.max_waiting = model_name, max_waiting
        self._calls: queue.SimpleQueue = queue.SimpleQueue()
        self._pace = Pace()  # seconds per call
        self._closing = False
        self._thread = threading.Thread(target=self._work, name=f"model-{model_name}", daemon=True)
        self._thread.start()

    async def call(
        self, signature: Signature, columns: Sequence[list[str]]
    ) -> dict[str, np.ndarray]:
        """Runs ``signature`` on ``columns`` on the worker thread and waits for it; a 503 when
        ``max_waiting`` calls wait already.

        Example:
            >>> outputs = await runner.call(signature, [["Ein Hund.", "Ja"]])
        """
        waiting = self._calls.qsize()
        if waiting >= self.max_waiting:
            raise overloaded(
                f"model {self.model_name} is busy: {waiting} calls wait already "
                "(--max_enqueued_batches); try again later",
                self._pace.seconds_for(waiting + 1),
            )
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        self._calls.put((signature, columns, future, loop))
        return await future  # cancelling it leaves the call out if it has not started

    def _work(self) -> None:
        while (item := self._calls.get()) is not None:
            signature, columns, future, loop = item
            if future.done():  # its caller has gone
                continue
            if self._closing:
                _settle_from_thread(
                    future, loop, None, ApiError(503, "the server is shutting down")
                )
                continue
            started = time.perf_counter()
            result, error = None, None
            try:
                result = signature(*columns)
            except ApiError as raised:
                error = raised
            except Exception as raised:  # a failed call fails its own request only
                error = ApiError(500, f"{type(raised).__name__}: {raised}")
            self._pace.observe(1, time.perf_counter() - started)
            _settle_from_thread(future, loop, result, error)

    async def close(self, timeout: float) -> bool:
        """Ends the thread after the running call (calls still waiting are dropped), waiting at
        most ``timeout`` seconds, off the event loop; False (and a warning) if a call is still
        running then: the daemon thread is abandoned.

        Example:
            >>> await runner.close(timeout=1.0)
            True
        """
        self._closing = True
        self._calls.put(None)
        await asyncio.to_thread(self._thread.join, timeout)
        if self._thread.is_alive():
            _LOG.warning(
                "model %s: a call still running after %.1f s is abandoned", self.model_name, timeout
            )
            return False
        return True


def _settle_from_thread(
    future: asyncio.Future, loop: asyncio.AbstractEventLoop, result: object, error: ApiError | None
) -> None:
    with contextlib.suppress(RuntimeError):  # the event loop has closed: nobody waits
        loop.call_soon_threadsafe(_settle, future, result, error)


def _settle(future: asyncio.Future, result: object, error: ApiError | None) -> None:
    if future.done():
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)
