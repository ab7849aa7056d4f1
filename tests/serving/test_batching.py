"""The batcher with a stand-in signature (upper-cases its rows, records each call's rows)."""

import asyncio
import time

import numpy as np
import pytest

from serving.batching import Batcher, BatchingOptions
from serving.errors import ApiError, bad_request
from serving.registry import Signature
from serving.runner import ModelRunner


def recording_signature(calls: list[list[str]], slow: float = 0.0) -> Signature:
    """Upper-cases its rows; records each call's rows; "boom" fails the call (the input's fault:
    400), "crash" fails it otherwise (500), "short" returns a row too few, "slow" makes it take
    ``slow`` seconds."""

    def function(rows: list[str]) -> dict[str, np.ndarray]:
        calls.append(rows)
        if "boom" in rows:
            raise bad_request("boom is not a sentence")
        if "crash" in rows:
            raise RuntimeError("the model crashed")
        if "slow" in rows:
            time.sleep(slow)
        outputs = [row.upper().encode() for row in rows]
        return {"translation": np.array(outputs[1:] if "short" in rows else outputs, object)}

    return Signature("serving_default", function, ("text",), ("translation",), batchable=True)


async def run_requests(batcher: Batcher, requests: list[list[str]]) -> list:
    batcher.start()
    try:
        results = await asyncio.gather(
            *(batcher.run([rows]) for rows in requests), return_exceptions=True
        )
    finally:
        await batcher.stop()
    return [
        result if isinstance(result, Exception) else [r.decode() for r in result["translation"]]
        for result in results
    ]


def test_concurrent_requests_share_batches_and_each_gets_its_own_rows_in_order():
    calls: list[list[str]] = []
    batcher = Batcher(
        ModelRunner("test"),
        recording_signature(calls),
        BatchingOptions(max_batch_size=8, batch_timeout_micros=200_000),
    )
    requests = [[f"r{i}s{j}" for j in range(i % 3 + 1)] for i in range(12)]  # 24 rows
    results = asyncio.run(run_requests(batcher, requests))
    assert results == [[row.upper() for row in rows] for rows in requests]
    assert sorted(row for call in calls for row in call) == sorted(
        r for rows in requests for r in rows
    )
    assert all(len(call) <= 8 for call in calls) and len(calls) <= 5  # batched, never over 8
    assert max(len(call) for call in calls) >= 6


def test_a_request_larger_than_the_batch_runs_alone_and_is_not_split():
    calls: list[list[str]] = []
    batcher = Batcher(ModelRunner("test"), recording_signature(calls), BatchingOptions(True, 4, 0))
    requests = [["a", "b", "c", "d", "e", "f"], ["g"]]
    assert asyncio.run(run_requests(batcher, requests)) == [
        ["A", "B", "C", "D", "E", "F"],
        ["G"],
    ]
    assert calls == [["a", "b", "c", "d", "e", "f"], ["g"]]


def test_a_bad_request_fails_alone_and_the_rest_of_its_batch_is_answered():
    calls: list[list[str]] = []
    batcher = Batcher(
        ModelRunner("test"), recording_signature(calls), BatchingOptions(True, 16, 200_000)
    )
    results = asyncio.run(run_requests(batcher, [["a"], ["x", "boom"], ["b", "c"]]))
    assert results[0] == ["A"] and results[2] == ["B", "C"]
    assert isinstance(results[1], ApiError) and results[1].status == 400
    assert results[1].message == "boom is not a sentence"
    assert calls[0] == ["a", "x", "boom", "b", "c"]  # one batch, then each request alone


def test_a_cancelled_request_is_left_out_of_the_next_batch():
    calls: list[list[str]] = []
    batcher = Batcher(
        ModelRunner("test"), recording_signature(calls, slow=0.3), BatchingOptions(True, 16, 0)
    )

    async def scenario() -> list:
        batcher.start()
        busy = asyncio.ensure_future(batcher.run([["slow"]]))  # holds the worker thread
        await asyncio.sleep(0.1)
        gone = asyncio.ensure_future(batcher.run([["gone"]]))
        kept = asyncio.ensure_future(batcher.run([["kept"]]))
        await asyncio.sleep(0.01)
        gone.cancel()  # its client disconnected while it waited
        results = [await busy, await kept]
        await batcher.stop()
        return results

    busy, kept = asyncio.run(scenario())
    assert kept["translation"].tolist() == [b"KEPT"]
    assert calls == [["slow"], ["kept"]]


