"""Checkpoints that survive ``kill -9``, and the small files a work directory keeps.

``tf.train.CheckpointManager`` writes a checkpoint's files first and only then replaces the
``checkpoint`` state file that names the latest one (an atomic rename), so a run killed in the
middle of a write restarts from the previous complete checkpoint; the half-written files are
overwritten by the next save of that number. Everything else a work directory holds (resolved
config, metrics) is written with :func:`atomic_write_text`.
"""

from __future__ import annotations

import json
import os
import tempfile


def atomic_write_text(path: str, text: str) -> None:
    """Writes ``text`` to ``path`` so that readers see the old file or the new one, never half."""
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=directory, prefix=".tmp-")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.remove(temporary)
        raise


def write_json(path: str, value: dict) -> None:
    atomic_write_text(path, json.dumps(value, indent=2, sort_keys=True) + "\n")


def read_json(path: str, default: dict | None = None) -> dict | None:
    if not os.path.exists(path):
        return default
    with open(path, encoding="utf-8") as file:
        return json.load(file)


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
