"""Real small file systems for the tests: a tmpfs of a few megabytes that fills up, a read-only one.

The tests mount them in a mount namespace of their own, held by a process that waits on its
standard input: ``unshare --mount`` for root (as in CI), ``unshare --user --map-root-user
--mount`` for any other user whose kernel allows user namespaces. Nothing is mounted on the host,
so nothing is left mounted there whatever happens: when :func:`mount_namespace` ends (a test
passed, failed or was interrupted), the holder exits and the kernel unmounts everything in the
namespace. The scripts under test run as usual, outside it, and reach its file systems through
the holder's root, ``/proc/PID/root/...`` (:meth:`MountNamespace.path`); ``mount`` itself runs in
it through ``nsenter``.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

# How to make the namespace, and how to enter it: root needs no user namespace.
_WAYS = (
    (("--mount",), ("--mount",)),
    (("--user", "--map-root-user", "--mount"), ("--user", "--mount", "--preserve-credentials")),
)
_NEEDED = (
    "These tests mount small tmpfs file systems, which needs root (as in CI) or user namespaces "
    "(`unshare --user --map-root-user --mount true` must work: util-linux's unshare and nsenter, "
    "sysctl user.max_user_namespaces > 0, kernel.unprivileged_userns_clone=1 where it exists)"
)


class MountNamespace:
    """A mount namespace of this test's, in which it mounts tmpfs file systems.

    Example:
        >>> with mount_namespace() as namespace:
        ...     disk = namespace.mount_tmpfs(tmp_path / "disk", "1m")  # /proc/PID/root/.../disk
        ...     namespace.remount(tmp_path / "disk", "size=8m")
    """

    def __init__(self, holder: subprocess.Popen, enter: tuple[str, ...]) -> None:
        self.holder = holder
        self.enter = ("nsenter", f"--target={holder.pid}", *enter, "--")

    def path(self, mount_point: str | os.PathLike) -> Path:
        """Where ``mount_point`` of the namespace is seen from outside it (by any process)."""
        return Path(f"/proc/{self.holder.pid}/root", *Path(os.path.abspath(mount_point)).parts[1:])

    def mount_tmpfs(self, mount_point: str | os.PathLike, size: str, read_only: bool = False):
        """Mounts an empty tmpfs of ``size`` (mount's ``size=``: ``64k``, ``2m``) on the
        directory ``mount_point`` (made if missing), read-only if asked: its :meth:`path`."""
        os.makedirs(mount_point, exist_ok=True)
        options = f"{'ro,' if read_only else ''}size={size}"
        self._mount("-o", options, "tmpfs", str(mount_point))
        return self.path(mount_point)

    def remount(self, mount_point: str | os.PathLike, options: str) -> None:
        """Changes a mounted tmpfs's ``options`` (``size=8m``, ``ro``, ``rw``), files kept."""
        self._mount("-o", f"remount,{options}", "tmpfs", str(mount_point))

    def _mount(self, *arguments: str) -> None:
        # "-t tmpfs" and the source even for a remount: in a user namespace, mount(8) fails a
        # remount that names only the directory.
        done = subprocess.run(
            [*self.enter, "mount", "-t", "tmpfs", *arguments], capture_output=True, text=True
        )
        if done.returncode:
            why = _reason(done.stderr, done.returncode)
            pytest.fail(f"{_NEEDED}; here `mount {' '.join(arguments)}`: {why}.")


@contextlib.contextmanager
def mount_namespace() -> Iterator[MountNamespace]:
    """A :class:`MountNamespace` for the block; everything mounted in it is gone afterwards.
    Fails the test (it is not skipped) saying what is needed when no namespace can be made."""
    holder, enter = _hold_a_namespace()
    try:
        yield MountNamespace(holder, enter)
    finally:
        holder.stdin.close()  # cat ends, and with it the namespace and its mounts
        holder.wait()
        holder.stdout.close()
        holder.stderr.close()


def _hold_a_namespace() -> tuple[subprocess.Popen, tuple[str, ...]]:
    """A process in a new mount namespace (the first of :data:`_WAYS` that works), waiting
    on its standard input, and the nsenter options that enter its namespace."""
    failures = []
    for make, enter in _WAYS:
        try:
            holder = subprocess.Popen(
                ["unshare", *make, "sh", "-c", "echo ready && exec cat"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        except OSError as error:  # no unshare at all
            pytest.fail(f"{_NEEDED}: {error}.")
        if holder.stdout.readline() == "ready\n":
            return holder, enter
        _, stderr = holder.communicate()
        failures.append(f"`unshare {' '.join(make)}`: {_reason(stderr, holder.returncode)}")
    pytest.fail(f"{_NEEDED}; here {'; '.join(failures)}.")


def _reason(stderr: str, returncode: int) -> str:
    """Why a command failed: the first line of its standard error, or its exit code."""
    return stderr.strip().split("\n")[0].rstrip(".") or f"exit code {returncode}"
