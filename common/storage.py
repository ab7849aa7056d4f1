"""A write the file system refuses (a full disk, a read-only or forbidden directory) as one line.

Python reports these as ``OSError`` with an errno, TensorFlow's file writes (checkpoints,
SavedModels, summaries) as ``OpError`` whose message ends in the system's text (``...ckpt-30_temp/
part-00000-of-00001...; No space left on device``). :func:`writing` turns either into a
:class:`StorageError` whose message says what happened, which file, what is kept and what to
do; the command-line scripts print it as one line.

Example:
    >>> with writing("/tmp/run/eval/test.hyp"):
    ...     raise OSError(errno.ENOSPC, "No space left on device", "/tmp/run/eval/.tmp-1")
    Traceback (most recent call last):
    ...
    common.storage.StorageError: No space left on the device while writing /tmp/run/eval/test.hyp;
    anything written there before is unchanged. Free some space there, then rerun the same command.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import os
import re
from collections.abc import Callable, Iterator

import tensorflow as tf

from common.errors import UserError

_FREE_SPACE = "Free some space there, then rerun the same command."
_WRITABLE = "Make it writable or choose another directory, then rerun."
# errno -> (what happened, what to do).
_PROBLEMS = {
    errno.ENOSPC: ("No space left on the device", _FREE_SPACE),
    errno.EDQUOT: ("The disk quota is exceeded", _FREE_SPACE),
    errno.EROFS: ("The file system is read-only", _WRITABLE),
    errno.EACCES: ("Permission denied", _WRITABLE),
    errno.EPERM: ("Operation not permitted", _WRITABLE),
    errno.EISDIR: ("A directory is in the way", "Choose another path, then rerun."),
    errno.ENOTDIR: ("A file is in the way", "Choose another path, then rerun."),
    errno.EEXIST: ("A file is in the way", "Choose another path, then rerun."),  # os.makedirs'
}


@dataclasses.dataclass(eq=False)
class StorageError(UserError):
    """The file system refused a write; ``str()`` is the one line a script prints.

    Example:
        >>> str(StorageError(errno.EROFS, "/mnt/ro/run"))
        'The file system is read-only while writing /mnt/ro/run; anything written there before
        is unchanged. Make it writable or choose another directory, then rerun.'
    """

    code: int  # the errno
    path: str
    kept: str = "anything written there before is unchanged"

    def __str__(self) -> str:
        problem, advice = _PROBLEMS[self.code]
        return f"{problem} while writing {self.path}; {self.kept}. {advice}"


def storage_error(error: BaseException, path: str | None = None) -> StorageError | None:
    """``error`` as a :class:`StorageError` about ``path`` (default: the file ``error`` names),
    or None when it is not a refusal of the file system. A StorageError is returned as it is.

    Example:
        >>> full = "/r/ckpt-30_temp/part-0; No space left on device"
        >>> storage_error(tf.errors.ResourceExhaustedError(None, None, full), "/r/ckpt-30").path
        '/r/ckpt-30'
        >>> out_of_memory = tf.errors.ResourceExhaustedError(None, None, "OOM when allocating")
        >>> storage_error(out_of_memory) is None
        True
    """
    if isinstance(error, StorageError):
        return error
    if isinstance(error, OSError) and error.errno in _PROBLEMS:
        return StorageError(error.errno, path or str(error.filename or "a file"))
    if isinstance(error, tf.errors.OpError):
        for code in _PROBLEMS:
            named = re.search(rf"(\S+); {re.escape(os.strerror(code))}", error.message)
            if named:
                return StorageError(code, path or named.group(1))
    return None


@contextlib.contextmanager
def writing(path: str | None = None, kept: Callable[[], str] | None = None) -> Iterator[None]:
    """Raises a refused write inside the block as a :class:`StorageError` about ``path``
    (default: the file the error names; a StorageError raised inside keeps its own) whose
    ``kept`` part, when given, is ``kept()`` at the time of the failure.

    Example:
        >>> with writing(kept=lambda: "the last complete checkpoint, /r/ckpt-20, is intact"):
        ...     with writing("/r/ckpt-30"):
        ...         save_checkpoint()  # raises StorageError(ENOSPC, "/r/ckpt-30", "...ckpt-20...")
    """
    try:
        yield
    except Exception as error:
        storage = storage_error(error, path)
        if storage is None:
            raise
        if kept is not None:
            storage.kept = kept()
        if storage is error:
            raise
        raise storage from error
