"""SIGTERM asks a training run to stop and save, as Ctrl-C does.

SLURM, Kubernetes, ``docker stop``, systemd and preemptible VMs send SIGTERM before they kill a
job. While the training loop runs, :class:`StopRequest` turns it into a request: the loop
finishes the step under way, saves it with its data position and ends (``train.py`` exits with
143, 128 + SIGTERM). In a multi-worker run the request travels with the step's sums
(``training.trainer``), so every worker stops after the same step and saves it, whichever
worker got the signal. A second SIGTERM ends the process at once (the default handling).

Example:
    >>> stop = StopRequest().install()
    >>> try:
    ...     while not stop.requested:
    ...         train_one_step()
    ... finally:
    ...     stop.uninstall()
"""

from __future__ import annotations

import signal
import threading
import types


class StopRequest:
    """Once installed, SIGTERM sets ``requested`` instead of ending the process (installed only
    from the main thread, where Python runs signal handlers; elsewhere it is never set)."""

    def __init__(self) -> None:
        self.requested = False
        self._previous = None

    def install(self) -> StopRequest:
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGTERM, self._request)
        return self

    def uninstall(self) -> None:
        """The SIGTERM handling from before :meth:`install`."""
        if self._previous is not None:
            signal.signal(signal.SIGTERM, self._previous)
            self._previous = None

    def _request(self, signum: int, frame: types.FrameType | None) -> None:
        del signum, frame
        self.requested = True
        signal.signal(signal.SIGTERM, signal.SIG_DFL)  # a second SIGTERM ends the process
