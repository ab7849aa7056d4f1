"""Checkpoints of the model's variables, keyed so that they survive Keras' layer naming; which
checkpoint of a work directory to read; the one-line account of one that cannot be read.

``tf.train.CheckpointManager`` writes a checkpoint's files first and only then replaces the
``checkpoint`` state file that names the latest one (an atomic rename), so a run killed in the
middle of a write (or stopped by a full disk) restarts from the previous complete checkpoint; the
half-written files are overwritten by the next save of that number. Everything else a work
directory holds (resolved config, metrics) is written with :func:`common.files.atomic_write_text`.
Files that a crash of the machine or a bad copy truncated are another matter: reading them
raises one of :data:`READ_ERRORS`, which :func:`cannot_read` describes.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator

import tensorflow as tf

from common.errors import UserError
from common.storage import StorageError, writing
from rundir.layout import RunDirectory

# What TensorFlow raises for a checkpoint whose files are missing, truncated or corrupt: an
# OpError ("file is too short to be an sstable", "Checksum does not match", ...) or, for a data
# file cut short, an IndexError ("Read less bytes than requested").
READ_ERRORS = (tf.errors.OpError, IndexError)


@contextlib.contextmanager
def saving(path: str) -> Iterator[None]:
    """Around a TensorFlow save to ``path`` (a checkpoint prefix): a write the file system
    refuses raises a StorageError naming ``path``, after removing the partial files TensorFlow
    left in ``path_temp/`` (on a full disk, as large as the space that was left).

    Example:
        >>> with saving("/tmp/run/checkpoints/ckpt-30"):
        ...     manager.save(checkpoint_number=30)
    """
    try:
        with writing(path):
            yield
    except StorageError:
        if tf.io.gfile.exists(f"{path}_temp"):
            tf.io.gfile.rmtree(f"{path}_temp")
        raise


class UnreadableCheckpointError(UserError, RuntimeError):
    """A checkpoint's files cannot be read; the message names it and says what to do."""


def cannot_read(path: str, error: BaseException) -> str:
    """``"PATH cannot be read (REASON): ..."`` for one of :data:`READ_ERRORS` raised reading it.

    Example:
        >>> cannot_read("/r/ckpt-80", tf.errors.OpError(None, None, "file is too short", None))
        '/r/ckpt-80 cannot be read (file is too short): its files are truncated or corrupt'
    """
    message = re.sub(r"\{\{.*?\}\}|\[Op:\w+\]", "", str(error)).strip()
    reason = message.splitlines()[0] if message else type(error).__name__
    return f"{path} cannot be read ({reason}): its files are truncated or corrupt"


def model_variables(model) -> dict:
    """The model's variables keyed by their Keras path below the model, for
    ``tf.train.Checkpoint(model=...)``.

    Keras 3 layers kept in Python lists (the encoder and decoder stacks) are not tracked by
    ``tf.train.Checkpoint``; keying every variable by its unique path saves them all. The
    model's own name (``transformer``, ``transformer_1``, ... in one process) is left out, so
    checkpoints load whatever the process created before.
    """
    prefix = model.name + "/"
    variables = {variable.path.removeprefix(prefix): variable for variable in model.weights}
    if len(variables) != len(model.weights):
        raise ValueError("Two model variables share a path; give the layers unique names.")
    return variables


def checkpoint_key(variable_key: str) -> str:
    """The key under which ``tf.train.Checkpoint(model=model_variables(model))`` stores the
    variable that ``model_variables`` calls ``variable_key``."""
    return "model/" + variable_key.replace("/", ".S") + "/.ATTRIBUTES/VARIABLE_VALUE"


CHECKPOINT_CHOICES = ("best", "latest", "averaged")
# How to get a readable checkpoint of each kind again.
_REWRITE = {
    "best": "Use --checkpoint=latest or --checkpoint=averaged instead.",
    "latest": "Rerun train.py with this --workdir: it resumes from the newest checkpoint that "
    "reads and writes this one again.",
    "averaged": "Rerun average_checkpoints.py to write it again.",
}


def checkpoint_path(workdir: str, which: str = "best") -> str:
    """The checkpoint to use: ``best`` by validation BLEU (falling back to the latest),
    ``latest``, or ``averaged`` (written by average_checkpoints.py)."""
    if which not in CHECKPOINT_CHOICES:
        raise ValueError(f"checkpoint must be one of {CHECKPOINT_CHOICES}, got {which!r}.")
    run = RunDirectory(workdir)
    latest = tf.train.latest_checkpoint(run.checkpoints)
    if which == "best":
        path = tf.train.latest_checkpoint(run.best) or latest
    elif which == "averaged":
        path = tf.train.latest_checkpoint(run.averaged)
    else:
        path = latest
    if path is None:
        raise FileNotFoundError(
            f"No {which} checkpoint in {workdir}; train first (or wait for the first checkpoint "
            "of a running training; for 'averaged' run average_checkpoints.py)."
        )
    return path


def restore_model(model, workdir: str, which: str = "best") -> str:
    """Reads the ``which`` checkpoint of ``workdir`` into ``model``'s variables; returns its path.
    Files that cannot be read raise an :class:`UnreadableCheckpointError` saying how to write them
    again; no other checkpoint is used in its place."""
    path = checkpoint_path(workdir, which)
    checkpoint = tf.train.Checkpoint(model=model_variables(model))
    try:
        checkpoint.restore(path).expect_partial().assert_existing_objects_matched()
    except READ_ERRORS as error:
        raise UnreadableCheckpointError(
            f"The {which} checkpoint {cannot_read(path, error)}. {_REWRITE[which]}"
        ) from error
    return path
