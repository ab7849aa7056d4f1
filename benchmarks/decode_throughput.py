"""Decoding throughput (output tokens/s) of our searches, with the peers run in the same run.

    .venv/bin/python benchmarks/decode_throughput.py [--reps=5] [--jit=both|on|off]
        [--workdir=runs/multi30k_de_en [--split=test2016]] [--size=small] [--peers=tf,torch,ct2]

Measures cached greedy and beam search (``decoding``), beam search returning the n best
(``n_best_search`` with n = the beam and each token's log-probability: what the SavedModel's
``n_best`` signature runs), random sampling (top-k 10, a seed per sentence) and greedy and beam
search continuing a target prefix (each source's first 8 tokens), each as ``tf.function`` with
and without XLA, and the no-cache
reference greedy (the TensorFlow tutorial's way: ``model.decode`` over the whole prefix every
step, inside a ``tf.function``). Random weights of ``--size``; its decoding
workload (small and base: 64 sources of 24 random tokens), every sentence decoded into exactly
24 tokens (``eos_id=None``: EOS is an ordinary token). Tokens/s = sources x output tokens (beam
search: of the best hypothesis) / batch time, median of ``--reps`` timed batches after one
warm-up batch (tracing, XLA compilation); the lines are timed in turn, round after round.

Then it runs the peers (``../shared/peers``) on the same workload and machine: the TensorFlow
tutorial's decoder (``tf_infer.py``, also with ``--rerun-encoder``), PyTorch (``torch_infer.py``)
and CTranslate2 (``ct2_infer.py``), and prints our ratio to each; the issue's targets are half of
CTranslate2 float32 (greedy and beam 4). A peer that cannot run here is reported as such.

With ``--workdir`` (a trained work directory) it also translates a real split (default
test2016) with the same weights (the averaged checkpoint if there is one), all with the config's
beam: our default SavedModel (``export.py``'s: the XLA-compiled search for batches of up to
``XLA_MAX_BATCH_SIZE`` sentences, the graph search for larger ones, over the run's vocabulary
shortlist when it has one), the SavedModel with the graph search only, without the shortlist,
and computing in bfloat16 (``--nobfloat16`` leaves it out), CTranslate2 float32 and int8
(export.py --format=ctranslate2, each also with the shortlist as its vocabulary map, ``vmap``;
CTranslate2's length penalty chosen on the validation split by float32 BLEU unless
``--ctranslate2_length_penalty`` is given), and LiteRT float32 and dynamic int8 (export.py
--format=litert; ``--nolitert`` leaves them out).
Each is timed at batch 1 (the first ``--batch1_sentences`` sentences, one per call: the median
ms per sentence) and in batches of ``--trained_batch_size`` (64; the whole split, sorted by
length as ``translate.py`` does: the median of ``--trained_reps`` passes), after one untimed pass
over the same sentences (a server's steady state: every shape traced and compiled). Our
SavedModels take turns, block by block of 50 sentences and pass by pass, so a slow spell of a
shared machine falls on both; then each CTranslate2 and LiteRT export the same way in a process
of its own, without TensorFlow (beside another runtime or another model, each one's spinning
threads slow the other's: ``translator_timing.py``). It prints sentences/s, output SentencePiece
pieces/s, sacreBLEU of the batched translations, the share of them the default SavedModel gives
too, and the ratios ours / CTranslate2 beside the targets (the default export: batch 64 and
batch 1 >= 1.0x CTranslate2 float32 and >= 0.8x CTranslate2 float32 with vmap; our CTranslate2
int8 export with vmap >= 1.3x without; int8 loses <= 0.3 BLEU; LiteRT int8 at batch 1 at least
as fast as CTranslate2 int8).

Run it alone on the machine (it uses every core).
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable

import harness
import keras
import sentencepiece
import tensorflow as tf
from absl import flags
from translator_timing import BATCH1_BLOCK, time_translators

from cli.errors import run_main
from common.translation import Sampling
from decoding.beam import beam_search, n_best_search
from decoding.greedy import greedy_search, reference_greedy_search
from decoding.options import SearchOptions
from decoding.sampling import sample_search

_REPS = flags.DEFINE_integer("reps", 5, "Timed batches per line.")
_JIT = flags.DEFINE_enum("jit", "both", ["both", "on", "off"], "XLA for the cached searches.")
_WORKDIR = flags.DEFINE_string("workdir", None, "A trained work directory: also time real text.")
_SPLIT = flags.DEFINE_string("split", "test2016", "The split --workdir translates.")
_BATCH1_SENTENCES = flags.DEFINE_integer("batch1_sentences", 200, "Sentences timed at batch 1.")
_TRAINED_REPS = flags.DEFINE_integer("trained_reps", 3, "Timed batched passes over the split.")
_TRAINED_BATCH_SIZE = flags.DEFINE_integer(
    "trained_batch_size", 64, "Sentences a batch in the timed passes over the split."
)
_LITERT = flags.DEFINE_bool(
    "litert", True, "--workdir: also time LiteRT exports (float32 and dynamic_int8)."
)
_BFLOAT16 = flags.DEFINE_bool(
    "bfloat16", True, "--workdir: also time the SavedModel computing in bfloat16."
)
_CT2_LENGTH_PENALTY = flags.DEFINE_float(
    "ctranslate2_length_penalty", None, "CTranslate2's; default: chosen on validation."
)
_SIZE = harness.define_size_flag()
_PEERS = harness.define_peers_flag(["tf", "torch", "ct2"], ["tf", "torch", "ct2"])

BEAM_SIZE, LENGTH_PENALTY = 4, 0.6
SAMPLING, PREFIX_LENGTH = Sampling(top_k=10), 8
REFERENCE = "reference greedy (no cache)"
# The issue's targets: at least this share of CTranslate2 float32's tokens/s, same workload.
CT2_TARGET_SHARE = 0.5
# --workdir: the default export's share of CTranslate2 float32's speed at batch 64 and batch 1,
# and of CTranslate2 float32 with the shortlist (vmap).
CT2_BATCH64_TARGET_SHARE = 1.0
CT2_BATCH1_TARGET_SHARE = 1.0
CT2_VMAP_TARGET_SHARE = 0.8
# Our CTranslate2 export with the shortlist (int8, vmap) against a plain int8 export, batch 64.
CT2_VMAP_TARGET = 1.3
TIMED_LITERT_QUANTIZATIONS = ("float32", "dynamic_int8")


@dataclasses.dataclass
class TrainedLine:
    """One translator's figures on the real split."""

    batch1_ms: float  # median milliseconds per sentence, one sentence per call
    sentences_per_second: float  # in batches, the whole split, median of --trained_reps passes
    tokens_per_second: float  # output SentencePiece pieces per second, same passes
    bleu: float  # sacreBLEU of the batched translations
    same_as_default: float  # the share of its translations the default SavedModel gives too


