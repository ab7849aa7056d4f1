"""The model of a config, and the one-line error for a config.json of another version."""

import json

import pytest

from common.errors import ConfigError
from configs import base, tiny
from rundir.config import load_config
from rundir.model import build_model, model_keys


def test_the_config_keys_of_the_model_are_the_transformer_arguments():
    assert set(base.get_config().model) == model_keys()
    model = build_model(tiny.get_config(), vocab_size=40)
    assert model.config.num_decoder_layers == tiny.get_config().model.num_decoder_layers


def write_config(directory, edit) -> str:
    saved = json.loads(base.get_config().to_json())
    edit(saved["model"])
    (directory / "config.json").write_text(json.dumps(saved))
    return str(directory)


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda model: model.pop("num_decoder_layers"), "lacks model.num_decoder_layers"),
        (lambda model: model.update(token_dropout=0.0), "has an unknown key model.token_dropout"),
    ],
)
def test_a_config_json_of_another_version_is_one_line_naming_the_key(tmp_path, edit, message):
    config = load_config(write_config(tmp_path, edit))
    with pytest.raises(ConfigError, match=message) as raised:
        build_model(config, vocab_size=20)
    assert "\n" not in str(raised.value) and "train it again" in str(raised.value)


def test_a_directory_without_config_json_is_named(tmp_path):
    with pytest.raises(FileNotFoundError, match="is not a training work directory"):
        load_config(str(tmp_path))
