"""The data error type and its messages.

Every problem with input data (missing, corrupt or misaligned files; an unknown data set, language
pair or split) raises `DataError` (a `ValueError` and a `common.errors.UserError`), whose message
says what is wrong, where, and how to fix it. The command-line scripts print it as one line.

Example:
    >>> raise DataError(line_count_message("a.de", 3, "a.en", 2))
    Traceback (most recent call last):
    ...
    data_pipeline.errors.DataError: Parallel files have different line counts: a.de has 3 ...
"""

from __future__ import annotations

from collections.abc import Sequence

from common.errors import UserError


class DataError(UserError, ValueError):
    """Input data is missing, corrupt, misaligned or unknown; the message says which and why."""


def missing_files_message(missing: Sequence[str], looked_in: str, how_to_fix: str) -> str:
    """Message for files that were needed but not found.

    Example:
        >>> missing_files_message(["val.de.gz"], "/data", "Set MULTI30K_DIR.")
        'Missing 1 file(s): val.de.gz. Looked in: /data. Set MULTI30K_DIR.'
    """
    return (
        f"Missing {len(missing)} file(s): {', '.join(missing)}. Looked in: {looked_in}. "
        f"{how_to_fix}"
    )


def checksum_message(path: str, expected: str, actual: str, how_to_fix: str | None = None) -> str:
    """Message for a file whose SHA-256 digest is not the published one; it ends with
    `how_to_fix`, by default: replace the file, or rebuild.

    Example:
        >>> checksum_message("/d/val.de.gz", "ab", "cd")[:40]
        'SHA-256 checksum mismatch for /d/val.de.'
    """
    return (
        f"SHA-256 checksum mismatch for {path}: expected {expected}, got {actual}. The file is "
        "corrupt, truncated or a different version; "
        + (
            how_to_fix
            or "replace it with the published file (or rebuild, which downloads it again when "
            "online)."
        )
    )


def line_count_message(source: str, source_lines: int, target: str, target_lines: int) -> str:
    """Message for two sides of a parallel corpus with different numbers of lines.

    Example:
        >>> line_count_message("a.de", 3, "a.en", 2)[:59]
        'Parallel files have different line counts: a.de has 3 lines'
    """
    return (
        f"Parallel files have different line counts: {source} has {source_lines} lines but "
        f"{target} has {target_lines} lines; line N of one side must translate line N of the "
        "other."
    )


def decode_message(path: str, line: int, reason: str) -> str:
    """Message for bytes that are not valid UTF-8 (`line` is 1-based).

    Example:
        >>> decode_message("a.de", 7, "invalid start byte")
        'a.de, line 7: not valid UTF-8 (invalid start byte).'
    """
    return f"{path}, line {line}: not valid UTF-8 ({reason})."
