"""What every benchmark shares: set-up, model shapes, timing, the run's description, the peers.

Import it before TensorFlow (``import harness`` sorts before ``keras`` and ``tensorflow``): it
puts the repository root on ``sys.path`` and sets ``TF_CPP_MIN_LOG_LEVEL`` before TensorFlow
loads. It defines the flags every benchmark has (``--intra_op_threads``, ``--inter_op_threads``)
and :func:`start`, which applies them and prints the exact configuration of the run: the
benchmark, the date, the CPU model (name, family, model), the software versions, the threads
and the value of every flag.

Shapes (:data:`SHAPES`) are the peers' named sizes (``../shared/peers/README.md``: "small",
"base"), plus "tiny" for smoke runs. Peers are never quoted: :func:`run_peer` runs a peer's
script on this machine in the same run and returns the figures of its ``RESULT`` lines, or says
why it cannot run here.
"""

from __future__ import annotations

import dataclasses
import os
import platform
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TypeVar

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from absl import flags  # noqa: E402

_INTRA_OP_THREADS = flags.DEFINE_integer(
    "intra_op_threads", 0, "TensorFlow intra-op threads (0: TensorFlow's default, every core)."
)
_INTER_OP_THREADS = flags.DEFINE_integer(
    "inter_op_threads", 0, "TensorFlow inter-op threads (0: TensorFlow's default)."
)

T = TypeVar("T")


# --- Model shapes ----------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Shape:
    """A model size and its synthetic workloads (random ids 4..vocab-1, no padding).

    Training: ``batch`` pairs of ``source_len`` / ``target_len`` tokens. Decoding:
    ``decode_batch`` sources of ``decode_source_len`` tokens, each decoded into exactly
    ``decode_output_len`` tokens (EOS ignored). Post-norm, ReLU, dropout 0.1, one embedding
    matrix shared by encoder, decoder and output projection, as the peers' models.
    """

    name: str
    d_model: int
    num_heads: int
    d_ff: int
    num_layers: int
    vocab: int
    batch: int
    source_len: int
    target_len: int
    decode_batch: int = 64
    decode_source_len: int = 24
    decode_output_len: int = 24

    def matmul_params(self) -> int:
        """Matmul weights touched once per token: encoder 4d^2 + 2d*d_ff per layer, decoder
        8d^2 + 2d*d_ff per layer, plus the tied d*V output projection."""
        d, f, layers = self.d_model, self.d_ff, self.num_layers
        return layers * (4 * d * d + 2 * d * f) + layers * (8 * d * d + 2 * d * f) + d * self.vocab

    def train_flops_per_target_token(self) -> float:
        """6N (forward + backward matmuls, source length = target length) plus the attention
        score and value products (forward 4 * context * d per token per attention block, x3)."""
        d, layers, s, t = self.d_model, self.num_layers, self.source_len, self.target_len
        attention_forward = layers * 4 * s * d * s + layers * (4 * t * d * t + 4 * s * d * t)
        return 6 * self.matmul_params() + 3 * attention_forward / t

    def describe(self) -> str:
        return (
            f"'{self.name}': d_model {self.d_model}, {self.num_heads} heads, d_ff {self.d_ff}, "
            f"{self.num_layers}+{self.num_layers} layers, vocab {self.vocab}, post-norm, "
            f"dropout 0.1, shared embeddings"
        )


SHAPES = {
    "tiny": Shape("tiny", 32, 2, 64, 1, 64, 8, 8, 8, 4, 8, 8),
    "small": Shape("small", 256, 4, 1024, 3, 8000, 128, 24, 24),
    "base": Shape("base", 512, 8, 2048, 6, 32000, 64, 32, 32),
}


def define_size_flag() -> flags.FlagHolder[str]:
    """``--size``: one of :data:`SHAPES`, "small" by default (the peers know "small" and "base";
    "tiny" is for smoke runs)."""
    return flags.DEFINE_enum(
        "size", "small", list(SHAPES), "Model shape and workload (tiny: smoke runs only)."
    )


