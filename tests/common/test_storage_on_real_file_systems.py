"""Refused writes on real file systems, through train.py and export.py: a full tmpfs, a read-only
one. The other tests of refused writes raise what TensorFlow 2.21 raised (conftest's
``full_disk``); these let TensorFlow raise whatever it raises now, so that a rewording, which
would break ``common.storage``'s recognition of it, fails here.

The file systems are mounted in a mount namespace of the test's (``tests/file_systems.py``):
root, or any user where ``unshare --user --map-root-user --mount true`` works. The scripts run
as usual, writing through ``/proc/PID/root/...``: the first ``train.py`` in a subprocess (exit
code, standard error), the others in-process (``tests/script_runner.py``), which returns what a
subprocess would in less time.
"""

from __future__ import annotations

import os
import re
import shutil

import pytest
import tensorflow as tf

from configs import tiny
from inference import export, litert_export
from rundir.config import data_spec
from tests.file_systems import mount_namespace
from tests.script_runner import run_in_process, run_script
from training.data import load_data

pytestmark = pytest.mark.slow

# 10 steps, a checkpoint every 5: each checkpoint is 0.67 MB of weights and Adam moments and
# about 1.9 MB of data position (the 2,000 pairs in the shuffle buffer, the tokenized batches in
# flight). 3,600 kB holds the first one, not the second: the disk fills up while step 10 is
# saved (its data position or its weights).
STEPS, CHECKPOINT_EVERY, FILLED_UP_AT = 10, 5, "3600k"


@pytest.fixture
def namespace():
    with mount_namespace() as namespace:
        yield namespace


@pytest.fixture(scope="module")
def prepared(small_corpus, tmp_path_factory) -> tuple[str, str]:
    """``(data_dir, spm.model)``: ``small_corpus``'s German-English training split prepared
    and configs/tiny.py's tokenizer trained on it, once and off the small file systems."""
    directory = tmp_path_factory.mktemp("prepared")
    config = tiny.get_config()
    config.data.name = f"text:{small_corpus}:de-en"
    config.data.data_dir = str(directory / "data")
    load_data(config, data_spec(config), str(directory / "spm.model"), [])
    return config.data.data_dir, str(directory / "spm.model")


def with_tokenizer(workdir, prepared: tuple[str, str]):
    """``workdir``, made with the prepared tokenizer in it (a run then trains none)."""
    os.makedirs(workdir, exist_ok=True)
    shutil.copy(prepared[1], os.path.join(workdir, "spm.model"))
    return workdir


def train_py(workdir, small_corpus: str, prepared: tuple[str, str]) -> tuple[str, ...]:
    """The arguments of a train.py run of configs/tiny.py in ``workdir`` on the data of
    ``prepared``: 10 steps, a checkpoint every 5, no validation."""
    return (
        "train.py",
        "--config=configs/tiny.py",
        f"--workdir={workdir}",
        f"--config.data.name=text:{small_corpus}:de-en",
        f"--config.data.data_dir={prepared[0]}",
        f"--config.train.steps={STEPS}",
        f"--config.train.checkpoint_every={CHECKPOINT_EVERY}",
        "--config.train.eval_every=0",
    )


def the_one_error_line(completed) -> str:
    """The line a script that stopped on an error printed last, after checking that it stopped
    so and printed no traceback."""
    assert completed.returncode == 1, completed.stderr
    assert "Traceback" not in completed.stderr, completed.stderr
    return completed.stderr.splitlines()[-1]


def test_a_full_disk_stops_train_py_in_one_line_and_a_rerun_after_freeing_space_resumes(
    namespace, small_corpus, prepared, tmp_path
):
    disk = namespace.mount_tmpfs(tmp_path / "disk", FILLED_UP_AT)
    workdir = with_tokenizer(disk / "run", prepared)
    checkpoints = workdir / "checkpoints"
    command = train_py(workdir, small_corpus, prepared)

    stopped = run_script(*command)
    line = the_one_error_line(stopped)
    refused = re.fullmatch(
        f"error: No space left on the device while writing {re.escape(str(checkpoints))}/"
        f"(ckpt-10|data-worker0-10); the last complete checkpoint, "
        f"{re.escape(str(checkpoints))}/ckpt-5, is intact and a rerun resumes from it. "
        "Free some space there, then rerun the same command.",
        line,
    )
    assert refused, line
    assert tf.train.latest_checkpoint(checkpoints) == f"{checkpoints}/ckpt-5"
    assert not (checkpoints / f"{refused.group(1)}_temp").exists()  # the partial file is removed

    namespace.remount(tmp_path / "disk", "size=8m")
    resumed = run_in_process(*command)
    assert resumed.returncode == 0, resumed.stderr
    assert f"Resuming from checkpoint {checkpoints}/ckpt-5 at step 5." in resumed.stdout
    assert "Finished at step 10; no validation score (train.eval_every = 0)." in resumed.stdout
    assert tf.train.latest_checkpoint(checkpoints) == f"{checkpoints}/ckpt-10"


