"""A model's worker thread: off the event loop, errors per call, a bounded queue and close."""

import asyncio
import threading
import time

import numpy as np
import pytest

from serving.errors import ApiError, bad_request
from serving.registry import Signature
from serving.runner import ModelRunner


def signature_running(function) -> Signature:
    return Signature("serving_default", function, ("text",), ("out",), batchable=True)


def echo(text: list[str]) -> dict[str, np.ndarray]:
    return {"out": np.array(text, dtype=object)}


def test_calls_run_on_the_models_worker_thread_not_the_event_loops():
    threads = []

    def function(text):
        threads.append(threading.current_thread().name)
        return echo(text)

    async def call():
        runner = ModelRunner("de-en")
        outputs = await runner.call(signature_running(function), [["a", "b"]])
        assert await runner.close(timeout=5)
        return outputs

    assert asyncio.run(call())["out"].tolist() == ["a", "b"]
    assert threads[0].startswith("model-de-en") and threads[0] != threading.main_thread().name


@pytest.mark.parametrize(
    "error, status, message",
    [
        (bad_request("bad input"), 400, "bad input"),
        (MemoryError("out of memory"), 500, "MemoryError: out of memory"),
        (RuntimeError("a bug"), 500, "RuntimeError: a bug"),
    ],
)
def test_errors_of_a_call_become_api_errors_of_that_call(error, status, message):
    def function(text):
        if text == ["bad"]:
            raise error
        return echo(text)

    async def calls():
        runner = ModelRunner("de-en")
        with pytest.raises(ApiError, match=message) as raised:
            await runner.call(signature_running(function), [["bad"]])
        assert raised.value.status == status
        return await runner.call(signature_running(function), [["good"]])

    assert asyncio.run(calls())["out"].tolist() == ["good"]


def test_a_full_queue_refuses_at_once_with_503_and_retry_after_and_gone_callers_are_skipped():
    release, ran = threading.Event(), []

    def function(text):
        ran.append(text[0])
        if text == ["hold"]:
            release.wait(10)
        return echo(text)

    async def scenario():
        runner = ModelRunner("de-en", max_waiting=2)
        signature = signature_running(function)
        holding = asyncio.ensure_future(runner.call(signature, [["hold"]]))
        await asyncio.sleep(0.1)  # the worker thread holds it
        gone = asyncio.ensure_future(runner.call(signature, [["gone"]]))
        kept = asyncio.ensure_future(runner.call(signature, [["kept"]]))
        await asyncio.sleep(0.05)
        started = time.perf_counter()
        with pytest.raises(
            ApiError, match=r"2 calls wait already \(--max_enqueued_batches\)"
        ) as full:
            await runner.call(signature, [["refused"]])
        refused_in = time.perf_counter() - started
        gone.cancel()  # its client went away while it waited
        release.set()
        results = [await holding, await kept]
        await runner.close(timeout=5)
        return full.value, refused_in, results

    error, refused_in, results = asyncio.run(scenario())
    assert error.status == 503 and int(error.headers["Retry-After"]) >= 1
    assert refused_in < 0.1
    assert [result["out"].tolist() for result in results] == [["hold"], ["kept"]]
    assert ran == ["hold", "kept"]


def test_close_gives_up_on_a_call_that_never_returns_without_blocking_the_event_loop():
    def hangs(text):
        threading.Event().wait()  # forever

    async def scenario():
        runner = ModelRunner("de-en")
        asyncio.ensure_future(runner.call(signature_running(hangs), [["a"]]))
        await asyncio.sleep(0.05)
        ticks = 0

        async def tick():
            nonlocal ticks
            while True:
                await asyncio.sleep(0.01)
                ticks += 1

        ticker = asyncio.ensure_future(tick())
        started = time.perf_counter()
        finished = await runner.close(timeout=0.5)
        ticker.cancel()
        return finished, time.perf_counter() - started, ticks

    finished, seconds, ticks = asyncio.run(scenario())
    assert not finished and 0.5 <= seconds < 2
    assert ticks >= 20  # the event loop kept running while close waited


def test_a_queue_of_fewer_than_one_call_is_refused():
    with pytest.raises(ValueError, match="max_waiting must be at least 1"):
        ModelRunner("de-en", max_waiting=0)
