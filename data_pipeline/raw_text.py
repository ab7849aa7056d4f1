"""Reading raw sentence-per-line text files (plain or gzip), strictly.

A file is read as bytes, gunzipped when it starts with the gzip magic number (whatever its
name), decoded as strict UTF-8 and split on "\\n". One trailing "\\r" per line (CRLF files) and a
leading UTF-8 byte-order mark are removed; nothing else is changed (no stripping, no Unicode
normalisation), so a line read here is the line as written. Errors are `DataError`s naming the
file (and the 1-based line for undecodable bytes).

`read_parallel` holds both files in memory (validation and test splits); `iter_parallel` streams
them a line at a time with the same checks (a training split of millions of lines).

Example:
    >>> src, tgt = read_parallel("train.de.gz", "train.en.gz")  # doctest: +SKIP
    >>> len(src) == len(tgt)
    True
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import itertools
import os
import zlib
from collections.abc import Iterator

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


def _open_lines(path: str, stack: contextlib.ExitStack) -> Iterator[bytes]:
    """The lines of a plain or gzipped file as bytes, each without its "\\n"; a file that
    cannot be read to its end raises a DataError naming it."""
    file = stack.enter_context(tf.io.gfile.GFile(path, "rb"))
    compressed = file.read(2) == _GZIP_MAGIC
    file.seek(0)
    if compressed:
        file = stack.enter_context(gzip.GzipFile(fileobj=file))

    def lines() -> Iterator[bytes]:
        try:
            for line in file:
                yield line[:-1] if line.endswith(b"\n") else line
        except (OSError, EOFError, zlib.error) as e:
            raise DataError(f"{path}: not a readable gzip file ({e}).") from e

    return lines()


def _decode_line(data: bytes, path: str, number: int) -> str:
    try:
        line = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise DataError(decode_message(path, number, e.reason)) from e
    if number == 1 and line.startswith(_BOM):
        line = line[1:]
    return line[:-1] if line.endswith("\r") else line


def iter_parallel(
    source_path: str | os.PathLike, target_path: str | os.PathLike
) -> Iterator[tuple[str, str]]:
    """The (source, target) line pairs of two aligned files, read a line at a time (bounded
    memory), decoded as :func:`read_parallel` does; a `DataError` names the file and line of
    undecodable bytes, or both line counts when one file ends first.

    Example:
        >>> sum(1 for _ in iter_parallel("train.de.gz", "train.en.gz"))  # doctest: +SKIP
        29000
    """
    source_path, target_path = os.fspath(source_path), os.fspath(target_path)
    for path in (source_path, target_path):
        if not tf.io.gfile.exists(path):
            raise DataError(f"File not found: {path}.")
    with contextlib.ExitStack() as stack:
        sources = _open_lines(source_path, stack)
        targets = _open_lines(target_path, stack)
        for number, (source, target) in enumerate(itertools.zip_longest(sources, targets), 1):
            if source is None or target is None:
                ended = number - 1  # the lines of the file that ended first
                other = ended + 1 + sum(1 for _ in (targets if source is None else sources))
                counts = (ended, other) if source is None else (other, ended)
                raise DataError(line_count_message(source_path, counts[0], target_path, counts[1]))
            yield (
                _decode_line(source, source_path, number),
                _decode_line(target, target_path, number),
            )
