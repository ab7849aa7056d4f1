"""Checkpoints of the model's variables, keyed so that they survive Keras' layer naming.

``tf.train.CheckpointManager`` writes a checkpoint's files first and only then replaces the
``checkpoint`` state file that names the latest one (an atomic rename), so a run killed in the
middle of a write restarts from the previous complete checkpoint; the half-written files are
overwritten by the next save of that number. Everything else a work directory holds (resolved
config, metrics) is written with :func:`common.files.atomic_write_text`.
"""

from __future__ import annotations


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
