"""Refusing work the server cannot do in time: a 503 with ``Retry-After``, estimated from how
fast the queue has been draining.

Example:
    >>> pace = Pace()
    >>> pace.observe(units=64, seconds=0.8)      # a batch of 64 sentences took 0.8 s
    >>> overloaded("the queue is full", pace.seconds_for(200)).headers
    {'Retry-After': '3'}
"""

from __future__ import annotations

import math

from serving.errors import ApiError

_SMOOTHING = 0.2  # weight of the newest observation
_UNKNOWN_SECONDS_PER_UNIT = 1.0  # before anything has run


class Pace:
    """Seconds per unit of work (a sentence, a call), an exponential moving average."""

    def __init__(self) -> None:
        self.seconds_per_unit: float | None = None

    def observe(self, units: int, seconds: float) -> None:
        """Records that ``units`` of work took ``seconds``."""
        latest = seconds / max(units, 1)
        previous = self.seconds_per_unit
        self.seconds_per_unit = (
            latest if previous is None else ((1 - _SMOOTHING) * previous + _SMOOTHING * latest)
        )

    def seconds_for(self, units: int) -> float:
        """How long ``units`` of work should take at the recent pace."""
        return units * (self.seconds_per_unit or _UNKNOWN_SECONDS_PER_UNIT)


def overloaded(message: str, retry_after_seconds: float) -> ApiError:
    """A 503 telling the client when to try again (``Retry-After``: whole seconds, 1 to 60).

    Example:
        >>> overloaded("the queue is full", 2.3).headers
        {'Retry-After': '3'}
    """
    seconds = min(60, max(1, math.ceil(retry_after_seconds)))
    return ApiError(503, message, {"Retry-After": str(seconds)})
