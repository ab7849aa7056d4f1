"""Data scaling: peak memory, checkpoint size, time to the first step and training speed as a
text corpus grows from 30,000 to 3,000,000 sentence pairs.

For each size a synthetic German-English corpus is made from Multi30k (its training pairs
repeated, each sentence's words reshuffled with a seed of its own, so that no two pairs are the
same; Multi30k's validation split beside it) and the De->En default (configs/multi30k_de_en.py;
--config) trains on it for --steps steps, in a child process (``train.py``), twice: the first run
prepares the corpus (``data_pipeline.prepared``) and trains the tokenizer; the second, in another
new work directory, finds the corpus prepared. For each run: the child's peak resident memory
(``wait4``), the time from its start to the end of its first step (the step's TensorBoard event),
when the preparation ended (its ``info.json``), the sizes of the model-and-optimizer checkpoint
and of the data position saved beside it, and the median training target tokens/s of the second
half of the steps. The corpora, work directories and prepared data go to a temporary directory
(--scratch_dir to keep them).
"""

from __future__ import annotations

import glob
import gzip
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import harness  # noqa: I001  (first: sets up the path and TensorFlow's logging)
import tensorflow as tf
from absl import flags

from cli.errors import run_main
from rundir.layout import RunDirectory

_SIZES = flags.DEFINE_list("sizes", ["30000", "300000", "3000000"], "Corpus sizes in pairs.")
_STEPS = flags.DEFINE_integer("steps", 60, "Training steps of each run.")
_RUNS = flags.DEFINE_integer(
    "runs",
    2,
    "Runs per size (1: only the first, which prepares the corpus).",
    lower_bound=1,
    upper_bound=2,
)
_MULTI30K_DIR = flags.DEFINE_string(
    "multi30k_dir",
    os.environ.get("MULTI30K_DIR", str(harness.REPO_ROOT.parent / "shared/data/multi30k")),
    "Multi30k's raw files (train.de.gz, ...).",
)
_CONFIG = flags.DEFINE_string(
    "config", "configs/multi30k_de_en.py", "The config trained (configs/tiny.py: a smoke run)."
)
_SCRATCH_DIR = flags.DEFINE_string(
    "scratch_dir", None, "Where corpora and runs go (default: a temporary directory, removed)."
)


def multi30k_lines(split: str, lang: str) -> list[str]:
    data = gzip.decompress(Path(_MULTI30K_DIR.value, f"{split}.{lang}.gz").read_bytes())
    return data.decode("utf-8").split("\n")[:-1]


def make_corpus(directory: Path, pairs: int) -> None:
    """``train.de``/``train.en`` of ``pairs`` reshuffled Multi30k pairs, and Multi30k's
    validation split."""
    directory.mkdir(parents=True)
    german, english = multi30k_lines("train", "de"), multi30k_lines("train", "en")
    with open(directory / "train.de", "w") as de, open(directory / "train.en", "w") as en:
        for index in range(pairs):
            rng = random.Random(index)
            for file, lines in ((de, german), (en, english)):
                words = lines[index % len(lines)].split()
                rng.shuffle(words)
                file.write(" ".join(words) + "\n")
    for lang in ("de", "en"):
        (directory / f"validation.{lang}").write_text(
            "".join(line + "\n" for line in multi30k_lines("val", lang))
        )


def events(workdir: Path, tag: str) -> list[tuple[int, float, float]]:
    """``(step, wall time, value)`` of each TensorBoard summary ``tag`` of a run."""
    found = []
    for path in sorted(Path(RunDirectory(str(workdir)).tensorboard).glob("events.out.tfevents.*")):
        for record in tf.data.TFRecordDataset(str(path)).as_numpy_iterator():
            event = tf.compat.v1.Event.FromString(record)
            for value in event.summary.value:
                if value.tag == tag:
                    scalar = float(tf.make_ndarray(value.tensor))
                    found.append((event.step, event.wall_time, scalar))
    return found


def checkpoint_bytes(paths: str) -> int:
    """The bytes of the files ``paths`` (a glob) names."""
    return sum(path.stat().st_size for path in map(Path, glob.glob(paths)))


