import asyncio
import threading

import pytest
import tensorflow as tf

from serving.errors import ApiError
from serving.registry import Signature
from serving.runner import ModelRunner


def signature_running(function) -> Signature:
    return Signature("serving_default", function, ("text",), ("out",), batchable=True)


def test_calls_run_on_the_models_worker_thread_not_the_event_loops():
    threads = []

    def function(text):
        threads.append(threading.current_thread().name)
        return {"out": text}

    runner = ModelRunner("de-en")

    async def call():
        return await runner.call(signature_running(function), [["a", "b"]])

    assert asyncio.run(call())["out"].tolist() == [b"a", b"b"]
    runner.close()
    assert threads[0].startswith("model-de-en") and threads[0] != threading.main_thread().name


@pytest.mark.parametrize(
    "error, status, message",
    [
        (tf.errors.InvalidArgumentError(None, None, "bad input"), 400, "bad input"),
        (tf.errors.ResourceExhaustedError(None, None, "out of memory"), 500, "out of memory"),
        (RuntimeError("a bug"), 500, "RuntimeError: a bug"),
    ],
)
def test_errors_of_a_call_become_api_errors_of_that_call(error, status, message):
    def function(text):
        raise error

    runner = ModelRunner("de-en")
    with pytest.raises(ApiError, match=message) as raised:
        asyncio.run(runner.call(signature_running(function), [["a"]]))
    runner.close()
    assert raised.value.status == status