def test_requests_not_answered_at_shutdown_get_a_503():
    batcher = Batcher(
        ModelRunner("test"), recording_signature([], slow=0.3), BatchingOptions(True, 1, 0)
    )

    async def scenario() -> list:
        batcher.start()
        running = asyncio.ensure_future(batcher.run([["slow"]]))
        waiting = asyncio.ensure_future(batcher.run([["a"]]))  # max_batch_size 1: waits
        await asyncio.sleep(0.1)
        await batcher.stop()
        return await asyncio.gather(running, waiting, return_exceptions=True)

    for result in asyncio.run(scenario()):
        assert isinstance(result, ApiError) and result.status == 503, result


@pytest.mark.parametrize(
    "options, message",
    [
        (dict(max_batch_size=0), "--max_batch_size must be >= 1"),
        (dict(batch_timeout_micros=-1), "--max_batch_size must be >= 1"),
        (dict(max_enqueued_batches=0), "--max_enqueued_batches must be >= 1"),
    ],
)
def test_bad_batching_options_are_refused(options, message):
    with pytest.raises(ValueError, match=message):
        BatchingOptions(**options)


def test_a_batch_that_fails_for_another_reason_than_its_input_fails_every_request_once():
    calls: list[list[str]] = []
    batcher = Batcher(
        ModelRunner("test"), recording_signature(calls), BatchingOptions(True, 16, 200_000)
    )
    results = asyncio.run(run_requests(batcher, [["a"], ["crash"], ["b"]]))
    for result in results:
        assert isinstance(result, ApiError) and result.status == 500, result
        assert result.message == "RuntimeError: the model crashed"
    assert calls == [["a", "crash", "b"]]  # no retries one by one after a 500


def test_a_broken_batch_fails_its_requests_and_the_batcher_goes_on(caplog):
    calls: list[list[str]] = []
    batcher = Batcher(
        ModelRunner("test"), recording_signature(calls), BatchingOptions(True, 16, 100_000)
    )

    async def scenario() -> list:
        batcher.start()
        broken = await asyncio.gather(
            batcher.run([["a", "short"]]), batcher.run([["b"]]), return_exceptions=True
        )
        after = await batcher.run([["c"]])
        await batcher.stop()
        return [*broken, after]

    broken_a, broken_b, after = asyncio.run(scenario())
    for result in (broken_a, broken_b):
        assert isinstance(result, ApiError) and result.status == 500, result
    assert after["translation"].tolist() == [b"C"]
    assert "output translation has 2 rows for 3 inputs" in caplog.text


def test_a_full_queue_refuses_at_once_with_503_and_retry_after():
    calls: list[list[str]] = []
    options = BatchingOptions(
        True, max_batch_size=2, batch_timeout_micros=0, max_enqueued_batches=2
    )
    batcher = Batcher(ModelRunner("test"), recording_signature(calls, slow=0.3), options)

    async def scenario() -> list:
        batcher.start()
        running = asyncio.ensure_future(batcher.run([["slow"]]))
        await asyncio.sleep(0.1)  # the batch runs; what comes now waits
        waiting = [asyncio.ensure_future(batcher.run([[f"w{i}"]])) for i in range(4)]
        await asyncio.sleep(0)
        started = time.perf_counter()
        with pytest.raises(ApiError) as refused:
            await batcher.run([["one too many"]])
        refused_in = time.perf_counter() - started
        waiting[0].cancel()  # a client gone: its row no longer counts
        await asyncio.sleep(0)
        accepted = await batcher.run([["room again"]])
        answers = [await running, *[await w for w in waiting[1:]], accepted]
        await batcher.stop()
        return refused.value, refused_in, answers

    error, refused_in, answers = asyncio.run(scenario())
    assert error.status == 503 and refused_in < 0.05
    assert "4 sentences wait already, the most is 4" in error.message
    assert 1 <= int(error.headers["Retry-After"]) <= 60
    assert [a["translation"].tolist() for a in answers] == [
        [b"SLOW"],
        [b"W1"],
        [b"W2"],
        [b"W3"],
        [b"ROOM AGAIN"],
    ]
    assert ["w0"] not in calls and all("w0" not in call for call in calls)
