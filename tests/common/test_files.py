"""Atomic writes: a write the file system refuses leaves the old file whole and names it."""

import errno
import os
import stat
import tempfile

import pytest

from common import files
from common.storage import StorageError


def test_a_full_disk_leaves_the_old_file_whole_and_no_temporary_file(tmp_path, monkeypatch):
    path = tmp_path / "eval" / "test.hyp"
    files.atomic_write_text(str(path), "old\n")
    umask = os.umask(0o022)
    os.umask(umask)
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~umask  # as open() makes it

    def full_disk(descriptor):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full_disk)
    with pytest.raises(StorageError, match=f"No space left on the device while writing {path};"):
        files.atomic_write_text(str(path), "new\n" * 1000)
    assert path.read_text() == "old\n"
    assert os.listdir(path.parent) == ["test.hyp"]


def test_a_read_only_directory_is_named(tmp_path, monkeypatch):
    def read_only(dir, prefix):
        raise OSError(errno.EROFS, "Read-only file system", os.path.join(dir, prefix + "x1"))

    monkeypatch.setattr(tempfile, "mkstemp", read_only)
    path = tmp_path / "config.json"
    with pytest.raises(StorageError, match=f"read-only while writing {path};"):
        files.write_json(str(path), {"a": 1})
    assert not path.exists()


def test_an_atomic_directory_gets_the_mode_a_new_directory_gets(tmp_path):
    with files.atomic_directory(str(tmp_path / "export")) as staging:
        files.atomic_write_text(os.path.join(staging, "model.bin"), "weights")
    (tmp_path / "plain").mkdir()
    assert (tmp_path / "export").stat().st_mode == (tmp_path / "plain").stat().st_mode


def test_an_atomic_directory_refuses_a_file_in_its_place_before_the_work(tmp_path):
    config = tmp_path / "config.json"
    config.write_text("the run's config")
    with pytest.raises(StorageError) as raised, files.atomic_directory(str(config)):
        pytest.fail("the block ran: the work was done before the refusal")
    assert str(raised.value) == (
        f"A file is in the way while writing {config}; anything written there before is "
        "unchanged. Choose another path, then rerun."
    )
    assert os.listdir(tmp_path) == ["config.json"] and config.read_text() == "the run's config"


def test_an_atomic_directory_refuses_a_file_put_in_its_place_meanwhile(tmp_path):
    output = tmp_path / "export"
    refused = f"A file is in the way while writing {output};"
    with pytest.raises(StorageError, match=refused), files.atomic_directory(str(output)) as staging:
        files.atomic_write_text(os.path.join(staging, "model.bin"), "weights")
        output.write_text("written by another program meanwhile")
    assert os.listdir(tmp_path) == ["export"]
    assert output.read_text() == "written by another program meanwhile"


def test_an_atomic_directory_replaces_a_link_to_a_directory_and_keeps_its_target(tmp_path):
    target, link = tmp_path / "v1", tmp_path / "export"
    target.mkdir()
    (target / "model.bin").write_text("old weights")
    link.symlink_to(target)
    with files.atomic_directory(str(link)) as staging:
        files.atomic_write_text(os.path.join(staging, "model.bin"), "new weights")
    assert not link.is_symlink() and (link / "model.bin").read_text() == "new weights"
    assert (target / "model.bin").read_text() == "old weights"
    assert sorted(os.listdir(tmp_path)) == ["export", "v1"]
