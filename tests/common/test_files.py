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