def build_transformer(shape: Shape) -> keras.Model:
    """Our Transformer of ``shape``, random weights (variables created at the first call)."""
    from transformer import Transformer, TransformerConfig

    config = TransformerConfig(
        source_vocab_size=shape.vocab,
        num_layers=shape.num_layers,
        d_model=shape.d_model,
        num_heads=shape.num_heads,
        d_ff=shape.d_ff,
        dropout=0.1,
        shared_embeddings="all",
        norm_first=False,
    )
    return Transformer(config)


def random_ids(rows: int, length: int, vocab: int, seed: int = 0) -> tf.Tensor:
    """``(rows, length)`` int32 ids drawn uniformly from 4..vocab-1 (no special ids)."""
    return tf.constant(np.random.default_rng(seed).integers(4, vocab, [rows, length]), tf.int32)


def synthetic_batch(shape: Shape) -> dict[str, tf.Tensor]:
    """One training batch of ``shape``: ``source``, ``target_in``, ``target_out``, no padding."""
    target = random_ids(shape.batch, shape.target_len + 1, shape.vocab, seed=1)
    return {
        "source": random_ids(shape.batch, shape.source_len, shape.vocab, seed=0),
        "target_in": target[:, :-1],
        "target_out": target[:, 1:],
    }


def make_train_step(
    model: keras.Model, jit_compile: bool = False, compiled_loss: bool = True
) -> Callable[[dict], tuple[tf.Tensor, tf.Tensor, tf.Tensor]]:
    """The project's training step (label smoothing 0.1; Adam, beta_2 0.98, epsilon 1e-9, the
    peers' optimizer) for ``model``, in ``tf.function``; it returns ``(loss_sum, correct,
    count)``. ``compiled_loss``: the loss compiled by XLA on its own (the trainer's default)."""
    from data_pipeline import PAD_ID
    from training.step import make_replica_step

    optimizer = keras.optimizers.Adam(1e-4, beta_2=0.98, epsilon=1e-9)
    return tf.function(
        make_replica_step(model, optimizer, 0.1, PAD_ID, compiled_loss),
        jit_compile=jit_compile,
        reduce_retracing=True,
    )


# --- Timing ----------------------------------------------------------------------------------


def timed(fn: Callable[[], T]) -> tuple[T, float]:
    """``fn()``'s result and the seconds it took."""
    start = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - start


def time_repetitions(fn: Callable[[], object], repetitions: int, warmup: int = 1) -> list[float]:
    """Seconds of each of ``repetitions`` calls of ``fn``, after ``warmup`` untimed calls
    (tracing, compilation). ``fn`` must wait for its result (e.g. call ``.numpy()``)."""
    for _ in range(warmup):
        fn()
    return [timed(fn)[1] for _ in range(repetitions)]


def median_seconds(fn: Callable[[], object], repetitions: int, warmup: int = 1) -> float:
    """The median of :func:`time_repetitions`."""
    return statistics.median(time_repetitions(fn, repetitions, warmup))


def time_round_robin(
    fns: Mapping[str, Callable[[], object]], rounds: int
) -> dict[str, list[float]]:
    """Seconds of each function per round: ``rounds`` rounds, each calling every function once.

    Interleaving spreads any load from other processes evenly over the functions compared; warm
    them up before.
    """
    seconds: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            seconds[name].append(timed(fn)[1])
    return seconds


def rates(count: float, seconds: Sequence[float]) -> list[float]:
    """``count`` per second for each time in ``seconds``."""
    return [count / value for value in seconds]


def join_figures(values: Sequence[float], digits: int = 0) -> str:
    """``"1234, 1250, 1198"``: every repetition's figure, to show the spread next to a median."""
    return ", ".join(f"{value:.{digits}f}" for value in values)


# --- The run's description -------------------------------------------------------------------