def trained_lines(
    timings: dict[str, dict],
    sentences: list[str],
    references: list[str],
    tokenizer: sentencepiece.SentencePieceProcessor,
) -> dict[str, TrainedLine]:
    """Each translator's figures from :func:`translator_timing.time_translators`' timings."""
    from common.metrics import bleu

    lines = {}
    default = timings["SavedModel, default"]["translations"]
    for name, timing in timings.items():
        seconds = statistics.median(timing["pass_seconds"])
        pieces = sum(len(ids) for ids in tokenizer.encode(timing["translations"]))
        same = [a == b for a, b in zip(timing["translations"], default, strict=True)]
        lines[name] = TrainedLine(
            batch1_ms=statistics.median(timing["batch1_seconds"]) * 1e3,
            sentences_per_second=len(sentences) / seconds,
            tokens_per_second=pieces / seconds,
            bleu=bleu(timing["translations"], references)[0].score,
            same_as_default=sum(same) / len(same),
        )
    return lines


def print_ratio(lines: dict[str, TrainedLine], mine: str, theirs: str, batch_size: int) -> None:
    """``mine``'s speed over ``theirs``'s, in batches and at batch 1 (higher: ``mine`` faster)."""
    batched = lines[mine].sentences_per_second / lines[theirs].sentences_per_second
    batch1 = lines[theirs].batch1_ms / lines[mine].batch1_ms
    print(f"  {mine} / {theirs}: batch {batch_size} {batched:.2f}, batch 1 {batch1:.2f}")


