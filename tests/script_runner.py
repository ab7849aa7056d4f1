"""Running the command-line scripts in tests: in a subprocess, or in the test's own process.

A subprocess imports TensorFlow again (seconds); in the test's process a script runs in
milliseconds once the work is loaded. So each script has a few subprocess tests (it starts,
parses flags and exits like a program) and the rest of its behaviour, flag errors included, runs
in-process through :func:`run_in_process`, which returns what a subprocess would.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import runpy
import signal
import subprocess
import sys
from pathlib import Path

from absl import flags

REPO_ROOT = Path(__file__).resolve().parents[1]


def default_signal_handling() -> None:
    """For ``subprocess.Popen(preexec_fn=...)``: the child handles SIGINT and SIGTERM as from a
    terminal, whatever this process does. A background job of a non-interactive shell (``nohup
    bash scripts/test.sh &``) starts with SIGINT ignored, its children inherit that, and Python
    then raises no KeyboardInterrupt: the tests that send a signal would see nothing happen."""
    for number in (signal.SIGINT, signal.SIGTERM):
        signal.signal(number, signal.SIG_DFL)


def run_script(*args: str, stdin: str | None = None, timeout: int = 300):
    """``python args...`` in the repository root: a ``subprocess.CompletedProcess``."""
    return subprocess.run(
        [sys.executable, *args],
        cwd=REPO_ROOT,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
        preexec_fn=default_signal_handling,
    )


@dataclasses.dataclass
class Completed:
    """What a script run in-process gave: as ``subprocess.CompletedProcess``'s fields."""

    returncode: int
    stdout: str
    stderr: str


def run_in_process(script: str, *args: str, stdin: str = "") -> Completed:
    """Runs ``python script args...`` as ``__main__`` in this process and returns its exit code,
    standard output and standard error, as a subprocess would give them: ``sys.exit("error:
    ...")`` is exit code 1 with the line on standard error. The flags the script defines are
    removed afterwards, so that every script can run in turn, and the signal handlers it sets
    are undone.

    Example:
        >>> run_in_process("translate.py", "--workdir=/nowhere", "--input=-").returncode
        1
    """
    import cli.errors  # noqa: F401  (its --traceback flag stays defined)

    defined = set(flags.FLAGS)
    stdout, stderr = io.StringIO(), io.StringIO()
    stdin_file = io.TextIOWrapper(io.BytesIO(stdin.encode("utf-8")), encoding="utf-8")
    saved_argv, saved_stdin = sys.argv, sys.stdin
    stops = (signal.SIGINT, signal.SIGTERM)  # serve.py handles them
    saved_handlers = {number: signal.getsignal(number) for number in stops}
    sys.argv, sys.stdin = [script, *args], stdin_file
    flags.FLAGS.unparse_flags()
    try:
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            runpy.run_path(str(REPO_ROOT / script), run_name="__main__")
        returncode = 0
    except SystemExit as exit:
        if isinstance(exit.code, str):
            stderr.write(exit.code + "\n")
            returncode = 1
        else:
            returncode = exit.code or 0
    finally:
        sys.argv, sys.stdin = saved_argv, saved_stdin
        for number, handler in saved_handlers.items():
            signal.signal(number, handler)
        for name in set(flags.FLAGS) - defined:
            delattr(flags.FLAGS, name)
        flags.FLAGS.unparse_flags()
    return Completed(returncode, stdout.getvalue(), stderr.getvalue())


def run_benchmark(name: str, *args: str) -> Completed:
    """``python benchmarks/<name>.py args...`` in this process (:func:`run_in_process`).

    Run as a program, a benchmark imports its neighbours as top-level modules (``import
    harness``: ``benchmarks/`` is first on the path). Here ``harness`` is the module the tests
    import, ``benchmarks.harness``, so that its flags are defined once; the others are found on
    the path.

    Example:
        >>> run_benchmark("shortlist", "--workdir=/nowhere").returncode
        1
    """
    from benchmarks import harness

    sys.modules.setdefault("harness", harness)
    saved_path = list(sys.path)
    sys.path.insert(0, str(REPO_ROOT / "benchmarks"))
    try:
        return run_in_process(f"benchmarks/{name}.py", *args)
    finally:
        sys.path[:] = saved_path


def run_without_tensorflow(script: str) -> list[str]:
    """Runs the Python ``script`` in a subprocess in the repository root and returns the lines
    it printed, after checking that it succeeded without importing TensorFlow (an export's
    runtime that needs none must not load it by the way)."""
    check = "\nimport sys\nprint(sorted(m for m in sys.modules if m.startswith('tensorflow')))\n"
    completed = subprocess.run(
        [sys.executable, "-c", script + check], capture_output=True, text=True, cwd=REPO_ROOT
    )
    assert completed.returncode == 0, completed.stderr[-2000:]
    *printed, tensorflow_modules = completed.stdout.splitlines()
    assert tensorflow_modules == "[]", f"it imported {tensorflow_modules}"
    return printed
