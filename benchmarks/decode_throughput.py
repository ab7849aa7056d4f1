"""Decoding throughput on the synthetic "small" workload, next to the peers' figures.

Cached greedy and beam search (``decoding``), each as ``tf.function`` with and without XLA, and the
no-cache reference greedy (the TensorFlow tutorial's way: ``model.decode`` over the whole prefix
every step, inside a ``tf.function``). Random weights; 64 sources of 24 random tokens; exactly 24
output tokens per sentence (``eos_id=None``: EOS is an ordinary token, every sentence decodes to
``max_length``). Tokens/s = 64 x 24 output tokens (beam search: of the best hypothesis) / batch
time, median of ``--reps`` timed batches after one warm-up batch (tracing, XLA compilation); the
lines are timed in turn, round after round.

With ``--workdir`` (a trained work directory) it also translates a Multi30k split (default
test2016) with the trained model, greedy and with the config's beam, with and without XLA, at
batch 1 (the first ``--batch1_sentences`` sentences, one per call) and batch 64 (the first
``--batch64_sentences``, sorted by length as ``translate.py`` does), each timed after one untimed
pass over the same sentences (the steady state of a server: every shape traced and compiled), and
prints sentences/s and output tokens/s (SentencePiece pieces of the translations).

If the peers' CTranslate2 environment exists (``$TORCHPY``, else ``~/.venv-peers-torch``; see
``../shared/peers/README.md``), it then runs ``ct2_infer.py --size small`` on this machine and
prints our ratio to CTranslate2 measured in the same run; the targets are half of CTranslate2.

Run it alone on the machine (it uses every core)::

    TF_CPP_MIN_LOG_LEVEL=2 .venv/bin/python benchmarks/decode_throughput.py [--reps 5] [--jit both]
        [--workdir runs/multi30k_de_en]
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
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
# The targets as shares of CTranslate2 float32 on the same workload (beam size -> share).
CT2_TARGET_SHARE = 0.5
PEERS_DIR = Path(__file__).resolve().parents[2] / "shared" / "peers"
CT2_RESULT = re.compile(r"RESULT ct2 small (\w+) beam=(\d+): (\d+) tok/s")


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


def ct2_python() -> str | None:
    """The peers' Python with ctranslate2, if this machine has it."""
    candidates = [os.environ.get("TORCHPY", ""), str(Path.home() / ".venv-peers-torch/bin/python")]
    for python in filter(None, candidates):
        if os.path.exists(python):
            probe = subprocess.run([python, "-c", "import ctranslate2"], capture_output=True)
            if probe.returncode == 0:
                return python
    return None


def run_ctranslate2(python: str, reps: int) -> dict[tuple[str, int], float]:
    """``{(compute type, beam size): tok/s}`` from the peers' ``ct2_infer.py --size small``."""
    command = [python, "ct2_infer.py", "--size", "small", "--reps", str(reps)]
    print(f"\nrunning CTranslate2 on this machine: {' '.join(command)} (in {PEERS_DIR})")
    run = subprocess.run(command, cwd=PEERS_DIR, capture_output=True, text=True)
    if run.returncode != 0:
        print(f"  CTranslate2 failed (exit {run.returncode}):\n{run.stderr[-2000:]}")
        return {}
    results = {}
    for line in run.stdout.splitlines():
        if line.startswith(("RESULT", "ctranslate2")):
            print(f"  {line}")
        match = CT2_RESULT.match(line)
        if match:
            results[(match.group(1), int(match.group(2)))] = float(match.group(3))
    return results


def time_calls(translator, sentences: list[str], batch_size: int) -> tuple[list[float], list[str]]:
    """Seconds of each ``translate`` call over ``sentences`` in batches, and the translations."""
    call_seconds, translations = [], []
    for start in range(0, len(sentences), batch_size):
        began = time.perf_counter()
        translations += translator.translate(
            sentences[start : start + batch_size], batch_size=batch_size, progress=False
        )
        call_seconds.append(time.perf_counter() - began)
    return call_seconds, translations


def time_trained_model(workdir: str, split: str, sentences_per_batch_size: dict[int, int]) -> None:
    """Sentences/s and output tokens/s of a trained model on a real split, with and without XLA,
    at each batch size, after one untimed pass over the same sentences (tracing, compilation)."""
    from data_pipeline import load_translation_splits
    from inference.loading import load_config, load_translator

    config = load_config(workdir)
    pairs = load_translation_splits(config.data.name, [split])[split]
    sentences = [source.decode() for source, _ in pairs.as_numpy_iterator()]
    print(f"\ntrained model: {workdir} ({config.data.name} {split}, {len(sentences)} sentences)")
    print(
        f"{'search':<10} {'XLA':<5} {'batch':>5} {'sentences':>9} {'sent/s':>7} {'tok/s':>7} "
        f"{'median ms/call':>15}"
    )
    for beam_size in sorted({1, config.decode.beam_size}):
        for jit in (False, True):
            translator, _ = load_translator(workdir, beam_size=beam_size, jit_compile=jit)
            for batch_size, count in sentences_per_batch_size.items():
                subset = sentences[:count]
                time_calls(translator, subset, batch_size)  # warm-up
                call_seconds, translations = time_calls(translator, subset, batch_size)
                seconds = sum(call_seconds)
                tokens = int(tf.reduce_sum(translator.source_lengths(translations)))
                search = "greedy" if beam_size == 1 else f"beam {beam_size}"
                print(
                    f"{search:<10} {jit!s:<5} {batch_size:>5} {count:>9} "
                    f"{count / seconds:>7.1f} {tokens / seconds:>7.0f} "
                    f"{statistics.median(call_seconds) * 1e3:>15.1f}"
                )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=5, help="timed batches per line")
    parser.add_argument("--jit", choices=["both", "on", "off"], default="both")
    parser.add_argument("--workdir", help="a trained work directory: also time real sentences")
    parser.add_argument("--split", default="test2016", help="the split --workdir translates")
    parser.add_argument("--batch1_sentences", type=int, default=50)
    parser.add_argument("--batch64_sentences", type=int, default=320)
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

    if args.workdir:
        time_trained_model(
            args.workdir, args.split, {1: args.batch1_sentences, 64: args.batch64_sentences}
        )

    python = ct2_python()
    if python is None:
        print("\nCTranslate2 is not installed here (../shared/peers/README.md): no same-run ratio.")
        return
    ct2 = run_ctranslate2(python, args.reps)
    print(f"\nours / CTranslate2 float32 measured in this run (target: >= {CT2_TARGET_SHARE:.2f}):")
    for search, beam_size in (("greedy", 1), ("beam 4", 4)):
        if ("float32", beam_size) not in ct2:
            continue
        ours = max(results[f"{search}, jit_compile={jit}"] for jit in jit_modes)
        theirs = ct2[("float32", beam_size)]
        verdict = "met" if ours / theirs >= CT2_TARGET_SHARE else "not met"
        print(
            f"  {search:<8} ours {ours:>6.0f} tok/s, CTranslate2 {theirs:>6.0f} tok/s: "
            f"{ours / theirs:.2f} ({verdict})"
        )


if __name__ == "__main__":
    main()
