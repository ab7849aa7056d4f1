"""The settings a saved data position depends on, how a change is reported, and the tokenizer
file named when the disk is full."""

import errno

import pytest

import data_pipeline
from common.storage import StorageError
from configs import tiny
from rundir.config import data_spec
from training.data import changed_settings, data_settings, load_data


def test_the_settings_name_what_the_position_depends_on():
    config = tiny.get_config()
    settings = data_settings(config, num_workers=2)
    assert settings["workers"] == 2 and settings["data.max_length"] == config.data.max_length
    assert settings["data.extra_train_data"] == ""
    config.data.extra_train_data = "multi30k/fr-en"
    assert data_settings(config, 2)["data.extra_train_data"] == "multi30k/fr-en"


def test_changed_settings_lists_every_difference_in_name_order():
    saved = {"data.max_length": 48, "workers": 1, "data.concat_ratio": 0.5}
    current = {"data.max_length": 40, "workers": 1}
    assert changed_settings(saved, current) == (
        "data.concat_ratio 0.5 -> None, data.max_length 48 -> 40"
    )
    assert changed_settings(current, dict(current)) is None


def test_a_tokenizer_the_disk_has_no_room_for_is_named(tfds_dir, tmp_path, monkeypatch):
    def full_disk(workdir, *args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device", f"{workdir}/spm.model.tmp-1-ab")

    monkeypatch.setattr(data_pipeline, "load_or_train_tokenizer", full_disk)
    config = tiny.get_config()
    config.data.data_dir = tfds_dir
    with pytest.raises(
        StorageError, match=f"left on the device while writing {tmp_path}/spm.model;"
    ):
        load_data(config, data_spec(config), str(tmp_path / "spm.model"), ["validation"])
