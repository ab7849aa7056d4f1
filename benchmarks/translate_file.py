"""translate.py on large files: peak memory and sentences/s as the file grows, and a run killed
with SIGKILL and continued, compared byte for byte with an uninterrupted one.

    .venv/bin/python benchmarks/translate_file.py --workdir=DIR [--checkpoint=latest]
        [--beam_size=1] [--lines=10000,1000000] [--whole_file_lines=10000] [--kill_at=0.5]

For each --lines count it writes a file of that many sentences (--sentences, shuffled with
--seed and repeated) and runs ``translate.py --workdir --checkpoint --beam_size --input --output``
as a program, one run at a time:

* ``streamed``: the default window, uninterrupted;
* ``killed, then continued``: the same command, sent SIGKILL once start-up is over and --kill_at
  of the streamed run's time after it has passed, then run again; its output is compared with
  the streamed run's;
* ``whole file``: ``--window`` = the file (what translate.py did before it streamed), for the
  counts in --whole_file_lines.

Each row has the wall time, sentences/s, the time per 1,000 lines after start-up (the run of a
one-line file: importing TensorFlow and loading the model) and the peak resident memory of the
process (``ru_maxrss``). Run it alone on the machine.
"""

from __future__ import annotations

import filecmp
import gzip
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time

import harness  # noqa: I001  (first: sets up the path and TensorFlow's logging)
from absl import flags

from cli.errors import run_main
from rundir.config import load_config

_WORKDIR = flags.DEFINE_string("workdir", None, "A trained work directory.", required=True)
_CHECKPOINT = flags.DEFINE_string("checkpoint", "latest", "Its checkpoint.")
_BEAM_SIZE = flags.DEFINE_integer("beam_size", 1, "The search's beam (1: greedy).")
_LINES = flags.DEFINE_list("lines", ["10000", "1000000"], "Line counts of the files translated.")
_WHOLE_FILE_LINES = flags.DEFINE_list(
    "whole_file_lines", ["10000"], "Line counts also translated as one window (the old way)."
)
_KILL_AT = flags.DEFINE_float(
    "kill_at",
    0.5,
    "SIGKILL the second run after start-up and this share of the streamed run's time after it.",
)
_SENTENCES = flags.DEFINE_string(
    "sentences",
    str(harness.REPO_ROOT.parent / "shared/data/multi30k/test_2016_flickr.de.gz"),
    "Sentences to repeat (a text file, or .gz).",
)
_SEED = flags.DEFINE_integer("seed", 0, "Shuffles the sentences.")
_SCRATCH = flags.DEFINE_string("scratch", None, "Directory for the files (default: a temporary).")


def sentences(path: str) -> list[str]:
    """The lines of a text file or a gzipped one."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as file:
        return file.read().splitlines()


def write_input(path: str, lines: list[str], count: int, seed: int) -> None:
    """``count`` lines: ``lines`` shuffled, again and again, streamed to ``path``."""
    rng = random.Random(seed)
    with open(path, "w", encoding="utf-8") as file:
        written = 0
        while written < count:
            batch = lines[:]
            rng.shuffle(batch)
            batch = batch[: count - written]
            file.write("".join(line + "\n" for line in batch))
            written += len(batch)


def run(command: list[str], kill_after: float | None = None) -> tuple[float, float, int]:
    """Runs ``command``: its wall seconds, peak resident MiB and exit code; sent SIGKILL after
    ``kill_after`` seconds when given."""
    started = time.perf_counter()
    process = subprocess.Popen(command, cwd=harness.REPO_ROOT, stderr=subprocess.DEVNULL)
    if kill_after is not None:
        try:
            process.wait(timeout=kill_after)
        except subprocess.TimeoutExpired:
            process.send_signal(signal.SIGKILL)
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    return time.perf_counter() - started, usage.ru_maxrss / 1024, process.returncode


def translate_command(source: str, output: str, *extra: str) -> list[str]:
    return [
        sys.executable,
        "translate.py",
        f"--workdir={_WORKDIR.value}",
        f"--checkpoint={_CHECKPOINT.value}",
        f"--beam_size={_BEAM_SIZE.value}",
        f"--input={source}",
        f"--output={output}",
        *extra,
    ]


def written_lines(output: str) -> int:
    """How many lines a killed run's partial output holds, by its record (0 without one)."""
    record = output + ".partial.json"
    if not os.path.exists(record):
        return 0
    with open(record, encoding="utf-8") as file:
        return json.load(file)["inputs"][0]["lines"]


def row(label: str, count: int, seconds: float, start_up: float, rss: float) -> str:
    per_thousand = (seconds - start_up) / count * 1000
    return (
        f"| {count:,} | {label} | {seconds:.1f} | {count / seconds:.0f} | {per_thousand:.2f} | "
        f"{rss:.0f} |"
    )


def main(argv: list[str]) -> None:
    del argv
    harness.start(__doc__)
    load_config(_WORKDIR.value)  # one line, not translate.py's failure, for no work directory
    pool = sentences(_SENTENCES.value)
    scratch = _SCRATCH.value or tempfile.mkdtemp(prefix="translate_file-")
    os.makedirs(scratch, exist_ok=True)
    one = os.path.join(scratch, "one.txt")
    write_input(one, pool, 1, _SEED.value)
    start_up, start_up_rss, _ = run(translate_command(one, one + ".out"))
    print(f"start-up (a one-line file): {start_up:.1f} s, {start_up_rss:.0f} MiB", flush=True)
    print("| lines | run | seconds | sentences/s | s per 1,000 lines after start-up | peak MiB |")
    print("| --- | --- | --- | --- | --- | --- |", flush=True)
    checks = []
    for count in map(int, _LINES.value):
        source = os.path.join(scratch, f"in.{count}.txt")
        write_input(source, pool, count, _SEED.value)
        streamed = os.path.join(scratch, f"streamed.{count}.txt")
        seconds, rss, code = run(translate_command(source, streamed))
        assert code == 0, f"translate.py failed on {source}"
        print(row("streamed", count, seconds, start_up, rss), flush=True)
        resumed = os.path.join(scratch, f"resumed.{count}.txt")
        kill_after = start_up + _KILL_AT.value * (seconds - start_up)  # never during start-up
        first, first_rss, code = run(translate_command(source, resumed), kill_after)
        done = written_lines(resumed)
        second, second_rss, code = run(translate_command(source, resumed))
        assert code == 0, f"translate.py failed to continue {resumed}"
        label = f"killed at {kill_after:.0f} s ({done:,} lines written), then continued"
        print(row(label, count, first + second, 2 * start_up, max(first_rss, second_rss)))
        identical = filecmp.cmp(streamed, resumed, shallow=False)
        checks.append(f"{count:,} lines: continued output identical to streamed: {identical}")
        if str(count) in _WHOLE_FILE_LINES.value:
            whole = os.path.join(scratch, f"whole.{count}.txt")
            seconds, rss, code = run(translate_command(source, whole, f"--window={count}"))
            print(row("whole file (--window=lines)", count, seconds, start_up, rss), flush=True)
            identical = filecmp.cmp(streamed, whole, shallow=False)
            checks.append(f"{count:,} lines: whole-file output identical to streamed: {identical}")
    print("\n".join(checks))


if __name__ == "__main__":
    run_main(main)