def time_in_own_process(
    exports: dict[str, dict[str, str]],
    length_penalty: float,
    sentences: list[str],
    batch1: int,
    reps: int,
    batch_size: int,
) -> dict[str, dict]:
    """:mod:`translator_timing` over CTranslate2 or LiteRT exports (``{name: {"runtime",
    "path"}}``), in a process without TensorFlow."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as spec:
        json.dump(
            {
                "exports": exports,
                "length_penalty": length_penalty,
                "sentences": sentences,
                "batch1_sentences": batch1,
                "reps": reps,
                "batch_size": batch_size,
            },
            spec,
        )
    program = str(harness.REPO_ROOT / "benchmarks" / "translator_timing.py")
    completed = subprocess.run(
        [sys.executable, program, spec.name], capture_output=True, text=True, check=False
    )
    os.unlink(spec.name)
    if completed.returncode:
        raise SystemExit(f"translator_timing.py failed: {completed.stderr[-2000:]}")
    return json.loads(completed.stdout)


def compare_with_ctranslate2(
    workdir: str, split: str, batch1_sentences: int, reps: int, batch_size: int, litert: bool
) -> None:
    """Our SavedModel (XLA and graph) against CTranslate2 float32 and int8 exports of the same
    checkpoint (and, with ``litert``, our LiteRT float32 and dynamic int8 exports), all at the
    config's beam, on ``split``: latency, throughput, BLEU, agreement, ratios."""
    from exports.saved_model import SavedModelTranslator
    from inference.ctranslate2_export import choose_length_penalty, export_ctranslate2
    from inference.evaluation import read_split
    from inference.export import export_saved_model
    from inference.litert_export import export_litert
    from inference.loading import load_translator
    from rundir.config import data_spec, load_config
    from rundir.layout import RunDirectory

    config = load_config(workdir)
    data = data_spec(config)
    sources, references = read_split(data.corpus, split, data.data_dir)
    run = RunDirectory(workdir)
    checkpoint = "averaged" if os.path.isdir(run.averaged) else "best"
    exports = tempfile.mkdtemp(prefix="decode_throughput-")
    tokenizer = sentencepiece.SentencePieceProcessor(model_file=run.tokenizer)
    shortlisted = os.path.exists(run.shortlist)
    # The SavedModels timed: name -> load_translator's options.
    ours = {"SavedModel, default": {}, "SavedModel, graph only": {"jit_compile": False}}
    if shortlisted:
        ours["SavedModel, no shortlist"] = {"shortlist": False}
    if _BFLOAT16.value:
        ours["SavedModel, bfloat16"] = {"precision": "bfloat16"}
    translators = {}
    for number, (name, options) in enumerate(ours.items()):
        translator, path = load_translator(workdir, checkpoint, **options)
        translators[name] = SavedModelTranslator(
            export_saved_model(translator, os.path.join(exports, f"saved_model_{number}"))
        )
    # CTranslate2's: float32 and int8, with the shortlist as its vocabulary map and without.
    own_process = {}
    for shortlist in (False, True) if shortlisted else (False,):
        translator, _ = load_translator(workdir, checkpoint, shortlist=shortlist)
        for quantization in ("float32", "int8"):
            name = f"CTranslate2 {quantization}{' vmap' if shortlist else ''}"
            output = os.path.join(exports, name.replace(" ", "_"))
            export_ctranslate2(translator, output, quantization)
            own_process[name] = {"runtime": "ctranslate2", "path": output}
    litert_sizes = {}
    for quantization in TIMED_LITERT_QUANTIZATIONS if litert else ():
        litert_path = export_litert(
            translator, os.path.join(exports, f"litert_{quantization}"), quantization
        )
        own_process[f"LiteRT {quantization}"] = {"runtime": "litert", "path": litert_path}
        litert_sizes[quantization] = (
            os.path.getsize(os.path.join(litert_path, "model.tflite")) / 2**20
        )
    penalty = _CT2_LENGTH_PENALTY.value
    if penalty is None:
        validation = read_split(data.corpus, config.data.validation_split, data.data_dir)
        penalty, scores = choose_length_penalty(
            own_process["CTranslate2 float32"]["path"], *validation, progress=False
        )
        print(
            "CTranslate2 length penalty chosen on validation by float32 BLEU: "
            + ", ".join(f"{candidate}: {score:.2f}" for candidate, score in scores.items())
        )
    harness.print_config(
        "trained model",
        {
            "checkpoint": path,
            "split": f"{data.name} {split} ({len(sources)} sentences)",
            "beam": config.decode.beam_size,
            "length penalty": f"GNMT {config.decode.length_penalty}, CTranslate2 {penalty}",
            "batch 1": f"the first {batch1_sentences} sentences, median ms per sentence",
            f"batch {batch_size}": f"every sentence, sorted by length, median of {reps} passes",
            "order": f"ours in turns of {BATCH1_BLOCK} sentences and of passes; then each "
            "CTranslate2 and LiteRT export in a process of its own",
            "CTranslate2 and LiteRT threads": len(os.sched_getaffinity(0)),
            "LiteRT file sizes": ", ".join(f"{q} {mb:.1f} MiB" for q, mb in litert_sizes.items()),
        },
    )
    timings = time_translators(translators, sources, batch1_sentences, reps, batch_size)
    del translators  # TensorFlow's threads idle while the exports are timed in their own process
    for name, export in own_process.items():  # each alone: two translators' threads compete
        timings |= time_in_own_process(
            {name: export}, penalty, sources, batch1_sentences, reps, batch_size
        )
    lines = trained_lines(timings, sources, references, tokenizer)
    shutil.rmtree(exports)
    batched = f"batch {batch_size} sent/s"
    print(
        f"\n{'translator':<24} {'batch 1 ms':>10} {batched:>16} {'tok/s':>7} {'BLEU':>6} "
        f"{'same as default':>15}"
    )
    for name, line in lines.items():
        print(
            f"{name:<24} {line.batch1_ms:>10.1f} {line.sentences_per_second:>16.1f} "
            f"{line.tokens_per_second:>7.0f} {line.bleu:>6.2f} {line.same_as_default:>15.1%}"
        )
    print(
        f"\nratios ours / CTranslate2 (speed: higher is better for ours; targets: batch "
        f"{batch_size} >= {CT2_BATCH64_TARGET_SHARE}, batch 1 >= {CT2_BATCH1_TARGET_SHARE} of "
        f"float32 and >= {CT2_VMAP_TARGET_SHARE} of float32 vmap for the default export; LiteRT "
        "int8 batch 1 >= 1.0 of CTranslate2 int8)"
    )
    ours_lines = [*ours, *(f"LiteRT {quantization}" for quantization in litert_sizes)]
    theirs_lines = [name for name in own_process if name.startswith("CTranslate2")]
    for mine in ours_lines:
        for theirs in theirs_lines:
            print_ratio(lines, mine, theirs, batch_size)
    if shortlisted:
        print(f"our CTranslate2 export's shortlist (target: int8 vmap >= {CT2_VMAP_TARGET}x int8):")
        for quantization in ("float32", "int8"):
            print_ratio(lines, f"CTranslate2 {quantization} vmap", "CTranslate2 int8", batch_size)
    int8_loss = lines["CTranslate2 float32"].bleu - lines["CTranslate2 int8"].bleu
    print(f"CTranslate2 int8 BLEU loss against float32: {int8_loss:.2f} (target <= 0.3)")
    if litert_sizes:
        int8_loss = lines["LiteRT float32"].bleu - lines["LiteRT dynamic_int8"].bleu
        print(f"LiteRT dynamic_int8 BLEU loss against float32: {int8_loss:.2f} (target <= 0.3)")


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
        # The whole list is computed; the best's ids are what is checked and counted.
        f"beam {BEAM_SIZE}, n-best {BEAM_SIZE}": lambda ids: n_best_search(
            model, ids, beam_options, BEAM_SIZE, with_token_log_probs=True
        ).ids[:, 0],
        f"sampling top-k {SAMPLING.top_k}": lambda ids: sample_search(
            model, ids, greedy_options, SAMPLING, seeds=tf.range(batch)
        ),
        f"greedy, prefix {PREFIX_LENGTH}": lambda ids: greedy_search(
            model, ids, greedy_options, target_prefix=ids[:, :PREFIX_LENGTH]
        ),
        f"beam {BEAM_SIZE}, prefix {PREFIX_LENGTH}": lambda ids: beam_search(
            model, ids, beam_options, target_prefix=ids[:, :PREFIX_LENGTH]
        )[0],
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
        compare_with_ctranslate2(
            _WORKDIR.value,
            _SPLIT.value,
            _BATCH1_SENTENCES.value,
            _TRAINED_REPS.value,
            _TRAINED_BATCH_SIZE.value,
            _LITERT.value,
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
    run_main(main)
