import asyncio
import time

import pytest

from serving.errors import ApiError
from serving.limits import Limits


def test_sentences_within_the_limits_pass_and_over_them_name_the_flag():
    limits = Limits(max_sentences=2, max_sentence_chars=5)
    limits.check_sentences(["12345", "äöü"])  # characters, not bytes
    with pytest.raises(ApiError, match=r"3 sentences .* limit is 2 \(--max_sentences\)") as raised:
        limits.check_sentences(["a", "b", "c"])
    assert raised.value.status == 400
    with pytest.raises(ApiError, match=r"sentence 1 has 6 .* 5 \(--max_sentence_chars\)"):
        limits.check_sentences(["a", "123456"])


@pytest.mark.parametrize(
    "field",
    [
        "max_body_bytes",
        "max_sentences",
        "max_sentence_chars",
        "body_timeout_seconds",
        "request_timeout_seconds",
    ],
)
def test_a_limit_that_is_not_positive_is_refused(field):
    with pytest.raises(ValueError, match=f"--{field} must be positive"):
        Limits(**{field: 0})


def test_work_not_done_in_time_is_a_503_with_retry_after():
    limits = Limits(request_timeout_seconds=0.2)

    async def scenario():
        assert await limits.in_time(asyncio.sleep(0.01, "done")) == "done"
        started = time.perf_counter()
        with pytest.raises(ApiError, match=r"within 0.2 s \(--request_timeout_seconds\)") as late:
            await limits.in_time(asyncio.sleep(10))
        return late.value, time.perf_counter() - started

    error, seconds = asyncio.run(scenario())
    assert error.status == 503 and error.headers == {"Retry-After": "1"}
    assert seconds < 1