def train_once(corpus: Path, data_dir: Path, workdir: Path) -> dict[str, float]:
    """Runs train.py on ``corpus`` into ``workdir``; returns the run's figures."""
    steps, run = _STEPS.value, RunDirectory(str(workdir))
    command = [
        sys.executable,
        "train.py",
        f"--config={_CONFIG.value}",
        f"--workdir={workdir}",
        f"--config.data.name=text:{corpus}:de-en",
        f"--config.data.data_dir={data_dir}",
        f"--config.train.steps={steps}",
        f"--config.train.warmup_steps={max(1, steps // 3)}",
        "--config.train.log_every=1",
        f"--config.train.checkpoint_every={steps}",
        "--config.train.eval_max_sentences=20",
    ]
    start = time.time()
    with tempfile.TemporaryFile("w+") as stderr:
        process = subprocess.Popen(
            command, cwd=harness.REPO_ROOT, stdout=subprocess.DEVNULL, stderr=stderr
        )
        _, status, usage = os.wait4(process.pid, 0)
        if status:
            stderr.seek(0)
            raise SystemExit(f"train.py failed: {' '.join(command)}\n{stderr.read()[-3000:]}")
    first_step = events(workdir, "train_loss")[0][1] - start
    speeds = [value for step, _, value in events(workdir, "target_tokens_per_second")]
    info = next(data_dir.glob("prepared_text/*/info.json"))
    return {
        "peak_gb": usage.ru_maxrss / 2**20,
        "first_step_s": first_step,
        "prepared_at_s": info.stat().st_mtime - start,
        "model_mb": checkpoint_bytes(f"{run.checkpoints}/ckpt-{steps}.*") / 2**20,
        "data_position_mb": checkpoint_bytes(run.data_position(0, steps) + ".*") / 2**20,
        "tokens_per_s": statistics.median(speeds[len(speeds) // 2 :]),
    }


def prepared_at(figures: dict[str, float]) -> str:
    """When the run's preparation ended, or that it found the corpus prepared."""
    at = figures["prepared_at_s"]
    return f"at {at:.0f} s" if at > 0 else "before the run"


def main(argv: list[str]) -> None:
    del argv
    harness.start(__doc__)
    workload = {"config": _CONFIG.value, "steps": _STEPS.value, "sizes": ",".join(_SIZES.value)}
    harness.print_config("workload", workload)
    scratch = Path(_SCRATCH_DIR.value or tempfile.mkdtemp(prefix="data-scaling-"))
    rows = []
    try:
        for size in map(int, _SIZES.value):
            corpus = scratch / f"corpus-{size}"
            if not corpus.exists():
                started = time.perf_counter()
                make_corpus(corpus, size)
                print(f"made {corpus} in {time.perf_counter() - started:.0f} s", flush=True)
            data_dir = scratch / f"data-{size}"
            shutil.rmtree(data_dir, ignore_errors=True)
            for run in ("first", "second")[: _RUNS.value]:
                workdir = scratch / f"run-{size}-{run}"
                shutil.rmtree(workdir, ignore_errors=True)
                figures = train_once(corpus, data_dir, workdir)
                rows.append((size, run, figures))
                print(
                    f"RESULT {size} pairs, {run} run: peak {figures['peak_gb']:.2f} GB, first "
                    f"step {figures['first_step_s']:.0f} s (prepared: "
                    f"{prepared_at(figures)}), checkpoint {figures['model_mb']:.1f} MB + data "
                    f"position {figures['data_position_mb']:.2f} MB, "
                    f"{figures['tokens_per_s']:.0f} target tokens/s",
                    flush=True,
                )
    finally:
        if not _SCRATCH_DIR.value:
            shutil.rmtree(scratch, ignore_errors=True)
    print(
        "\n| pairs | run | peak resident | first step after start | preparation | "
        "model + optimizer | data position | target tokens/s |"
    )
    print("| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for size, run, f in rows:
        print(
            f"| {size:,} | {run} | {f['peak_gb']:.2f} GB | {f['first_step_s']:.0f} s | "
            f"{prepared_at(f)} | {f['model_mb']:.1f} MB | "
            f"{f['data_position_mb']:.2f} MB | {f['tokens_per_s']:.0f} |"
        )
    first_runs = [figures for _, run, figures in rows if run == "first"]
    smallest, largest = first_runs[0], first_runs[-1]
    print(
        f"RESULT peak memory, largest / smallest first run: "
        f"{largest['peak_gb'] / smallest['peak_gb']:.2f}\n"
        f"RESULT target tokens/s, largest / smallest first run: "
        f"{largest['tokens_per_s'] / smallest['tokens_per_s']:.2f}"
    )


if __name__ == "__main__":
    run_main(main)
