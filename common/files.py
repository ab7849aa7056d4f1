"""Files a reader never sees half-written: atomic text writes and the small JSON files of a run."""

from __future__ import annotations

import json
import os
import tempfile


def atomic_write_text(path: str, text: str) -> None:
    """Writes ``text`` to ``path`` so that readers see the old file or the new one, never half.

    Example:
        >>> atomic_write_text("/tmp/run/eval/hypotheses.txt", "A dog runs.\\n")
    """
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
    """Writes ``value`` as indented, key-sorted JSON, atomically."""
    atomic_write_text(path, json.dumps(value, indent=2, sort_keys=True) + "\n")


def read_json(path: str, default: dict | None = None) -> dict | None:
    """The JSON object in ``path``, or ``default`` when there is no such file."""
    if not os.path.exists(path):
        return default
    with open(path, encoding="utf-8") as file:
        return json.load(file)
