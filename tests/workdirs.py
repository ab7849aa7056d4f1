"""Work directories made from a trained run, for the tests that need a second model."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import tensorflow as tf


def at_its_first_checkpoint(workdir: str, destination: Path) -> str:
    """``destination``: a work directory of ``workdir``'s config, tokenizer and first kept
    checkpoint alone: other weights than the run's latest and best, and no ``best/``, so that
    its best is that checkpoint too. A second member for a run's ensembles."""
    state = tf.train.get_checkpoint_state(os.path.join(workdir, "checkpoints"))
    first = os.path.basename(state.all_model_checkpoint_paths[0])
    assert first != os.path.basename(state.model_checkpoint_path)
    (destination / "checkpoints").mkdir(parents=True)
    for name in ("config.json", "spm.model"):
        shutil.copy(os.path.join(workdir, name), destination)
    for file in Path(workdir, "checkpoints").glob(f"{first}.*"):
        shutil.copy(file, destination / "checkpoints")
    (destination / "checkpoints" / "checkpoint").write_text(f'model_checkpoint_path: "{first}"\n')
    return str(destination)
