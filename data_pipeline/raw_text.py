"""Reading raw sentence-per-line text files (plain or gzip), strictly.

A file is read as bytes, gunzipped when it starts with the gzip magic number (whatever its
name), decoded as strict UTF-8 and split on "\\n". One trailing "\\r" per line (CRLF files) and a
leading UTF-8 byte-order mark are removed; nothing else is changed (no stripping, no Unicode
normalisation), so a line read here is the line as written. Errors are `DataError`s naming the
file (and the 1-based line for undecodable bytes).

Example:
    >>> src, tgt = read_parallel("train.de.gz", "train.en.gz")  # doctest: +SKIP
    >>> len(src) == len(tgt)
    True
"""

from __future__ import annotations

import gzip
import hashlib
import os
import zlib

import tensorflow as tf

from data_pipeline.errors import DataError, checksum_message, decode_message, line_count_message

_GZIP_MAGIC = b"\x1f\x8b"
_BOM = "\ufeff"


def read_bytes(path: str | os.PathLike) -> bytes:
    """Returns the raw (still compressed) bytes of a local or `tf.io.gfile` path.

    Example:
        >>> data = read_bytes("val.de.gz")  # doctest: +SKIP
    """
    path = os.fspath(path)
    if not tf.io.gfile.exists(path):
        raise DataError(f"File not found: {path}.")
    with tf.io.gfile.GFile(path, "rb") as f:
        return f.read()


def verify_sha256(data: bytes, expected: str, path: str, how_to_fix: str | None = None) -> None:
    """Raises `DataError` naming `path` and both digests unless sha256(data) == expected; the
    message ends with `how_to_fix` when given (else: replace the file, or rebuild).

    Example:
        >>> verify_sha256(b"", hashlib.sha256(b"").hexdigest(), "empty.txt")
    """
    actual = hashlib.sha256(data).hexdigest()
    if actual != expected.lower():
        raise DataError(checksum_message(path, expected, actual, how_to_fix))


def gunzip_if_compressed(data: bytes, path: str) -> bytes:
    """The file's content: `data` gunzipped when it starts with the gzip magic number.

    Example:
        >>> gunzip_if_compressed(gzip.compress(b"Ein Hund\\n"), "x.de.gz")
        b'Ein Hund\\n'
    """
    if not data.startswith(_GZIP_MAGIC):
        return data
    try:
        return gzip.decompress(data)
    except (OSError, EOFError, zlib.error) as e:
        raise DataError(f"{path}: not a readable gzip file ({e}).") from e


def decode_lines(data: bytes, path: str) -> list[str]:
    """Splits (gunzipped if needed) file bytes into lines of text; see the module docstring.

    Example:
        >>> decode_lines(b"Hallo Welt\\nEin Hund\\n", "x.de")
        ['Hallo Welt', 'Ein Hund']
    """
    data = gunzip_if_compressed(data, path)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise DataError(decode_message(path, line, e.reason)) from e
    if text.startswith(_BOM):
        text = text[1:]
    lines = text.split("\n")
    if lines[-1] == "":  # The file ends with a newline (or is empty).
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def read_lines(path: str | os.PathLike) -> list[str]:
    """Reads a plain or gzipped UTF-8 text file into a list of lines.

    Example:
        >>> read_lines("val.en.gz")[0]  # doctest: +SKIP
        'A group of men are loading cotton onto a truck'
    """
    return decode_lines(read_bytes(path), os.fspath(path))


def check_aligned(
    source: str, source_lines: list[str], target: str, target_lines: list[str]
) -> None:
    """Raises `DataError` naming both files and counts unless the two sides have equal length.

    Example:
        >>> check_aligned("a.de", ["x"], "a.en", ["y"])
    """
    if len(source_lines) != len(target_lines):
        raise DataError(line_count_message(source, len(source_lines), target, len(target_lines)))


def read_parallel(
    source_path: str | os.PathLike, target_path: str | os.PathLike
) -> tuple[list[str], list[str]]:
    """Reads two sentence-aligned files and checks that they have the same number of lines.

    Example:
        >>> de, en = read_parallel("val.de.gz", "val.en.gz")  # doctest: +SKIP
        >>> len(de), len(en)
        (1014, 1014)
    """
    source_lines = read_lines(source_path)
    target_lines = read_lines(target_path)
    check_aligned(os.fspath(source_path), source_lines, os.fspath(target_path), target_lines)
    return source_lines, target_lines