def _first_lines(text: str, count: int = 1) -> list[str]:
    return text.split("\n\n", 1)[0].splitlines()[:count]


def cpu_model(cpuinfo: str | None = None, lscpu: str | None = None) -> str:
    """``"AMD EPYC (family 26, model 2; avx2 avx512f avx512_bf16)"`` from ``/proc/cpuinfo`` (or
    the given text), else from ``lscpu``'s output, else what Python knows.

    Example:
        >>> cpu_model("model name : X\\ncpu family : 6\\nmodel : 85\\nflags : fpu avx2")
        'X (family 6, model 85; avx2)'
    """
    fields: dict[str, str] = {}
    if cpuinfo is None and lscpu is None:
        try:
            cpuinfo = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
        except OSError:
            lscpu = _lscpu()
    if cpuinfo:
        keys = {"model name": "name", "cpu family": "family", "model": "model", "flags": "flags"}
        for line in cpuinfo.split("\n\n", 1)[0].splitlines():  # the first processor
            key, _, value = line.partition(":")
            if key.strip() in keys:
                fields[keys[key.strip()]] = value.strip()
    elif lscpu:
        keys = {"Model name": "name", "CPU family": "family", "Model": "model", "Flags": "flags"}
        for line in lscpu.splitlines():
            key, _, value = line.partition(":")
            if key.strip() in keys:
                fields[keys[key.strip()]] = value.strip()
    name = fields.get("name") or platform.processor() or platform.machine() or "unknown CPU"
    details = [f"{key} {fields[key]}" for key in ("family", "model") if key in fields]
    notable = ("avx2", "avx512f", "avx512_bf16", "amx_bf16", "bf16")
    features = [flag for flag in fields.get("flags", "").split() if flag in notable]
    if features:
        details.append(" ".join(features))
    return f"{name} ({', '.join(details)})" if details else name


def _lscpu() -> str | None:
    try:
        return subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None


def _flag_text(flag: flags.Flag) -> str:
    value = flag.value
    if isinstance(value, bool):
        return f"--{flag.name}" if value else f"--no{flag.name}"
    if isinstance(value, list):
        value = ",".join(map(str, value))
    return f"--{flag.name}={value}"


def flag_values() -> list[str]:
    """``--name=value`` of every flag of the running benchmark and of this module."""
    modules = [sys.argv[0], __name__]
    return [
        _flag_text(flag)
        for module in modules
        for flag in sorted(flags.FLAGS.get_flags_for_module(module), key=lambda f: f.name)
    ]


def start(doc: str | None) -> None:
    """Applies the thread flags and prints what runs where: call it first in ``main``.

    ``doc`` is the benchmark's module docstring: its first line names what it measures.
    """
    if _INTRA_OP_THREADS.value:
        tf.config.threading.set_intra_op_parallelism_threads(_INTRA_OP_THREADS.value)
    if _INTER_OP_THREADS.value:
        tf.config.threading.set_inter_op_parallelism_threads(_INTER_OP_THREADS.value)
    tf.get_logger().setLevel("ERROR")
    print(f"== {Path(sys.argv[0]).name}: {' '.join(_first_lines(doc or '', 2))}")
    print(f"date: {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}")
    print(
        f"cpu: {cpu_model()}, {os.cpu_count()} logical CPUs, load average {os.getloadavg()[0]:.2f}"
    )
    print(
        f"software: Python {platform.python_version()}, TensorFlow {tf.__version__}, "
        f"Keras {keras.__version__}"
    )
    print(
        f"threads: intra-op {tf.config.threading.get_intra_op_parallelism_threads()}, "
        f"inter-op {tf.config.threading.get_inter_op_parallelism_threads()} (0: TensorFlow's "
        "default)"
    )
    print(f"flags: {' '.join(flag_values())}", flush=True)


