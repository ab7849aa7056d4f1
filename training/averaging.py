"""Checkpoint averaging: the mean of the model weights of the last N checkpoints.

Averaging the last few checkpoints of a run (Vaswani et al., 2017, section 6.1; Popel & Bojar,
2018) usually gains some BLEU for free. The average is written as a model-only checkpoint in
``WORKDIR/averaged``, which ``evaluate.py``, ``translate.py`` and ``export.py`` load with
``--checkpoint=averaged``.
"""

from __future__ import annotations

import os

import keras
import numpy as np
import tensorflow as tf

from common.errors import ConfigError
from rundir.checkpoints import (
    READ_ERRORS,
    UnreadableCheckpointError,
    cannot_read,
    checkpoint_key,
    model_variables,
    saving,
)
from rundir.layout import RunDirectory


def average_checkpoints(
    model: keras.Model,
    checkpoint_paths: list[str],
    output_dir: str,
) -> str:
    """Assigns the mean weights of ``checkpoint_paths`` to ``model`` and saves them.

    A checkpoint that cannot be read raises an UnreadableCheckpointError naming it; a write the
    file system refuses, a StorageError (the previous average stays in place).

    Example:
        >>> average_checkpoints(model, manager.checkpoints[-5:], "/tmp/run/averaged")
        '/tmp/run/averaged/ckpt-10000'
    """
    if not checkpoint_paths:
        raise ValueError("average_checkpoints needs at least one checkpoint.")
    variables = model_variables(model)
    sums = {path: np.zeros(variable.shape, np.float64) for path, variable in variables.items()}
    for checkpoint in checkpoint_paths:
        try:
            reader = tf.train.load_checkpoint(checkpoint)
            for path in variables:
                sums[path] += reader.get_tensor(checkpoint_key(path))
        except READ_ERRORS as error:
            raise UnreadableCheckpointError(
                f"The checkpoint {cannot_read(checkpoint, error)}. Average without it (a smaller "
                "--last leaves out the oldest), or rerun train.py if it is the newest."
            ) from error
    for path, variable in variables.items():
        variable.assign((sums[path] / len(checkpoint_paths)).astype(variable.dtype))
    step = int(checkpoint_paths[-1].rsplit("-", 1)[1])
    manager = tf.train.CheckpointManager(
        tf.train.Checkpoint(model=variables), output_dir, max_to_keep=1
    )
    with saving(os.path.join(output_dir, f"ckpt-{step}")):
        return manager.save(checkpoint_number=step)


def last_checkpoints(workdir: str, count: int) -> list[str]:
    """The newest ``count`` complete checkpoints of a work directory, oldest first."""
    if count < 1:  # paths[-0:] would be every checkpoint, paths[2:] all but the oldest two
        raise ConfigError(
            f"--last={count}: average at least one checkpoint (--last=5: the newest five)."
        )
    directory = RunDirectory(workdir).checkpoints
    state = tf.train.get_checkpoint_state(directory)
    if state is None or not state.all_model_checkpoint_paths:
        raise FileNotFoundError(f"No checkpoints in {directory}; train first.")
    paths = list(state.all_model_checkpoint_paths)
    if count > len(paths):
        raise ConfigError(
            f"Asked to average {count} checkpoints but {workdir} keeps {len(paths)}: average "
            f"fewer (--last={len(paths)}), or train with a larger train.keep_checkpoints."
        )
    return paths[-count:]
