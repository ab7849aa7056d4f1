"""End-to-end training of configs/tiny.py: loss falls, kill -9 and resume, distribution."""

from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

import data_pipeline
from configs import tiny
from training import data as training_data
from training import trainer

REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def tiny_tokenizer(tiny_run) -> str:
    """spm.model of configs/tiny.py; copied into new work dirs to save its training time."""
    return os.path.join(tiny_run[0], "spm.model")


def tiny_config(tfds_dir: str, **train_overrides):
    config = tiny.get_config()
    config.data.data_dir = tfds_dir
    for key, value in train_overrides.items():
        config.train[key] = value
    return config


def new_workdir(tmp_path: Path, tokenizer_file: str, name: str = "run") -> str:
    workdir = tmp_path / name
    workdir.mkdir()
    shutil.copy(tokenizer_file, workdir / "spm.model")
    return str(workdir)


def test_tiny_config_trains_and_loss_falls(tiny_run, tfds_dir, capsys):
    workdir, result = tiny_run
    config = tiny_config(tfds_dir)
    assert result.step == config.train.steps
    first_loss, last_loss = result.train_losses[0][1], result.train_losses[-1][1]
    assert last_loss < 0.75 * first_loss, result.train_losses
    assert result.validation_bleu is not None and result.best_bleu is not None
    assert tf.train.latest_checkpoint(os.path.join(workdir, "checkpoints")).endswith(
        f"ckpt-{config.train.steps}"
    )
    assert json.loads(Path(workdir, "best", "best.json").read_text())["step"] == 60
    assert Path(workdir, "eval", "validation-step60.txt").read_text().count("\n") == 20
    assert json.loads(Path(workdir, "config.json").read_text())["model"]["d_model"] == 32
    assert list(Path(workdir, "tensorboard").glob("events.out.tfevents.*"))

    capsys.readouterr()
    again = trainer.train(config, workdir)
    assert again.already_finished and again.step == config.train.steps
    assert f"Training already finished: step 60 of 60 in {workdir}" in capsys.readouterr().out


def run_train_py(workdir: str, tfds_dir: str, *overrides: str, **popen) -> subprocess.Popen:
    command = [
        sys.executable,
        "-u",
        "train.py",
        "--config=configs/tiny.py",
        f"--workdir={workdir}",
        f"--config.data.data_dir={tfds_dir}",
        *overrides,
    ]
    return subprocess.Popen(
        command, cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **popen
    )


def latest_step(workdir: str) -> int:
    latest = tf.train.latest_checkpoint(os.path.join(workdir, "checkpoints"))
    return int(latest.rsplit("-", 1)[1]) if latest else 0


def test_killed_run_resumes_from_the_last_complete_checkpoint(tfds_dir, tiny_tokenizer, tmp_path):
    workdir = new_workdir(tmp_path, tiny_tokenizer)
    overrides = (
        "--config.train.steps=80",
        "--config.train.checkpoint_every=10",
        "--config.train.eval_every=1000",
    )
    process = run_train_py(workdir, tfds_dir, *overrides)
    deadline = time.time() + 240
    while latest_step(workdir) < 30 and process.poll() is None and time.time() < deadline:
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    process.communicate()
    saved = latest_step(workdir)
    assert 30 <= saved < 80, "the run should have been killed mid-way"
    # A checkpoint whose write was cut off: files exist, but the state file does not name it.
    for suffix in (".index", ".data-00000-of-00001"):
        Path(workdir, "checkpoints", f"ckpt-{saved + 10}{suffix}").write_bytes(b"\0half")

    output, _ = run_train_py(workdir, tfds_dir, *overrides).communicate(timeout=300)
    assert f"Resuming from checkpoint {workdir}/checkpoints/ckpt-{saved} at step {saved}." in (
        output
    ), output
    assert latest_step(workdir) == 80

    # The resumed run is the uninterrupted run: same data position, step and learning rate.
    reference = new_workdir(tmp_path, tiny_tokenizer, "reference")
    config = tiny_config(tfds_dir, steps=80, checkpoint_every=10, eval_every=1000)
    trainer.train(config, reference)
    resumed_weights = tf.train.load_checkpoint(os.path.join(workdir, "checkpoints", "ckpt-80"))
    reference_weights = tf.train.load_checkpoint(os.path.join(reference, "checkpoints", "ckpt-80"))
    names = [
        name
        for name, _ in tf.train.list_variables(os.path.join(reference, "checkpoints", "ckpt-80"))
        if name.startswith("model/") or "iterations" in name or "learning_rate" in name
    ]
    assert any("iterations" in name for name in names)
    for name in names:
        np.testing.assert_allclose(
            resumed_weights.get_tensor(name),
            reference_weights.get_tensor(name),
            atol=1e-5,
            err_msg=name,
        )