def workdir_split(workdir: str, split: str, limit: int = 0) -> tuple[list[str], list[str]]:
    """``(sources, references)`` of ``split`` of a work directory's data set: its first
    ``limit`` pairs (0: all)."""
    from inference.evaluation import read_split
    from rundir.config import data_spec, load_config

    data = data_spec(load_config(workdir))
    sources, references = read_split(data.corpus, split, data.data_dir)
    if limit:
        return sources[:limit], references[:limit]
    return sources, references


def print_config(name: str, values: Mapping[str, object]) -> None:
    """One line ``name: key=value, ...``: a fixed part of the configuration (model, workload)."""
    print(f"{name}: " + ", ".join(f"{key}={value}" for key, value in values.items()), flush=True)


# --- Peers (../shared/peers) ------------------------------------------------------------------

PEERS_DIR = Path(os.environ.get("PEERS_DIR") or REPO_ROOT.parent / "shared" / "peers")
PEER_SIZES = ("small", "base")
_RESULT = re.compile(r"^RESULT (?P<tag>.+?): \D*?(?P<value>\d+(?:\.\d+)?)")


def define_peers_flag(choices: Sequence[str], default: Sequence[str]) -> flags.FlagHolder:
    """``--peers``: which peers to run on this machine in the same run (empty: none)."""
    holder = flags.DEFINE_list(
        "peers",
        list(default),
        f"Peers (../shared/peers or $PEERS_DIR) run here for ratios in the same run, any of "
        f"{','.join(choices)}; --peers= runs none.",
    )
    flags.register_validator(
        "peers", lambda names: set(names) <= set(choices), f"--peers takes {','.join(choices)}"
    )
    return holder


def peer_python(module: str) -> tuple[str | None, str]:
    """The Python that runs a peer needing ``module`` and, when there is none, why.

    TensorFlow peers run under ``$TFPY``, else this Python (the project's venv has TensorFlow
    and Keras 3); the others (torch, ctranslate2) under ``$TORCHPY``, else
    ``~/.venv-peers-torch/bin/python`` (``../shared/peers/README.md`` says how to make it).
    """
    if module == "tensorflow":
        variable, python = "TFPY", os.environ.get("TFPY") or sys.executable
    else:
        variable = "TORCHPY"
        python = os.environ.get("TORCHPY") or str(Path.home() / ".venv-peers-torch/bin/python")
    if not Path(python).exists():
        return None, f"no {python} (set ${variable}; ../shared/peers/README.md)"
    probe = subprocess.run([python, "-c", f"import {module}"], capture_output=True, text=True)
    if probe.returncode != 0:
        return None, f"{python} cannot import {module}"
    return python, ""


def run_peer(
    script: str, arguments: Sequence[str], module: str, size: str
) -> dict[str, float] | None:
    """Runs ``PEERS_DIR/script arguments`` under :func:`peer_python` (``module``: what it needs)
    and returns ``{tag: figure}`` of its ``RESULT tag: ... figure ...`` lines, printing its
    output; None, with the reason printed, when it cannot run here or fails.
    """
    if size not in PEER_SIZES:
        print(f"peer {script}: not run, the peers have no '{size}' size ({', '.join(PEER_SIZES)})")
        return None
    if not (PEERS_DIR / script).exists():
        print(f"peer {script}: not run, no {PEERS_DIR / script} (set $PEERS_DIR)")
        return None
    python, reason = peer_python(module)
    if python is None:
        print(f"peer {script}: cannot run here: {reason}")
        return None
    command = [python, script, *arguments]
    print(f"peer {script}: running `{' '.join(command)}` in {PEERS_DIR}", flush=True)
    run = subprocess.run(command, cwd=PEERS_DIR, capture_output=True, text=True)
    if run.returncode != 0:
        print(f"  failed (exit {run.returncode}):\n{run.stderr[-2000:]}")
        return None
    results = {}
    for line in run.stdout.splitlines():
        print(f"  | {line}")
        match = _RESULT.match(line)
        if match:
            results[match.group("tag")] = float(match.group("value"))
    if not results:
        print("  (no RESULT line in its output)")
    return results
