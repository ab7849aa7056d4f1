"""The settings a saved data position depends on, how a change is reported, and the tokenizer
file named when the disk is full."""

import errno
from pathlib import Path

import pytest
import tensorflow as tf

import data_pipeline
from common.storage import StorageError
from configs import tiny
from rundir.config import data_spec
from training.data import changed_settings, data_settings, load_data, training_batches


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


def test_a_saved_position_holds_the_shuffle_buffer_not_the_pairs_read(tiny_run, tfds_dir, tmp_path):
    """Multi30k's training split is read from disk on every pass: a saved position holds the
    shuffle buffer and the batches in the making (1.8 MB here), not a cache of the pairs read
    (TFDS's autocache of a small split: 16.6 MB here, 197 MB in the multilingual pre-training)."""
    config = tiny.get_config()
    config.data.data_dir = tfds_dir
    config.data.shuffle_buffer = 1024  # smaller than the split: shuffled in blocks as it streams
    pairs, _ = data_pipeline.load_training_split(data_spec(config), config.data.train_split)
    tokenizer = data_pipeline.Tokenizer.from_file(f"{tiny_run[0]}/spm.model")
    iterator = iter(training_batches(config, pairs, tokenizer))
    for _ in range(100):
        next(iterator)
    prefix = Path(tf.train.Checkpoint(iterator=iterator).write(str(tmp_path / "position")))
    size = sum(path.stat().st_size for path in prefix.parent.glob(f"{prefix.name}.*"))
    assert size < 4_000_000, size
