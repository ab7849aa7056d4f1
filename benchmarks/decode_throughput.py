"""Decoding throughput (output tokens/s) of our searches, with the peers run in the same run.

    .venv/bin/python benchmarks/decode_throughput.py [--reps=5] [--jit=both|on|off]
        [--workdir=runs/multi30k_de_en] [--size=small] [--peers=tf,torch,ct2]

Measures cached greedy and beam search (``decoding``), each as ``tf.function`` with and without
XLA, and the no-cache reference greedy (the TensorFlow tutorial's way: ``model.decode`` over the
whole prefix every step, inside a ``tf.function``). Random weights of ``--size``; its decoding
workload (small and base: 64 sources of 24 random tokens), every sentence decoded into exactly
24 tokens (``eos_id=None``: EOS is an ordinary token). Tokens/s = sources x output tokens (beam
search: of the best hypothesis) / batch time, median of ``--reps`` timed batches after one
warm-up batch (tracing, XLA compilation); the lines are timed in turn, round after round.

Then it runs the peers (``../shared/peers``) on the same workload and machine: the TensorFlow
tutorial's decoder (``tf_infer.py``, also with ``--rerun-encoder``), PyTorch (``torch_infer.py``)
and CTranslate2 (``ct2_infer.py``), and prints our ratio to each; the issue's targets are half of
CTranslate2 float32 (greedy and beam 4). A peer that cannot run here is reported as such.

With ``--workdir`` (a trained work directory) it also translates a Multi30k split (default
test2016) with the trained model, greedy and with the config's beam, with and without XLA, at
batch 1 (the first ``--batch1_sentences`` sentences, one per call) and batch 64 (the first
``--batch64_sentences``, sorted by length as ``translate.py`` does), each timed after one untimed
pass over the same sentences (the steady state of a server: every shape traced and compiled), and
prints sentences/s and output tokens/s (SentencePiece pieces of the translations).

Run it alone on the machine (it uses every core).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable

import harness
import keras
import tensorflow as tf
from absl import app, flags

from decoding import SearchOptions, beam_search, greedy_search, reference_greedy_search

_REPS = flags.DEFINE_integer("reps", 5, "Timed batches per line.")
_JIT = flags.DEFINE_enum("jit", "both", ["both", "on", "off"], "XLA for the cached searches.")
_WORKDIR = flags.DEFINE_string("workdir", None, "A trained work directory: also time real text.")
_SPLIT = flags.DEFINE_string("split", "test2016", "The split --workdir translates.")
_BATCH1_SENTENCES = flags.DEFINE_integer("batch1_sentences", 50, "Sentences timed at batch 1.")
_BATCH64_SENTENCES = flags.DEFINE_integer("batch64_sentences", 320, "Sentences at batch 64.")
_SIZE = harness.define_size_flag()
_PEERS = harness.define_peers_flag(["tf", "torch", "ct2"], ["tf", "torch", "ct2"])

BEAM_SIZE, LENGTH_PENALTY = 4, 0.6
REFERENCE = "reference greedy (no cache)"
# The issue's targets: at least this share of CTranslate2 float32's tokens/s, same workload.
CT2_TARGET_SHARE = 0.5


def time_translate(translator, sentences: list[str], batch_size: int) -> tuple[list[float], list]:
    """Seconds of each ``translate`` call over ``sentences`` in batches, and the translations."""
    call_seconds, translations = [], []
    for start in range(0, len(sentences), batch_size):
        batch = sentences[start : start + batch_size]
        output, seconds = harness.timed(
            lambda batch=batch: translator.translate(batch, batch_size=batch_size, progress=False)
        )
        translations += output
        call_seconds.append(seconds)
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
                time_translate(translator, subset, batch_size)  # warm-up
                call_seconds, translations = time_translate(translator, subset, batch_size)
                seconds = sum(call_seconds)
                tokens = int(tf.reduce_sum(translator.source_lengths(translations)))
                search = "greedy" if beam_size == 1 else f"beam {beam_size}"
                print(
                    f"{search:<10} {jit!s:<5} {batch_size:>5} {count:>9} "
                    f"{count / seconds:>7.1f} {tokens / seconds:>7.0f} "
                    f"{statistics.median(call_seconds) * 1e3:>15.1f}"
                )


def our_decoders(
    shape: harness.Shape, jit_modes: list[bool]
) -> tuple[dict[str, Callable[[], object]], tf.Tensor]:
    """``{line: decode the workload once}`` for our searches, each warmed up and checked."""
    keras.utils.set_random_seed(0)
    model = harness.build_transformer(shape)
    batch, output_length = shape.decode_batch, shape.decode_output_len
    source = harness.random_ids(batch, shape.decode_source_len, shape.vocab)
    model((source, source[:, :1]))  # builds the weights
    harness.print_config(
        "model", {"shape": shape.describe(), "parameters": f"{model.count_params() / 1e6:.2f} M"}
    )
    # Every sentence decodes exactly output_length tokens: eos_id=None and
    # max_length <= round(1.5 * source_len + 10).
    greedy_options = SearchOptions(beam_size=1, max_length=output_length, eos_id=None)
    beam_options = SearchOptions(
        beam_size=BEAM_SIZE, length_penalty=LENGTH_PENALTY, max_length=output_length, eos_id=None
    )
    searches = {
        "greedy": lambda ids: greedy_search(model, ids, greedy_options),
        f"beam {BEAM_SIZE}": lambda ids: beam_search(model, ids, beam_options)[0],
    }
    lines = [(REFERENCE, lambda ids: reference_greedy_search(model, ids, greedy_options), False)]
    lines += [
        (f"{name}, jit_compile={jit}", search, jit)
        for name, search in searches.items()
        for jit in jit_modes
    ]
    decoders = {}
    for name, search, jit in lines:
        decode = tf.function(search, jit_compile=jit)
        output = decode(source)  # warm-up: tracing, XLA compilation
        if output.shape != (batch, output_length) or tf.reduce_any(output == 0):
            raise RuntimeError(f"{name}: expected {output_length} tokens each, got {output.shape}")
        decoders[name] = lambda decode=decode: decode(source).numpy()
    return decoders, source


def run_peers(shape: harness.Shape, peers: list[str], reps: int) -> dict[str, float]:
    """``{peer line: tok/s}`` of the peers measured now on ``shape``'s decoding workload."""
    size, runs = shape.name, []
    if "tf" in peers:
        runs.append(
            ("tf_infer.py", [], "tensorflow", {f"tf-infer {size} recompute": "TF tutorial"})
        )
        runs.append(
            (
                "tf_infer.py",
                ["--rerun-encoder"],
                "tensorflow",
                {f"tf-infer {size} recompute+encoder": "TF tutorial, encoder re-run every step"},
            )
        )
    if "torch" in peers:
        runs.append(("torch_infer.py", [], "torch", {f"torch-infer {size} recompute": "PyTorch"}))
    if "ct2" in peers:
        names = {
            f"ct2 {size} {kind} beam={beam}": f"CTranslate2 {kind}, {search}"
            for kind in ("float32", "int8")
            for beam, search in ((1, "greedy"), (BEAM_SIZE, f"beam {BEAM_SIZE}"))
        }
        runs.append(("ct2_infer.py", [], "ctranslate2", names))
    figures = {}
    for script, arguments, module, names in runs:
        results = harness.run_peer(
            script, ["--size", size, "--reps", str(reps), *arguments], module, size
        )
        for tag, name in names.items():
            if results and tag in results:
                figures[name] = results[tag]
    return figures


