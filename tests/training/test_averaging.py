import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

from common.storage import StorageError
from configs import tiny
from inference.loading import load_model
from rundir.checkpoints import UnreadableCheckpointError, checkpoint_key, model_variables
from rundir.model import build_workdir_model
from tests.script_runner import run_in_process
from training.averaging import average_checkpoints, last_checkpoints

REPO_ROOT = Path(__file__).resolve().parents[2]
# The tiny run's last two checkpoints: (.., second to last, last).
TRAIN = tiny.get_config().train
LAST, BEFORE = TRAIN.steps, TRAIN.steps - TRAIN.checkpoint_every


def test_average_checkpoints_writes_the_mean_weights(tiny_run):
    workdir = tiny_run[0]
    paths = last_checkpoints(workdir, 2)
    assert [p.rsplit("-", 1)[1] for p in paths] == [str(BEFORE), str(LAST)]
    completed = subprocess.run(
        [sys.executable, "average_checkpoints.py", f"--workdir={workdir}", "--last=2"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert completed.returncode == 0, completed.stderr
    model, _, path = load_model(workdir, "averaged")
    assert path == os.path.join(workdir, "averaged", f"ckpt-{LAST}")
    readers = [tf.train.load_checkpoint(p) for p in paths]
    for key, variable in model_variables(model).items():
        expected = (
            readers[0].get_tensor(checkpoint_key(key)) + readers[1].get_tensor(checkpoint_key(key))
        ) / 2
        np.testing.assert_allclose(variable.numpy(), expected, rtol=1e-6, err_msg=variable.path)


def test_averaging_more_checkpoints_than_kept_is_one_line(tiny_run):
    completed = run_in_process("average_checkpoints.py", f"--workdir={tiny_run[0]}", "--last=5")
    assert completed.returncode == 1 and "Traceback" not in completed.stderr
    assert completed.stderr.strip() == (
        f"error: Asked to average 5 checkpoints but {tiny_run[0]} keeps 3: average fewer "
        "(--last=3), or train with a larger train.keep_checkpoints."
    )
    for last in ("0", "-2"):
        completed = run_in_process(
            "average_checkpoints.py", f"--workdir={tiny_run[0]}", f"--last={last}"
        )
        assert completed.returncode == 1 and completed.stderr.strip() == (
            f"error: --last={last}: average at least one checkpoint (--last=5: the newest five)."
        )


def test_an_unreadable_checkpoint_is_named_and_a_refused_write_keeps_what_was_there(
    tiny_run, tmp_path, monkeypatch, full_disk
):
    workdir = tiny_run[0]
    model, _ = build_workdir_model(workdir)
    truncated = tmp_path / f"ckpt-{LAST}"
    for suffix in (".index", ".data-00000-of-00001"):
        data = Path(workdir, "checkpoints", f"ckpt-{LAST}{suffix}").read_bytes()
        Path(f"{truncated}{suffix}").write_bytes(data[: len(data) // 2])
    with pytest.raises(UnreadableCheckpointError) as raised:
        before = f"{workdir}/checkpoints/ckpt-{BEFORE}"
        average_checkpoints(model, [before, str(truncated)], "/unused")
    assert str(raised.value).startswith(f"The checkpoint {truncated} cannot be read (")
    assert str(raised.value).endswith(
        "its files are truncated or corrupt. Average without it (a smaller --last leaves out "
        "the oldest), or rerun train.py if it is the newest."
    )

    output = tmp_path / "averaged"
    average_checkpoints(model, [f"{workdir}/checkpoints/ckpt-{BEFORE}"], str(output))
    monkeypatch.setattr(tf.train.CheckpointManager, "save", full_disk(f"{output}/ckpt-{LAST}"))
    refused = f"left on the device while writing {output}/ckpt-{LAST};"
    with pytest.raises(StorageError, match=refused):
        average_checkpoints(model, [f"{workdir}/checkpoints/ckpt-{LAST}"], str(output))
    assert tf.train.latest_checkpoint(str(output)) == f"{output}/ckpt-{BEFORE}"
    assert not Path(f"{output}/ckpt-{LAST}_temp").exists()
