"""Files of any size translated (or scored) a window of lines at a time: memory bounded by the
window, the output written in input order as it goes, an interrupted run continued where it
stopped.

An output file ``OUT`` is written as ``OUT.partial``; after each window ``OUT.partial.json``
records how many lines of each input it holds, how many bytes of the input they were and those
bytes' SHA-256, and the run's options. When the input ends, ``OUT.partial`` becomes ``OUT`` (a
rename: a reader never sees part of ``OUT``) and the record goes. The same command run again after
a crash, ``kill -9`` or Ctrl-C finds the record, checks that each input still begins with the
same bytes and that the options are the same, drops what was written after the last record, and
goes on from the next line: the output is byte for byte an uninterrupted run's. Anything else
(another input, other options, a missing part) starts over, saying why.

Standard input and output (``-``, a pipe, a terminal) stream the same way but cannot resume.

Example:
    >>> def upper(first_line: int, columns: list[list[str]]) -> str:
    ...     return "".join(line.upper() + "\\n" for line in columns[0])
    >>> stream_lines(["in.txt"], "out.txt", upper, {"case": "upper"}, window=1000)
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import sys
from collections.abc import Callable, Sequence
from typing import BinaryIO

from absl import flags
from tqdm import tqdm

from common.errors import UserError
from common.files import read_json, write_json
from common.storage import writing

STDIO = "-"
WINDOW = 10_000  # lines read, sorted, processed and written at a time (docs/PERFORMANCE.md)
_COUNT_CHUNK = 1 << 20  # bytes read at a time to count a file's lines


class StreamError(UserError, ValueError):
    """Inputs that cannot be streamed together: files of different lengths."""


def count_lines(path: str) -> int:
    """How many lines ``path`` has (a last line without a newline counts), read in chunks."""
    count, last = 0, b"\n"
    with open(path, "rb") as file:
        while chunk := file.read(_COUNT_CHUNK):
            count += chunk.count(b"\n")
            last = chunk[-1:]
    return count + (last != b"\n")


class InputLines:
    """A file's lines (``-``: standard input's) read in order without their line ends (``\\n``
    or ``\\r\\n``) or a byte-order mark at the start (as Windows editors write UTF-8; bad UTF-8
    becomes U+FFFD), with how many lines and bytes were read and those bytes' SHA-256.

    Example:
        >>> lines = InputLines("in.txt")
        >>> lines.read(2), lines.lines
        (['Ein Hund.', 'Ja.'], 2)
    """

    def __init__(self, path: str):
        self.path = path
        self._file: BinaryIO = sys.stdin.buffer if path == STDIO else open(path, "rb")  # noqa: SIM115
        self._start()

    def _start(self) -> None:
        self.lines, self.bytes, self._digest = 0, 0, hashlib.sha256()

    def read(self, count: int) -> list[str]:
        """The next ``count`` lines (fewer at the end of the file)."""
        lines = []
        while len(lines) < count and (raw := self._file.readline()):
            self.lines += 1
            self.bytes += len(raw)
            self._digest.update(raw)
            encoding = "utf-8-sig" if self.lines == 1 else "utf-8"
            lines.append(raw.rstrip(b"\n").rstrip(b"\r").decode(encoding, errors="replace"))
        return lines

    def skip(self, count: int, chunk: int) -> None:
        """Reads past ``count`` lines, ``chunk`` at a time."""
        while count > self.lines and self.read(min(chunk, count - self.lines)):
            pass

    def rewind(self) -> None:
        """Back to the first line (a file only)."""
        self._file.seek(0)
        self._start()

    def position(self) -> dict[str, object]:
        """Where reading stands, as the record of a partial output keeps it."""
        return {
            "path": self.path if self.path == STDIO else os.path.abspath(self.path),
            "lines": self.lines,
            "bytes": self.bytes,
            "sha256": self._digest.hexdigest(),
        }

    def close(self) -> None:
        if self.path != STDIO:
            self._file.close()


@dataclasses.dataclass
class _Output:
    """Where a stream writes: ``OUT.partial`` with its record, or an unseekable sink."""

    path: str | None
    file: BinaryIO
    resumable: bool

    @property
    def partial(self) -> str:
        return f"{self.path}.partial"

    @property
    def record(self) -> str:
        return f"{self.path}.partial.json"


def _regular_output(path: str | None) -> bool:
    return path not in (None, STDIO) and (not os.path.exists(path) or os.path.isfile(path))


def _open_sink(path: str | None) -> _Output:
    if path in (None, STDIO):
        stdout = getattr(sys.stdout, "buffer", None)
        return _Output(None, stdout if stdout is not None else _TextSink(sys.stdout), False)
    return _Output(path, open(path, "wb"), False)  # noqa: SIM115  (a device or a pipe)


class _TextSink:
    """A text stream (a test's captured stdout) taking bytes."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, data: bytes) -> None:
        self._stream.write(data.decode("utf-8"))

    def flush(self) -> None:
        self._stream.flush()

    def close(self) -> None:
        pass


def why_not_resume(
    record: dict | None, partial: str, inputs: Sequence[InputLines], options: dict, chunk: int
) -> str | None:
    """None when ``partial`` and its ``record`` continue a run of ``inputs`` with ``options``
    (the inputs are then read up to the recorded line), else why not (the inputs rewound)."""
    if record is None:
        return f"its record {partial}.json is missing"
    if not os.path.isfile(partial):
        return "it is missing"
    recorded_options = record.get("options", {})
    if recorded_options != options:
        changed = sorted(
            name
            for name in set(options) | set(recorded_options)
            if options.get(name) != recorded_options.get(name)
        )
        return f"it was written with other options ({', '.join('--' + n for n in changed)})"
    recorded = record.get("inputs", [])
    if [position["path"] for position in recorded] != [
        lines.position()["path"] for lines in inputs
    ]:
        return "it holds the output of other input files"
    if os.path.getsize(partial) < record.get("output_bytes", 0):
        return "it is shorter than its record says"
    for lines, position in zip(inputs, recorded, strict=True):
        lines.skip(position["lines"], chunk)
        if lines.position() != position:
            for each in inputs:
                each.rewind()
            return f"{lines.path} no longer begins with the {position['lines']} lines it holds"
    return None


def _open_resumable(
    path: str, inputs: Sequence[InputLines], options: dict, chunk: int, resume: bool
) -> tuple[_Output, int]:
    """``OUT.partial`` to append to and the bytes it keeps: a continued run's, or a new one."""
    output = _Output(path, None, True)  # type: ignore[arg-type]
    record = read_json(output.record)
    with writing(output.partial):
        if record is not None or os.path.exists(output.partial):
            reason = (
                why_not_resume(record, output.partial, inputs, options, chunk)
                if resume
                else "--noresume"
            )
            if reason is None:
                output.file = open(output.partial, "r+b")  # noqa: SIM115
                output.file.truncate(record["output_bytes"])
                output.file.seek(record["output_bytes"])
                print(
                    f"Continuing {output.partial} after line {inputs[0].lines} (--noresume "
                    "starts over).",
                    file=sys.stderr,
                )
                return output, record["output_bytes"]
            print(f"Starting {output.partial} over: {reason}.", file=sys.stderr)
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        output.file = open(output.partial, "wb")  # noqa: SIM115
        return output, 0


def _common_length(paths: Sequence[str]) -> int | None:
    """The files' line count (None for standard input); a StreamError unless they have the
    same."""
    counts = {path: count_lines(path) for path in paths if path != STDIO}
    for path, count in counts.items():
        first, first_count = next(iter(counts.items()))
        if count != first_count:
            longer, shorter = (path, first) if count > first_count else (first, path)
            raise StreamError(
                f"{longer} has more lines than {shorter} ({min(count, first_count)}): they must "
                "be aligned line by line."
            )
    return counts.get(paths[0])


def _aligned(inputs: Sequence[InputLines], columns: list[list[str]]) -> None:
    """A StreamError unless every input gave as many lines as the first (and, at its end, has
    no more)."""
    first = inputs[0]
    for lines, column in zip(inputs[1:], columns[1:], strict=True):
        more = len(column) > len(columns[0]) or (not columns[0] and lines.read(1))
        if more or len(column) < len(columns[0]):
            longer, shorter = (lines, first) if more else (first, lines)
            raise StreamError(
                f"{longer.path} has more lines than {shorter.path} ({shorter.lines}): they "
                "must be aligned line by line."
            )


def stream_lines(
    input_paths: Sequence[str],
    output_path: str | None,
    process: Callable[[int, list[list[str]]], str],
    options: dict,
    window: int,
    resume: bool = True,
    progress: bool = True,
    unit: str = "sent",
) -> None:
    """Runs ``process(first_line_number, columns)`` over windows of ``window`` lines of the
    aligned files ``input_paths`` (``columns[i]``: the window's lines of file ``i``) and writes
    the text it returns, in order, to ``output_path`` (None or ``-``: standard output) as it
    goes, with a progress bar. A regular output file is written as ``OUT.partial`` and resumed
    as the module says when ``options`` (every setting the output depends on, as JSON values)
    are the same; ``resume=False`` starts over."""
    if window < 1:
        raise StreamError(f"The window must be at least one line, got {window}.")
    for path in input_paths:
        if path != STDIO and not os.path.isfile(path):
            problem = "is a directory" if os.path.isdir(path) else "does not exist"
            raise StreamError(f"Cannot read {path}: it {problem}.")
    total = _common_length(input_paths)
    options = json.loads(json.dumps(options))  # as its record reads back
    inputs = [InputLines(path) for path in input_paths]
    resumable = _regular_output(output_path) and STDIO not in input_paths
    try:
        if resumable:
            output, written = _open_resumable(output_path, inputs, options, window, resume)
        else:
            output, written = _open_sink(output_path), 0
        with tqdm(
            total=total,
            initial=inputs[0].lines,
            unit=unit,
            disable=not progress,
            dynamic_ncols=True,
        ) as bar:
            try:
                written = _run_windows(inputs, output, written, process, options, window, bar)
            except BaseException:
                if output.resumable and os.path.exists(output.record):
                    done = read_json(output.record)["inputs"][0]["lines"]
                    print(
                        f"\nStopped: {output.partial} holds the first {done} lines; run the same "
                        "command again to continue.",
                        file=sys.stderr,
                    )
                raise
        _finish(output)
    finally:
        for lines in inputs:
            lines.close()


def _run_windows(
    inputs: Sequence[InputLines],
    output: _Output,
    written: int,
    process: Callable[[int, list[list[str]]], str],
    options: dict,
    window: int,
    bar: tqdm,
) -> int:
    while True:
        first_line = inputs[0].lines + 1
        columns = [lines.read(window) for lines in inputs]
        _aligned(inputs, columns)
        if not columns[0]:
            return written
        data = process(first_line, columns).encode("utf-8")
        with writing(output.partial if output.resumable else output.path or "standard output"):
            output.file.write(data)
            output.file.flush()
            written += len(data)
            if output.resumable:
                os.fsync(output.file.fileno())
                write_json(
                    output.record,
                    {
                        "inputs": [lines.position() for lines in inputs],
                        "options": options,
                        "output_bytes": written,
                    },
                )
        bar.update(len(columns[0]))


def _finish(output: _Output) -> None:
    """The whole output in place: ``OUT.partial`` renamed to ``OUT``, its record removed."""
    if not output.resumable:
        output.file.flush()
        if output.path is not None:
            output.file.close()
        return
    output.file.close()
    with writing(output.path):
        os.replace(output.partial, output.path)
        if os.path.exists(output.record):  # an empty input wrote no window and no record
            os.remove(output.record)


def script_options(*ignored: str) -> dict[str, object]:
    """The values of every flag a script and ``cli/`` defined, but ``ignored`` ones: the options
    a partial output was written with."""
    script = sys.argv[0]
    return {
        flag.name: flag.value
        for module, module_flags in flags.FLAGS.flags_by_module_dict().items()
        if module == script or module.startswith("cli.")
        for flag in module_flags
        if flag.name not in ignored and flag.name != "traceback"
    }
