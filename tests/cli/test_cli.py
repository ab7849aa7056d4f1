"""The scripts' errors: one line saying what happened and what to do, the traceback on request."""

import errno
import sys

import pytest
import tensorflow as tf

import cli
from tests.script_runner import run_in_process
from training.checkpoints import UnreadableCheckpointError
from training.trainer import TrainingError

FULL = "/w/checkpoints/ckpt-30_temp/part-00000-of-00001.data-00000; No space left on device"


@pytest.mark.parametrize(
    "error, line",
    [
        (
            tf.errors.ResourceExhaustedError(None, None, FULL),
            "error: No space left on the device while writing /w/checkpoints/ckpt-30_temp/",
        ),
        (OSError(errno.EROFS, "Read-only file system", "/w"), "error: The file system is read-"),
        (UnreadableCheckpointError("The best checkpoint /w/best/ckpt-60 cannot"), "error: The "),
        (TrainingError("The training loss became nan at step 16"), "error: The training loss"),
    ],
)
def test_errors_the_user_can_act_on_are_one_line(error, line):
    assert cli.error_line(error, (TrainingError,)).startswith(line)


def test_other_errors_are_bugs_whose_traceback_is_shown():
    assert cli.error_line(TrainingError("nan"), ()) is None  # train.py alone names it
    out_of_memory = tf.errors.ResourceExhaustedError(None, None, "OOM when allocating")
    assert cli.error_line(out_of_memory) is None
    assert cli.error_line(KeyError("model")) is None


def fails_on_a_full_disk(argv):
    raise tf.errors.ResourceExhaustedError(None, None, FULL)


@pytest.mark.parametrize("traceback", [False, True])
def test_run_main_exits_with_the_line_and_shows_the_traceback_only_when_asked(
    traceback, monkeypatch, capsys
):
    monkeypatch.setattr(sys, "argv", ["train.py"] + ["--traceback"] * traceback)
    with pytest.raises(SystemExit) as exit:
        cli.run_main(fails_on_a_full_disk)
    assert exit.value.code.startswith("error: No space left on the device while writing /w/")
    assert ("Traceback" in capsys.readouterr().err) == traceback


def test_a_config_file_that_does_not_exist_is_one_line(tmp_path):
    completed = run_in_process("train.py", "--config=configs/nope.py", f"--workdir={tmp_path}")
    assert completed.returncode == 1
    assert completed.stderr.splitlines()[-1] == (
        "error: The config file configs/nope.py does not exist; give one of configs/*.py "
        "(e.g. --config=configs/multi30k_de_en.py) or a path from this directory."
    )
    assert "Traceback" not in completed.stderr