def read_only_before_any_checkpoint(path: os.PathLike | str) -> str:
    """train.py's one line for a read-only file system met at ``path`` before any checkpoint."""
    return (
        f"error: The file system is read-only while writing {path}; no checkpoint was written "
        "yet, so a rerun starts from the beginning. Make it writable or choose another "
        "directory, then rerun."
    )


def test_a_new_work_directory_on_a_read_only_file_system_is_one_line(
    namespace, small_corpus, prepared, tmp_path
):
    read_only = namespace.mount_tmpfs(tmp_path / "read-only", "64k", read_only=True)
    workdir = read_only / "run"
    command = train_py(workdir, small_corpus, prepared)
    assert the_one_error_line(run_in_process(*command)) == read_only_before_any_checkpoint(workdir)
    assert os.listdir(read_only) == []


def test_a_read_only_checkpoints_directory_is_one_line_naming_tensorflows_first_write(
    namespace, small_corpus, prepared, tmp_path
):
    # The work directory can be written, so TensorFlow, not Python, meets the read-only one.
    checkpoints = namespace.mount_tmpfs(tmp_path / "run" / "checkpoints", "64k", read_only=True)
    command = train_py(with_tokenizer(checkpoints.parent, prepared), small_corpus, prepared)
    refused = f"{checkpoints}/data-worker0-5"
    assert the_one_error_line(run_in_process(*command)) == read_only_before_any_checkpoint(refused)
    assert os.listdir(checkpoints) == []


def test_a_full_disk_stops_export_py_in_one_line_and_keeps_the_previous_export(
    namespace, tiny_run, tmp_path
):
    # 512 kB holds the variables (0.24 MB), not saved_model.pb (0.9 MB).
    disk = namespace.mount_tmpfs(tmp_path / "disk", "512k")
    output = disk / "saved_model"
    output.mkdir()
    (output / "saved_model.pb").write_text("the previous export")
    exported = run_in_process("export.py", f"--workdir={tiny_run[0]}", f"--output={output}")
    assert the_one_error_line(exported) == (
        f"error: No space left on the device while writing {output}; anything written there "
        "before is unchanged. Free some space there, then rerun the same command."
    )
    assert os.listdir(disk) == ["saved_model"]  # the partial export is removed
    assert os.listdir(output) == ["saved_model.pb"]
    assert (output / "saved_model.pb").read_text() == "the previous export"


@pytest.mark.parametrize(
    ("export_format", "module", "slow_part"),
    [("saved_model", export, "_signature"), ("litert", litert_export, "_converted")],
)
def test_an_export_to_a_read_only_file_system_is_one_line_before_any_tracing(
    namespace, tiny_run, tmp_path, monkeypatch, export_format, module, slow_part
):
    # The output directory is claimed before the search is traced or converted (seconds on the
    # tiny model; the default model: export.py says so after 6 s instead of 23 s).
    def too_early(*args, **kwargs):
        raise AssertionError(f"{slow_part} ran before the output directory was claimed")

    monkeypatch.setattr(module, slow_part, too_early)
    read_only = namespace.mount_tmpfs(tmp_path / "read-only", "64k", read_only=True)
    output = read_only / export_format
    exported = run_in_process(
        "export.py", f"--workdir={tiny_run[0]}", f"--output={output}", f"--format={export_format}"
    )
    assert the_one_error_line(exported) == (
        f"error: The file system is read-only while writing {output}; anything written there "
        "before is unchanged. Make it writable or choose another directory, then rerun."
    )
    assert os.listdir(read_only) == []
