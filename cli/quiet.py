"""TensorFlow's start-up lines, filtered from stderr: a CPU-only machine starts quietly.

TensorFlow's C++ runtime logs on every start (``oneDNN custom operations are on``, ``Could not
find cuda drivers``, the CPU instructions it was not built for) and, on a machine without a GPU,
an ``E0000 ... failed call to cuInit`` that reads like a failure; ``TF_CPP_MIN_LOG_LEVEL`` no
longer hides them (they are written before absl's logging is initialised). :func:`install`
passes stderr through a filter thread that drops the informational and warning lines of
TensorFlow's and SentencePiece's C++ code and the error lines known to be harmless
(:data:`HARMLESS`); every other line (the scripts' ``error: ...`` lines, Python tracebacks,
TensorFlow's real errors) is shown as it comes. Progress bars pass as they redraw.
"""

from __future__ import annotations

import atexit
import os
import re
import sys
import threading

# A log line of absl: "I0000 00:00:1795737656.179784   15546 port.cc:153] ..." (TensorFlow's C++)
# or "W1206 18:12:02.734034 1404797 checkpointing.py:179] ..." (Python's), or of TensorFlow's C++:
# "2025-09-17 14:44:05.157831: I external/.../cudart_stub.cc:32] ...".
_LOG_LINE = re.compile(
    rb"^(?:(?P<absl>[IWEF])\d{4} [\d:.]+ +\d+ (?P<file>\S+):\d+\]"
    rb"|\d{4}-\d\d-\d\d [\d:.]+: (?P<tsl>[IWEF]) \S+:\d+\])"
)
# This repository's modules and scripts, by file name: the warnings they log are shown.
_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_OWN_FILES = frozenset(
    name.encode()
    for directory in (_ROOT, *(entry.path for entry in os.scandir(_ROOT) if entry.is_dir()))
    for name in os.listdir(directory)
    if name.endswith(".py")
)
# SentencePiece's C++ informational lines: "normalizer.cc(51) LOG(INFO) precompiled_charsmap ...".
_SENTENCEPIECE_INFO = re.compile(rb"^\w+\.cc\(\d+\) LOG\(INFO\) ")
# Lines TensorFlow writes at start-up or on a CPU that are not problems of the run.
HARMLESS = re.compile(
    rb"failed call to cuInit|Could not find cuda drivers|Unable to register cu(?:DNN|FFT|BLAS)"
    rb"|oneDNN supports DT_\w+ only on platforms with AVX-512"
    rb"|All log messages before absl::InitializeLog\(\) is called are written to STDERR"
    rb"|^To enable the following instructions: .* rebuild TensorFlow with the appropriate"
    rb"|^INFO:tensorflow:"  # its Python logger's informational lines ("Assets written to: ...")
    rb"|^INFO: Created TensorFlow Lite XNNPACK delegate for CPU\.$"  # LiteRT's, on loading
    # The LiteRT converter's note on the SentencePiece custom ops export.py --litert_text puts
    # in the model on purpose (any other custom op is refused in one line).
    rb"|^Custom ops: TFText>FastSentencepiece\w+(, TFText>FastSentencepiece\w+)*$"
    rb"|^Details:$"  # (between those two: the converter's heading of the op list)
    rb"|^\ttf\.TFText>FastSentencepiece\w+\("
    rb"|^See instructions: https://www\.tensorflow\.org/lite/guide/ops_custom$"
    # The graph node a logged op error names, on a line of its own after the (warning) line: a
    # SavedModel's in-graph check refusing a request in serve.py, already answered as a 400.
    rb"|^\s*\[\[\{\{(?:function_)?node "
)


def is_noise(line: bytes) -> bool:
    """Whether ``line`` (without its newline) is a TensorFlow start-up or harmless log line.

    Example:
        >>> is_noise(b"E0000 00:00:17.6 1554 cuda_platform.cc:52] failed call to cuInit: ...")
        True
        >>> is_noise(b"error: No space left on the device while writing /tmp/run/spm.model")
        False
    """
    match = _LOG_LINE.match(line)
    if match and match["absl"] == b"W" and match["file"] in _OWN_FILES:
        return False
    if match and (match["absl"] or match["tsl"]) in (b"I", b"W"):
        return True
    if _SENTENCEPIECE_INFO.match(line):
        return True
    return HARMLESS.search(line) is not None


def _forward(read_fd: int, stderr_fd: int) -> None:
    """Copies the pipe to the real stderr, line by line, without the noise."""
    pending = b""  # the start of a line, held until its newline
    while chunk := os.read(read_fd, 65536):
        lines = (pending + chunk).split(b"\n")
        pending = lines.pop()
        shown = b"".join(line + b"\n" for line in lines if not is_noise(line))
        if b"\r" in pending:  # a progress bar redrawing itself: shown as it comes
            shown, pending = shown + pending, b""
        _write_all(stderr_fd, shown)
    if not is_noise(pending):
        _write_all(stderr_fd, pending)


def _write_all(fd: int, data: bytes) -> None:
    while data:
        data = data[os.write(fd, data) :]


def install() -> None:
    """Filters stderr (file descriptor 2, so TensorFlow's C++ lines too) from now until exit."""
    stderr_fd = os.dup(2)
    read_fd, write_fd = os.pipe()
    os.dup2(write_fd, 2)
    os.close(write_fd)
    thread = threading.Thread(target=_forward, args=(read_fd, stderr_fd), daemon=True)
    thread.start()

    def restore() -> None:
        sys.stderr.flush()
        os.dup2(stderr_fd, 2)  # the pipe's last writer closes: the thread forwards the rest
        thread.join(timeout=2)

    atexit.register(restore)


def install_when_run_as_script() -> None:
    """:func:`install`, when the program is one of the repository's scripts (``train.py``, ...),
    not pytest or an interpreter that imports ``cli``."""
    main_file = getattr(sys.modules.get("__main__"), "__file__", None)
    if main_file and os.path.dirname(os.path.abspath(main_file)) == _ROOT:
        install()
