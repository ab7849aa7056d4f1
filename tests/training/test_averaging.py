import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

from inference.loading import load_model
from training.averaging import last_checkpoints
from training.checkpoints import checkpoint_key, model_variables

REPO_ROOT = Path(__file__).resolve().parents[2]


def test_average_checkpoints_writes_the_mean_weights(tiny_run):
    workdir = tiny_run[0]
    paths = last_checkpoints(workdir, 2)
    assert [p.rsplit("-", 1)[1] for p in paths] == ["40", "60"]
    completed = subprocess.run(
        [sys.executable, "average_checkpoints.py", f"--workdir={workdir}", "--last=2"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert completed.returncode == 0, completed.stderr
    model, _, path = load_model(workdir, "averaged")
    assert path == os.path.join(workdir, "averaged", "ckpt-60")
    readers = [tf.train.load_checkpoint(p) for p in paths]
    for key, variable in model_variables(model).items():
        expected = (
            readers[0].get_tensor(checkpoint_key(key)) + readers[1].get_tensor(checkpoint_key(key))
        ) / 2
        np.testing.assert_allclose(variable.numpy(), expected, rtol=1e-6, err_msg=variable.path)


def test_averaging_more_checkpoints_than_kept_is_a_clear_error(tiny_run):
    with pytest.raises(ValueError, match="keeps 3"):
        last_checkpoints(tiny_run[0], 5)