def main(argv: list[str]) -> None:
    del argv
    harness.start(__doc__)
    shape = harness.SHAPES[_SIZE.value]
    jit_modes = {"both": [False, True], "on": [True], "off": [False]}[_JIT.value]
    tokens = shape.decode_batch * shape.decode_output_len
    harness.print_config(
        "workload",
        {
            "sources": shape.decode_batch,
            "source tokens": f"{shape.decode_source_len} random (ids 4..{shape.vocab - 1})",
            "output tokens": f"exactly {shape.decode_output_len} (EOS ignored)",
            "beam": BEAM_SIZE,
            "length penalty": LENGTH_PENALTY,
            "timing": f"median of {_REPS.value} batches after 1 warm-up, lines in turn",
        },
    )
    decoders, _ = our_decoders(shape, jit_modes)
    times = harness.time_round_robin(decoders, _REPS.value)
    results = {}
    print(f"\n{'line':<46} {'tok/s':>7} {'batch ms':>9}  tok/s of each batch")
    for name, line_times in times.items():
        speeds = harness.rates(tokens, line_times)
        results[name] = statistics.median(speeds)
        print(
            f"{name:<46} {results[name]:>7.0f} {statistics.median(line_times) * 1e3:>9.0f}  "
            + harness.join_figures(speeds)
        )
    best = {
        search: max(results[f"{search}, jit_compile={jit}"] for jit in jit_modes)
        for search in ("greedy", f"beam {BEAM_SIZE}")
    }
    for search, speed in best.items():
        print(f"best {search}: {speed:.0f} tok/s, {speed / results[REFERENCE]:.2f}x the reference")

    if _WORKDIR.value:
        time_trained_model(
            _WORKDIR.value,
            _SPLIT.value,
            {1: _BATCH1_SENTENCES.value, 64: _BATCH64_SENTENCES.value},
        )

    print(f"\npeers on this machine, same workload ({', '.join(_PEERS.value) or 'none asked'}):")
    peers = run_peers(shape, _PEERS.value, _REPS.value)
    header = "peer line (measured in this run)"
    print(f"\n{header:<46} {'tok/s':>7}   ours greedy / it   ours beam / it")
    for name, speed in peers.items():
        print(
            f"{name:<46} {speed:>7.0f}   {best['greedy'] / speed:>15.2f}   "
            f"{best[f'beam {BEAM_SIZE}'] / speed:>14.2f}"
        )
    if not peers:
        print("(no peer ran here)")
    print(f"\ntargets: ours >= {CT2_TARGET_SHARE:.2f} x CTranslate2 float32, same search:")
    for search in best:
        theirs = peers.get(f"CTranslate2 float32, {search}")
        if theirs is None:
            print(f"  {search:<8} not checked: CTranslate2 did not run in this run")
            continue
        share = best[search] / theirs
        verdict = "met" if share >= CT2_TARGET_SHARE else "not met"
        print(
            f"  {search:<8} ours {best[search]:>6.0f} tok/s, CTranslate2 {theirs:>6.0f} tok/s: "
            f"{share:.2f} ({verdict})"
        )


if __name__ == "__main__":
    app.run(main)
