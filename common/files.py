"""Files a reader never sees half-written: atomic text writes and the small JSON files of a run.

A write the file system refuses (a full disk, a read-only directory) raises
:class:`common.storage.StorageError` naming the file; the old file is left as it was.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from typing import BinaryIO, TextIO

from common.storage import writing


def atomic_write_text(path: str, text: str) -> None:
    """Writes ``text`` to ``path`` so that readers see the old file or the new one, never half.

    Example:
        >>> atomic_write_text("/tmp/run/eval/hypotheses.txt", "A dog runs.\\n")
    """
    with atomic_file(path) as file:
        file.write(text)


@contextlib.contextmanager
def atomic_file(path: str, binary: bool = False) -> Iterator[TextIO | BinaryIO]:
    """A text file (``binary``: a binary one) to write ``path`` through, piece by piece (a file
    of any size, streamed): readers see the old file or the whole new one, never part of it; an
    error in the block leaves the old one. A write the file system refuses raises a StorageError
    naming ``path``.

    Example:
        >>> with atomic_file("/tmp/scores.txt") as file:
        ...     file.write("-0.5\\n")
    """
    directory = os.path.dirname(os.path.abspath(path))
    with writing(path):
        os.makedirs(directory, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=directory, prefix=".tmp-")
        try:
            os.fchmod(handle, _new_file_mode())  # mkstemp's is 0600; open()'s, this
            mode = {"mode": "wb"} if binary else {"mode": "w", "encoding": "utf-8"}
            with os.fdopen(handle, **mode) as file:
                yield file
                file.flush()
                os.fsync(file.fileno())
            os.replace(temporary, path)
        except BaseException:
            if os.path.exists(temporary):
                os.remove(temporary)
            raise


@contextlib.contextmanager
def atomic_directory(path: str) -> Iterator[str]:
    """Yields an empty staging directory beside ``path`` to fill; on success it replaces ``path``
    (an existing directory there is removed only then), on any error it is deleted and ``path``
    stays as it was. A write the file system refuses raises a StorageError naming ``path``.

    Example:
        >>> with atomic_directory("/tmp/run/export") as staging:
        ...     atomic_write_text(os.path.join(staging, "model.txt"), "weights")
    """
    path = os.path.abspath(path)
    parent = os.path.dirname(path)
    with writing(path):
        _refuse_a_file(path)  # before any work: the block may take minutes
        os.makedirs(parent, exist_ok=True)
        staging = tempfile.mkdtemp(dir=parent, prefix=f".{os.path.basename(path)}.tmp-")
        try:
            os.chmod(staging, 0o777 & ~_umask())  # mkdtemp's is 0700; os.makedirs', this
            yield staging
            if os.path.lexists(path):
                _refuse_a_file(path)
                previous = f"{staging}.old"
                os.replace(path, previous)
                os.replace(staging, path)
                if os.path.islink(previous):  # a link to the old directory: the link goes
                    os.remove(previous)
                else:
                    shutil.rmtree(previous)
            else:
                os.replace(staging, path)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise


def _refuse_a_file(path: str) -> None:
    """A NotADirectoryError when a file (or a link to one) is at ``path``: a directory never
    replaces it (``export.py --output=runs/x/config.json`` must not remove the config)."""
    if os.path.lexists(path) and not os.path.isdir(path):
        raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), path)


def _umask() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return umask


def _new_file_mode() -> int:
    return 0o666 & ~_umask()


def write_json(path: str, value: dict) -> None:
    """Writes ``value`` as indented, key-sorted JSON, atomically."""
    atomic_write_text(path, json.dumps(value, indent=2, sort_keys=True) + "\n")


def read_json(path: str, default: dict | None = None) -> dict | None:
    """The JSON object in ``path``, or ``default`` when there is no such file."""
    if not os.path.exists(path):
        return default
    with open(path, encoding="utf-8") as file:
        return json.load(file)