def test_mirrored_two_devices_matches_one_device(tfds_dir, tiny_tokenizer, tmp_path):
    assert len(tf.config.list_logical_devices("CPU")) == 2  # set up in tests/conftest.py
    losses = {}
    for distribution in ("default", "mirrored"):
        config = tiny_config(
            tfds_dir, steps=6, log_every=1, eval_every=1000, distribution=distribution
        )
        result = trainer.train(config, new_workdir(tmp_path, tiny_tokenizer, distribution))
        losses[distribution] = [loss for _, loss in result.train_losses]
    assert len(losses["mirrored"]) == 6
    np.testing.assert_allclose(losses["mirrored"], losses["default"], rtol=1e-4)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_multi_worker_trains_and_writes_one_consistent_checkpoint(
    tfds_dir, tiny_tokenizer, tmp_path
):
    workdir = new_workdir(tmp_path, tiny_tokenizer)
    workers = [f"127.0.0.1:{free_port()}", f"127.0.0.1:{free_port()}"]
    processes = []
    for index in range(2):
        tf_config = {"cluster": {"worker": workers}, "task": {"type": "worker", "index": index}}
        env = {**os.environ, "TF_CONFIG": json.dumps(tf_config)}
        processes.append(
            run_train_py(
                workdir,
                tfds_dir,
                "--config.train.distribution=multi_worker",
                "--config.train.steps=4",
                "--config.train.checkpoint_every=2",
                "--config.train.eval_every=1000",
                env=env,
            )
        )
    outputs = [process.communicate(timeout=300)[0] for process in processes]
    for process, output in zip(processes, outputs, strict=True):
        assert process.returncode == 0, output
    assert latest_step(workdir) == 4
    assert not list(Path(workdir).glob(".worker-*")), "worker scratch copies are removed"
    reader = tf.train.load_checkpoint(os.path.join(workdir, "checkpoints", "ckpt-4"))
    iterations = [
        name
        for name, _ in tf.train.list_variables(os.path.join(workdir, "checkpoints", "ckpt-4"))
        if name.startswith("optimizer/") and "iterations" in name
    ]
    assert iterations and int(reader.get_tensor(iterations[0])) == 4


def test_a_non_finite_loss_stops_the_run_and_keeps_the_last_checkpoint(
    tfds_dir, tiny_tokenizer, tmp_path
):
    config = tiny_config(tfds_dir, steps=30, checkpoint_every=10, eval_every=1000)
    workdir = new_workdir(tmp_path, tiny_tokenizer)
    run = trainer._Trainer(config, workdir)
    healthy_step = run.train_step

    def poisoned_step(iterator):
        results = healthy_step(iterator)
        return results if run.step <= 15 else [results[0] * float("nan"), *results[1:]]

    run.train_step = poisoned_step
    with pytest.raises(trainer.TrainingError, match="loss became nan at step 16"):
        run.run()
    assert latest_step(workdir) == 10
    assert not Path(workdir, "checkpoints", "ckpt-16.index").exists()


def test_subword_sampling_trains_and_resumes(tfds_dir, tiny_tokenizer, tmp_path, caplog):
    # Subword sampling builds a new epoch on every pass.
    config = tiny_config(tfds_dir, steps=10, checkpoint_every=10, eval_every=1000)
    config.tokenizer.sampling_alpha = 0.3
    workdir = new_workdir(tmp_path, tiny_tokenizer)
    assert trainer.train(config, workdir).step == 10
    config.train.steps = 20
    run = trainer._Trainer(config, workdir)  # restores the data position saved with step 10
    assert run.tokenizer.sampling_alpha == 0.0  # validation, decoding and export: best pieces
    with caplog.at_level(logging.WARNING):
        result = run.run()
    assert "the data restarts" not in caplog.text  # the saved position was restored
    assert result.step == 20 and latest_step(workdir) == 20
    assert all(np.isfinite(loss) for _, loss in result.train_losses)


def test_extra_train_data_joins_the_training_pairs(tfds_dir, tiny_tokenizer):
    config = tiny_config(tfds_dir)
    config.data.extra_train_data = "multi30k/fr-en, multi30k/cs-en"
    pairs, _ = training_data.load_data(config, os.path.dirname(tiny_tokenizer), [])
    splits = {
        name: list(
            data_pipeline.load_translation_splits(name, ["train"], tfds_dir)["train"]
            .take(2)
            .as_numpy_iterator()
        )
        for name in ("multi30k/de-en", "multi30k/fr-en", "multi30k/cs-en")
    }
    joined = list(pairs["train"].as_numpy_iterator())
    assert len(joined) == 3 * 29000
    # The configured pairs first, then each extra data set's, in the order named.
    assert joined[:2] == splits["multi30k/de-en"]
    assert joined[29000:29002] == splits["multi30k/fr-en"]
    assert joined[58000:58002] == splits["multi30k/cs-en"]
    assert (
        training_data.data_settings(config, 1)["data.extra_train_data"]
        == config.data.extra_train_data
    )


def test_changed_data_settings_restart_the_data_on_resume(
    tfds_dir, tiny_tokenizer, tmp_path, caplog
):
    config = tiny_config(tfds_dir, steps=4, checkpoint_every=4, eval_every=1000)
    workdir = new_workdir(tmp_path, tiny_tokenizer)
    trainer.train(config, workdir)
    config.train.steps, config.data.max_length = 6, 40
    with caplog.at_level(logging.WARNING):
        result = trainer.train(config, workdir)
    assert result.step == 6
    assert "data.max_length 48 -> 40" in caplog.text
    assert "the data restarts from the beginning" in caplog.text

    # A position saved by a version that did not record the settings is not restored either.
    position = os.path.join(workdir, "checkpoints", "data-worker0-6")
    tf.train.Checkpoint(iterator=iter(tf.data.Dataset.range(3))).write(position)
    config.train.steps = 8
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        assert trainer.train(config, workdir).step == 8
    assert "saved without its data settings" in caplog.text
