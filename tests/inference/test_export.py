"""export_saved_model on a full disk: one line naming the output, the previous export kept."""

import os

import pytest
import tensorflow as tf

from common.storage import StorageError
from inference.export import export_saved_model
from inference.loading import load_translator


def test_a_refused_export_keeps_the_previous_saved_model(
    tiny_run, tmp_path, monkeypatch, full_disk
):
    translator, _ = load_translator(tiny_run[0], "latest", jit_compile=False)
    output = tmp_path / "saved_model"
    output.mkdir()
    (output / "saved_model.pb").write_text("the previous export")

    def save(translator, staging, signatures, options):
        full_disk(os.path.join(staging, "variables", "variables"))()

    monkeypatch.setattr(tf.saved_model, "save", save)
    with pytest.raises(StorageError) as raised:
        export_saved_model(translator, str(output))
    assert str(raised.value) == (
        f"No space left on the device while writing {output}; anything written there before is "
        "unchanged. Free some space there, then rerun the same command."
    )
    assert (output / "saved_model.pb").read_text() == "the previous export"
    assert os.listdir(tmp_path) == ["saved_model"]  # the partial export is removed
