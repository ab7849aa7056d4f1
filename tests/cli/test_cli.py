"""The scripts' errors: one line saying what happened and what to do, the traceback on request."""

import errno
import sys

import pytest
import tensorflow as tf

from cli.errors import config_file_problem, error_line, run_main
from data_pipeline.errors import DataError
from rundir.checkpoints import UnreadableCheckpointError
from tests.script_runner import REPO_ROOT, run_in_process
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
        (DataError("Parallel files have different line counts"), "error: Parallel files"),
        (FileNotFoundError("No best checkpoint in /w"), "error: No best checkpoint in /w"),
    ],
)
def test_errors_the_user_can_act_on_are_one_line(error, line):
    assert error_line(error).startswith(line)


def test_other_errors_are_bugs_whose_traceback_is_shown():
    out_of_memory = tf.errors.ResourceExhaustedError(None, None, "OOM when allocating")
    assert error_line(out_of_memory) is None
    assert error_line(KeyError("model")) is None
    assert error_line(ValueError("a bug")) is None


def fails_on_a_full_disk(argv):
    raise tf.errors.ResourceExhaustedError(None, None, FULL)


@pytest.mark.parametrize("traceback", [False, True])
def test_run_main_exits_with_the_line_and_shows_the_traceback_only_when_asked(
    traceback, monkeypatch, capsys
):
    monkeypatch.setattr(sys, "argv", ["train.py"] + ["--traceback"] * traceback)
    with pytest.raises(SystemExit) as exit:
        run_main(fails_on_a_full_disk)
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


def test_an_error_of_a_configs_get_config_is_its_one_line(tmp_path):
    """A config's refusal of its argument (``--config=FILE:argument``), and an argument given
    to a get_config() that takes none: the error's own text, not ml_collections' traceback."""
    (tmp_path / "named.py").write_text(
        "def get_config(name='a'):\n    raise ValueError(f'there is no config {name!r}: use a')\n"
    )
    for config, message in [
        (f"{tmp_path}/named.py:b", "there is no config 'b': use a"),
        ("configs/tiny.py:b", "get_config() takes 0 positional arguments but 1 was given"),
    ]:
        completed = run_in_process("train.py", f"--config={config}", f"--workdir={tmp_path}/w")
        assert completed.returncode == 1
        first, *rest = completed.stderr.splitlines()
        assert first == f"error: bad command line: flag --config={config}: {message}"
        assert len(rest) == 1 and rest[0].endswith("train.py --helpshort` for the flags.")


def test_a_config_file_that_cannot_give_a_config_is_one_line_naming_it(tmp_path):
    tiny_file = REPO_ROOT / "configs" / "tiny.py"
    assert config_file_problem(str(tiny_file)) is None
    assert config_file_problem(f"{tiny_file}:an_argument") is None
    (tmp_path / "star.py").write_text("from configs.tiny import *\n")
    assert config_file_problem(str(tmp_path / "star.py")) is None
    (tmp_path / "no_function.py").write_text("from configs import base\n\nconfig = base\n")
    (tmp_path / "broken.py").write_text("def get_config(:\n    pass\n")
    expected = {
        "missing.py": "does not exist; give one of configs/*.py (e.g. --config=configs/multi30k_",
        "no_function.py": "defines no get_config(), the function that returns the config (see",
        "broken.py": "is not valid Python: line 1: ",
    }
    for name, message in expected.items():
        problem = config_file_problem(str(tmp_path / name))
        assert problem.startswith(f"The config file {tmp_path / name} {message}"), problem
        assert "\n" not in problem
