"""Fine-tuning: a run that starts from the tiny run's weights and tokenizer, parts frozen, and
the one-line refusal of settings that differ."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

from common.errors import ConfigError
from configs import tiny
from rundir.checkpoints import checkpoint_key, checkpoint_path, model_variables
from training.finetuning import StartFrom
from training.trainer import Trainer

pytestmark = pytest.mark.slow  # the tiny run


def finetuning_config(small_corpus: str, source: str, **train):
    config = tiny.get_config()
    config.data.name = f"text:{small_corpus}:de-en"
    config.data.data_dir = f"{small_corpus}-data"
    config.train.update(init_from=f"{source}:latest", **{"steps": 3, "eval_every": 0, **train})
    return config


def test_a_run_starts_from_another_runs_weights_and_tokenizer_and_keeps_frozen_parts(
    tiny_run, small_corpus, tmp_path, capsys
):
    source = tiny_run[0]
    config = finetuning_config(small_corpus, source, freeze="encoder")
    workdir = tmp_path / "finetuned"
    run = Trainer(config, str(workdir))
    reader = tf.train.load_checkpoint(checkpoint_path(source, "latest"))
    variables = model_variables(run.model)
    start = {path: variable.numpy() for path, variable in variables.items()}
    for path, value in start.items():
        np.testing.assert_array_equal(value, reader.get_tensor(checkpoint_key(path)))
    assert (workdir / "spm.model").read_bytes() == Path(source, "spm.model").read_bytes()
    assert run.run().step == 3  # a fresh step, optimizer and schedule
    for path, variable in variables.items():
        changed = not np.array_equal(variable.numpy(), start[path])
        assert changed == (not path.startswith("encoder")), path  # frozen to the bit
    assert json.loads((workdir / "config.json").read_text())["train"]["init_from"].startswith(
        source
    )
    # Rerun, it resumes from its own checkpoint (exactly, as every run), not from the source's.
    capsys.readouterr()
    config.train.steps = 4
    assert Trainer(config, str(workdir)).run().step == 4
    printed = capsys.readouterr().out
    assert "Resuming from checkpoint" in printed and "Starting from" not in printed


@pytest.mark.parametrize(
    ("section", "key", "value", "message"),
    [
        ("model", "d_model", 64, r"config.model.d_model = 64 but .*'s is 32"),
        ("tokenizer", "vocab_size", 2000, r"config.tokenizer.vocab_size = 2000 but .*'s is 1000"),
    ],
)
def test_settings_that_differ_from_the_starting_run_are_one_line(
    tiny_run, small_corpus, section, key, value, message
):
    config = finetuning_config(small_corpus, tiny_run[0])
    config[section][key] = value
    with pytest.raises(ConfigError, match=message) as raised:
        StartFrom.parse(config.train.init_from).check(config)
    assert "\n" not in str(raised.value)


def test_a_starting_run_or_checkpoint_that_is_not_there_is_one_line(
    tiny_run, small_corpus, tmp_path
):
    untrained = tmp_path / "untrained"  # a run's config.json, no checkpoint yet
    untrained.mkdir()
    shutil.copy(Path(tiny_run[0], "config.json"), untrained)
    cases = {
        f"{tmp_path}/nowhere": "is not a training work directory (no config.json): train it first",
        f"{untrained}:latest": "has no checkpoint yet: train it first",
        f"{untrained}:averaged": "has no averaged checkpoint: write it first (python average_check"
        f"points.py --workdir={untrained} --last=5)",
    }
    for init_from, problem in cases.items():
        config = finetuning_config(small_corpus, tiny_run[0])
        config.train.init_from = init_from
        with pytest.raises(ConfigError) as raised:
            StartFrom.parse(init_from).check(config)
        workdir = init_from.split(":")[0]
        assert str(raised.value) == (
            f"config.train.init_from = {init_from!r}, but {workdir} {problem}, or point "
            "config.train.init_from at another run (WORKDIR[:best|latest|averaged])."
        )
    config.train.init_from = init_from = f"{untrained}:last"  # not a checkpoint's name
    with pytest.raises(ConfigError) as raised:
        StartFrom.parse(init_from).check(config)
    assert str(raised.value) == (
        f"config.train.init_from = {init_from!r}, but {untrained} has no checkpoint named "
        f"'last': choose one of best, latest, averaged (config.train.init_from={untrained}:latest)."
    )


def test_a_multilingual_model_fine_tuned_on_one_direction_still_reads_its_tag(
    tiny_multilingual_run, small_corpus, tmp_path
):
    config = finetuning_config(small_corpus, tiny_multilingual_run[0], steps=2, eval_every=2)
    config.data.name = f"text:{small_corpus}:de-fr"
    config.train.eval_max_sentences = 3
    run = Trainer(config, str(tmp_path / "de_fr"))
    assert run.tokenizer.languages == ("de", "en", "fr") and run.data.languages == ("fr",)
    source, _ = next(iter(run.train_pairs))
    assert source.numpy().decode().startswith("<2fr> ")
    result = run.run()  # validated into French: the request names the target language
    assert result.step == 2 and result.validation_score is not None


def test_the_optimizer_state_is_kept_on_request_and_its_step_starts_afresh(
    tiny_run, small_corpus, tmp_path
):
    config = finetuning_config(small_corpus, tiny_run[0], keep_optimizer=True, steps=1)
    run = Trainer(config, str(tmp_path / "kept"))
    moments = [v for v in run.optimizer.variables if "iteration" not in v.path]
    assert int(run.optimizer.iterations.numpy()) == 0
    reader = tf.train.load_checkpoint(checkpoint_path(tiny_run[0], "latest"))
    saved = [
        reader.get_tensor(key)
        for key in reader.get_variable_to_shape_map()
        if key.startswith("optimizer/") and "iteration" not in key
    ]
    assert moments and all(np.any(v.numpy() != 0) for v in moments if v.shape.rank)
    assert sum(float(np.abs(v.numpy()).sum()) for v in moments if v.shape.rank) == pytest.approx(
        sum(float(np.abs(t).sum()) for t in saved if np.ndim(t)), rel=1e-6
    )
    assert run.run().step == 1
    config.train.init_from = f"{tiny_run[0]}:best"
    with pytest.raises(ConfigError, match="holds weights only: set config.train.init_from="):
        StartFrom.parse(config.train.init_from).check(config)
    config.train.update(init_from=f"{tiny_run[0]}:latest", freeze="decoder")
    with pytest.raises(ConfigError, match=r"config.train.freeze = 'decoder' but .*'s is ''"):
        StartFrom.parse(config.train.init_from).check(config)
    # A run from before train.freeze (no such key in its config.json) froze nothing.
    older = tmp_path / "older"
    shutil.copytree(tiny_run[0], older)
    saved = json.loads((older / "config.json").read_text())
    del saved["train"]["freeze"]
    (older / "config.json").write_text(json.dumps(saved))
    config.train.update(init_from=f"{older}:latest", freeze="")
    StartFrom.parse(config.train.init_from).check(config)
