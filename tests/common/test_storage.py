"""Refusals of the file system as one line: which errors count, and what the line says."""

import errno

import pytest
import tensorflow as tf

from common.storage import StorageError, storage_error, writing

# The messages TensorFlow 2.21 raised on a full 1 MB tmpfs and on a read-only one.
FULL = (
    "{{function_node __wrapped__SaveV2_dtypes_3_device_/job:localhost/replica:0/task:0/device:"
    "CPU:0}} /w/checkpoints/ckpt-30_temp/part-00000-of-00001.data-00000-of-00001.tempstate123"
    "; No space left on device [Op:SaveV2]"
)
READ_ONLY = "/w/checkpoints; Read-only file system"


@pytest.mark.parametrize(
    "error, path, line",
    [
        (
            tf.errors.ResourceExhaustedError(None, None, FULL),
            "/w/checkpoints/ckpt-30_temp/part-00000-of-00001.data-00000-of-00001.tempstate123",
            "No space left on the device while writing /w/checkpoints/ckpt-30_temp/",
        ),
        (
            tf.errors.PermissionDeniedError(None, None, READ_ONLY),
            "/w/checkpoints",
            "The file system is read-only while writing /w/checkpoints; ",
        ),
        (
            OSError(errno.ENOSPC, "No space left on device", "/w/spm.model.tmp-1"),
            "/w/spm.model.tmp-1",
            "No space left on the device while writing /w/spm.model.tmp-1; anything written "
            "there before is unchanged. Free some space there, then rerun the same command.",
        ),
        (
            OSError(errno.EROFS, "Read-only file system", "/w"),
            "/w",
            "The file system is read-only while writing /w; anything written there before is "
            "unchanged. Make it writable or choose another directory, then rerun.",
        ),
        (OSError(errno.EACCES, "Permission denied", "/w"), "/w", "Permission denied while"),
        (OSError(errno.EDQUOT, "Disk quota exceeded", "/w"), "/w", "The disk quota is exceeded"),
        (IsADirectoryError(errno.EISDIR, "Is a directory", "/w"), "/w", "A directory is in"),
        (FileExistsError(errno.EEXIST, "File exists", "/w/spm.model"), "/w/spm.model", "A file"),
    ],
)
def test_a_refused_write_is_one_line_naming_the_file(error, path, line):
    storage = storage_error(error)
    assert storage.path == path
    assert str(storage).startswith(line) and "\n" not in str(storage)
    assert storage_error(error, "/w/checkpoints/ckpt-30").path == "/w/checkpoints/ckpt-30"


@pytest.mark.parametrize(
    "error",
    [
        tf.errors.ResourceExhaustedError(None, None, "OOM when allocating tensor with shape"),
        tf.errors.DataLossError(None, None, "file is too short to be an sstable"),
        FileNotFoundError(errno.ENOENT, "No such file or directory", "/w/in.txt"),
        ValueError("No space left on device"),
    ],
)
def test_other_errors_are_not_refusals_of_the_file_system(error):
    assert storage_error(error) is None
    with pytest.raises(type(error)) as raised, writing("/w/file"):
        raise error
    assert raised.value is error


def test_the_innermost_path_and_the_outermost_account_of_what_is_kept_win():
    state = {"latest": "/w/checkpoints/ckpt-10"}

    def kept() -> str:
        return f"{state['latest']} is intact"

    with pytest.raises(StorageError) as raised, writing(kept=kept):
        state["latest"] = "/w/checkpoints/ckpt-20"  # read when the write fails, not before
        with writing("/w/checkpoints/ckpt-30"), writing("/w/elsewhere"):
            raise tf.errors.ResourceExhaustedError(None, None, FULL)
    assert str(raised.value) == (
        "No space left on the device while writing /w/elsewhere; /w/checkpoints/ckpt-20 is "
        "intact. Free some space there, then rerun the same command."
    )
    assert isinstance(raised.value.__cause__, tf.errors.ResourceExhaustedError)
