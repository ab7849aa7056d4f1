"""Decoding throughput on the synthetic "small" workload, next to the peers' figures.

Cached greedy and beam search (``decoding``), each as ``tf.function`` with and without XLA, and the
no-cache reference greedy (the TensorFlow tutorial's way: ``model.decode`` over the whole prefix
every step, inside a ``tf.function``). Random weights; 64 sources of 24 random tokens; exactly 24
output tokens per sentence (``eos_id=None``: EOS is an ordinary token, every sentence decodes to
``max_length``). Tokens/s = 64 x 24 output tokens (beam search: of the best hypothesis) / batch
time, median of ``--reps`` timed batches after one warm-up batch (tracing, XLA compilation); the
lines are timed in turn, round after round.

Run it alone on the machine (it uses every core)::

    TF_CPP_MIN_LOG_LEVEL=2 .venv/bin/python benchmarks/decode_throughput.py [--reps 5] [--jit both]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import keras  # noqa: E402
import tensorflow as tf  # noqa: E402

from decoding import beam_search, greedy_search, reference_greedy_search  # noqa: E402
from transformer.model import Transformer  # noqa: E402

MODEL = dict(
    source_vocab_size=8000,
    num_layers=3,
    d_model=256,
    num_heads=4,
    d_ff=1024,
    dropout=0.1,
    shared_embeddings="all",
    norm_first=False,
)
BATCH, SOURCE_LENGTH, OUTPUT_LENGTH = 64, 24, 24
BEAM_SIZE, LENGTH_PENALTY = 4, 0.6
# Every sentence decodes exactly OUTPUT_LENGTH tokens: min(24, round(1.5 * 24 + 10)) = 24.
SEARCH = dict(max_length=OUTPUT_LENGTH, eos_id=None)

# ../shared/peers/README.md, section 3 (same workload, tokens/s), measured on a Zen 5 CPU with
# AVX-512: compare them through the reference line measured here, not as absolute figures.
PEERS = [
    ("TF tutorial style, decoder recompute on the full prefix", 2199),
    ("TF tutorial style, also re-running the encoder every step", 1424),
    ("CTranslate2 float32, greedy", 13203),
    ("CTranslate2 float32, beam 4", 5289),
]
TARGETS = {"greedy": 6600, "beam 4": 2650}


def time_round_robin(decoders: dict[str, Callable[[], object]], reps: int) -> dict[str, list]:
    """Seconds per batch of each decoder: ``reps`` rounds, each timing every decoder once.

    Interleaving spreads any load from other processes evenly over the decoders compared.
    """
    times = {name: [] for name in decoders}
    for _ in range(reps):
        for name, decode in decoders.items():
            start = time.perf_counter()
            decode()
            times[name].append(time.perf_counter() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=5, help="timed batches per line")
    parser.add_argument("--jit", choices=["both", "on", "off"], default="both")
    args = parser.parse_args()
    jit_modes = {"both": [False, True], "on": [True], "off": [False]}[args.jit]

    keras.utils.set_random_seed(0)
    model = Transformer(**MODEL)
    source = tf.random.uniform([BATCH, SOURCE_LENGTH], 4, MODEL["source_vocab_size"], tf.int32)
    model((source, source[:, :1]))  # builds the weights

    print(f"tensorflow {tf.__version__}, keras {keras.__version__}, {os.cpu_count()} CPU cores")
    print(f"model: {MODEL}, {model.count_params() / 1e6:.2f} M parameters, float32, random")
    print(
        f"workload: {BATCH} sources x {SOURCE_LENGTH} random tokens (ids 4..7999), exactly "
        f"{OUTPUT_LENGTH} output tokens each (EOS ignored); beam {BEAM_SIZE}, length penalty "
        f"{LENGTH_PENALTY}; median of {args.reps} batches after 1 warm-up, lines timed in turn"
    )

    def greedy(ids):
        return greedy_search(model, ids, **SEARCH)

    def beam(ids):
        return beam_search(
            model, ids, beam_size=BEAM_SIZE, length_penalty=LENGTH_PENALTY, **SEARCH
        )[0]

    def reference(ids):
        return reference_greedy_search(model, ids, **SEARCH)

    lines = [("reference greedy (no cache)", reference, False)]
    lines += [
        (f"{name}, jit_compile={jit}", search, jit)
        for name, search in [("greedy", greedy), ("beam 4", beam)]
        for jit in jit_modes
    ]
    decoders = {}
    for name, search, jit in lines:
        decode = tf.function(search, jit_compile=jit)
        output = decode(source)  # warm-up: tracing, XLA compilation
        if output.shape != (BATCH, OUTPUT_LENGTH) or tf.reduce_any(output == 0):
            raise RuntimeError(f"{name}: expected {OUTPUT_LENGTH} tokens each, got {output.shape}")
        decoders[name] = lambda decode=decode: decode(source).numpy()
    print(f"load average before timing: {os.getloadavg()[0]:.2f}")
    times = time_round_robin(decoders, args.reps)
    print(f"load average after timing: {os.getloadavg()[0]:.2f} (this process adds up to 2)")
    results = {}
    print(f"\n{'line':<46} {'tok/s':>7} {'batch ms':>9}  tok/s of each batch")
    for name, line_times in times.items():
        speeds = [BATCH * OUTPUT_LENGTH / t for t in line_times]
        results[name] = statistics.median(speeds)
        print(
            f"{name:<46} {results[name]:>7.0f} {statistics.median(line_times) * 1e3:>9.0f}  "
            + ", ".join(f"{speed:.0f}" for speed in speeds)
        )

    # The peers ran on another CPU: their targets are compared here as speed-ups over the
    # tutorial's recompute decoder, which the reference line re-measures on this machine.
    reference_speed, tutorial_speed = results["reference greedy (no cache)"], PEERS[0][1]
    print("\nsearch   best jit_compile   tok/s   x reference   target tok/s (x tutorial)   verdict")
    for search in ("greedy", "beam 4"):
        jit = max(jit_modes, key=lambda jit, search=search: results[f"{search}, jit_compile={jit}"])
        speed = results[f"{search}, jit_compile={jit}"]
        target, target_ratio = TARGETS[search], TARGETS[search] / tutorial_speed
        absolute = "met" if speed >= target else "not met"
        relative = "met" if speed / reference_speed >= target_ratio else "not met"
        print(
            f"{search:<8} {jit!s:<18} {speed:>6.0f}   {speed / reference_speed:>10.2f}x   "
            f"{target:>12} ({target_ratio:.2f}x)   absolute {absolute}, as a speed-up {relative}"
        )
    print("\npeers (../shared/peers/README.md: same workload, measured on another CPU):")
    for name, speed in PEERS:
        print(f"  {name:<58} {speed:>6} tok/s")


if __name__ == "__main__":
    main()
