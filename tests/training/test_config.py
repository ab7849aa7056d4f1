import importlib
import re
from pathlib import Path

import pytest

from common.errors import ConfigError
from configs import base, tiny
from tests.script_runner import run_in_process
from training.config import validate

REPO_ROOT = Path(__file__).resolve().parents[2]
SHIPPED_CONFIGS = sorted(
    path.stem for path in REPO_ROOT.glob("configs/*.py") if path.stem != "__init__"
)


def test_the_readmes_table_of_configs_lists_every_shipped_config():
    """The table's rows (`| `name.py` | what |`) are the configs besides base.py, which holds
    every key's default."""
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    listed = re.findall(r"^\| `(\w+)\.py` \|", readme, flags=re.M)
    assert sorted(listed) == [name for name in SHIPPED_CONFIGS if name != "base"]


@pytest.mark.parametrize("name", SHIPPED_CONFIGS)
def test_shipped_configs_are_valid(name):
    validate(importlib.import_module(f"configs.{name}").get_config())


@pytest.mark.parametrize("direction", ["de-en", "en-de"])
def test_the_finetuned_config_starts_from_the_multilingual_config(direction, tmp_path):
    """configs/multi30k_finetuned.py's model and tokenizer are the multilingual run's (a
    difference would stop the run at start-up: training/finetuning.py); a direction it has no
    measured recipe for is refused."""
    from configs import multi30k_finetuned, multi30k_multilingual
    from training.finetuning import StartFrom

    (tmp_path / "config.json").write_text(multi30k_multilingual.get_config().to_json())
    (tmp_path / "averaged").mkdir()  # an averaged checkpoint's files, as the check sees them
    (tmp_path / "averaged" / "checkpoint").write_text('model_checkpoint_path: "ckpt-1"\n')
    (tmp_path / "averaged" / "ckpt-1.index").touch()
    config = multi30k_finetuned.get_config(direction)
    validate(config)
    StartFrom(str(tmp_path), "averaged").check(config)
    assert config.data.name == f"multi30k/{direction}"
    with pytest.raises(ValueError, match="de-en and en-de, not 'fr-en': pass --config=config"):
        multi30k_finetuned.get_config("fr-en")


def test_a_misspelt_key_in_a_config_is_an_error_naming_it():
    config = tiny.get_config()
    with pytest.raises(AttributeError, match="num_layrs"):
        config.model.num_layrs = 4


@pytest.mark.parametrize(
    "key, value, message",
    [
        (
            "model.d_model",
            30,
            r"config.model.d_model = 30 is invalid: it must be divisible by num_heads \(4\)",
        ),
        ("model.dropout", -0.1, r"config.model.dropout = -0.1 is invalid: it must be a number in"),
        (
            "model.attention_dropout",
            1.0,
            r"config.model.attention_dropout = 1.0 is invalid: it must be a number in \[0, 1\), "
            r"or None for dropout's\.",
        ),
        ("model.activation_dropout", -0.2, r"config.model.activation_dropout = -0.2 is invalid"),
        ("train.steps", 0, r"config.train.steps = 0 is invalid: expected a positive integer"),
        (
            "train.eval_every",
            -1,
            r"config.train.eval_every = -1 is invalid: expected a non-negative integer \(0: no",
        ),
        ("model.num_decoder_layers", 0, r"config.model.num_decoder_layers = 0 is invalid"),
        (
            "train.early_stopping_patience",
            -1,
            r"config.train.early_stopping_patience = -1 is invalid: expected a non-negative",
        ),
        (
            "train.keep_optimizer",
            True,
            r"config.train.keep_optimizer = True is invalid: .* train.init_from names: set that",
        ),
        ("train.precision", "float8", r"config.train.precision = 'float8' is invalid"),
        ("train.distribution", "horovod", r"config.train.distribution = 'horovod' is invalid"),
        ("data.tokens_per_batch", 10, r"config.data.tokens_per_batch = 10 is invalid"),
        ("train.decay", "linear", r"config.train.decay = 'linear' is invalid: expected one of"),
        (
            "train.weight_decay",
            -0.01,
            r"config.train.weight_decay = -0.01 is invalid: expected a non-negative number",
        ),
        (
            "tokenizer.sampling_alpha",
            -0.1,
            r"config.tokenizer.sampling_alpha = -0.1 is invalid: expected a non-negative number",
        ),
    ],
)
def test_bad_values_are_errors_naming_the_key(key, value, message):
    config = base.get_config()
    section, name = key.split(".")
    config[section][name] = value
    with pytest.raises(ConfigError, match=message):
        validate(config)


@pytest.mark.parametrize(
    "override, message",
    [
        ("--config.model.num_layrs=4", "num_layrs"),
        (
            "--config.model.num_heads=3",
            "config.model.d_model = 32 is invalid: it must be divisible",
        ),
        ("--config.model.dropout=-0.5", "config.model.dropout = -0.5 is invalid"),
        ("--config.model.attention_dropout=1.5", "config.model.attention_dropout = 1.5 is invalid"),
        ("--config.data.name=multi30k/de-xx", "Unknown Multi30k language pair 'de-xx'"),
        (
            "--config.data.extra_train_data=multi30k/en-de",
            "config.data.extra_train_data names 'multi30k/en-de', which translates into 'de'",
        ),
    ],
)
def test_train_py_stops_at_start_up_with_a_message_naming_the_key(tmp_path, override, message):
    completed = run_in_process(
        "train.py", "--config=configs/tiny.py", override, f"--workdir={tmp_path / 'run'}"
    )
    assert completed.returncode != 0
    assert message in completed.stderr
    assert "Traceback" not in completed.stderr
    assert not (tmp_path / "run" / "checkpoints").exists()  # stopped before any work


def test_subword_sampling_needs_a_unigram_tokenizer():
    config = base.get_config()
    config.tokenizer.sampling_alpha = 0.3
    validate(config)
    config.tokenizer.model_type = "bpe"
    with pytest.raises(ConfigError, match=r"sampling_alpha = 0.3 is invalid: .* needs .*'unigram'"):
        validate(config)


def test_a_cosine_decay_needs_more_steps_than_warmup():
    config = base.get_config()
    config.train.decay = "cosine"
    config.train.steps = config.train.warmup_steps
    with pytest.raises(ConfigError, match=r"config.train.warmup_steps = 1000 is invalid: a cosine"):
        validate(config)
