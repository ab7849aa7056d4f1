"""Vocabulary shortlists (``decoding.shortlist``): how many candidates a batch gets, how often
they hold what the full search writes, the BLEU and the speed of the search over them.

    .venv/bin/python benchmarks/shortlist.py --workdir=runs/multi30k_de_en
        [--checkpoint=averaged] [--splits=validation,test2016] [--settings=count:50:2000,...]
        [--batch_size=64] [--max_sentences=0]

Counts the run's training pairs once (``inference.shortlist.Cooccurrences``), then for each
setting ``criterion:k:frequent`` builds a shortlist: each source piece's ``k`` target pieces by
``count`` (pairs holding both: the library's criterion) or by ``dice`` (``2 c(s, t) / (c(s) +
c(t))``, which ranks frequent target pieces lower), and the ``frequent`` most frequent target
pieces. For each split it prints, per setting: the mean candidates of a batch of
``--batch_size`` sentences and of one sentence; the sentences whose full-search translation's
pieces are all candidates of their batch; sacreBLEU of the translations over the shortlist (the
full search's first); and the sentences/s of a pass in batches of ``--batch_size`` against the
full search's, each timed on its second run (the first traces and compiles). Run it alone on
the machine.
"""

from __future__ import annotations

import time

import harness  # noqa: I001  (first: sets up the path and TensorFlow's logging)
import numpy as np
import tensorflow as tf
from absl import flags

from cli.errors import run_main
from common.metrics import bleu
from decoding.translator import ModelTranslator, request_columns
from inference.loading import load_translator
from inference.shortlist import Cooccurrences, training_id_pairs

_WORKDIR = flags.DEFINE_string("workdir", None, "A trained work directory.", required=True)
_CHECKPOINT = flags.DEFINE_string("checkpoint", "averaged", "Its checkpoint.")
_SPLITS = flags.DEFINE_list("splits", ["validation", "test2016"], "The splits measured.")
_SETTINGS = flags.DEFINE_list(
    "settings",
    ["count:50:2000", "count:20:2000", "count:50:1000", "dice:10:2000", "dice:20:1000"],
    "The shortlists measured, each criterion:k:frequent (criterion: count or dice).",
)
_BATCH_SIZE = flags.DEFINE_integer("batch_size", 64, "Sentences per batch.")
_MAX_SENTENCES = flags.DEFINE_integer("max_sentences", 0, "Only the first sentences (0: all).")


def dice(counts: Cooccurrences) -> np.ndarray:
    """The Dice coefficient of each of ``counts.pairs``."""
    source, target = counts.pairs // counts.vocab_size, counts.pairs % counts.vocab_size
    return 2 * counts.counts / (counts.source_counts[source] + counts.target_counts[target])


def timed_pass(translator: ModelTranslator, sources: list[str]) -> tuple[list[str], float]:
    """The translations of ``sources`` and the seconds of a pass, timed on its second run."""
    translator.translate(sources, batch_size=_BATCH_SIZE.value, progress=False)
    start = time.perf_counter()
    translations = translator.translate(sources, batch_size=_BATCH_SIZE.value, progress=False)
    return translations, time.perf_counter() - start


def candidate_counts(
    translator: ModelTranslator, sources: list[str], full: list[str], batch_size: int
) -> tuple[float, int]:
    """The mean candidates of a batch of ``batch_size`` sources (in order), and the sentences
    whose full translation's pieces are all candidates of their batch."""
    counts, covered = [], 0
    for start in range(0, len(sources), batch_size):
        columns = request_columns(sources[start : start + batch_size], None)
        candidates = translator._candidates(translator._source_ids(*columns))
        kept = set(candidates.ids[: candidates.count].numpy().tolist())
        counts.append(int(candidates.count))
        written = translator.tokenizer.tokenize(tf.constant(full[start : start + batch_size]))
        covered += sum(set(ids) <= kept for ids in written.to_list())
    return float(np.mean(counts)), covered


def main(argv: list[str]) -> None:
    del argv
    harness.start(__doc__)
    workdir = _WORKDIR.value
    full, path = load_translator(workdir, _CHECKPOINT.value, shortlist=False)
    tokenizer = full.tokenizer
    start = time.perf_counter()
    counts = Cooccurrences.count(training_id_pairs(workdir, tokenizer), tokenizer.vocab_size)
    print(f"training pairs counted in {time.perf_counter() - start:.1f} s", flush=True)
    ranks = {"count": counts.counts, "dice": dice(counts)}
    harness.print_config(
        "model",
        {
            "checkpoint": path,
            "beam": full.beam_size,
            "vocabulary": tokenizer.vocab_size,
            "batch": _BATCH_SIZE.value,
        },
    )
    for split in _SPLITS.value:
        sources, references = harness.workdir_split(workdir, split, _MAX_SENTENCES.value)
        full_translations, full_seconds = timed_pass(full, sources)
        print(f"\n{split} ({len(sources)} sentences)")
        print(
            f"| shortlist | candidates, batch of {_BATCH_SIZE.value} | candidates, 1 sentence | "
            "full output inside | BLEU | sentences/s | speed-up |"
        )
        print("| --- | --- | --- | --- | --- | --- | --- |")
        full_bleu = bleu(full_translations, references)[0].score
        print(
            f"| none | {tokenizer.vocab_size} | {tokenizer.vocab_size} | 100.0 % | "
            f"{full_bleu:.2f} | {len(sources) / full_seconds:.1f} | 1.00x |"
        )
        for setting in _SETTINGS.value:
            criterion, k, frequent = setting.split(":")
            shortlist = counts.ranked(ranks[criterion], int(k), int(frequent))
            translator = ModelTranslator(
                full.model,
                full.tokenizer,
                full.options,
                full.max_source_length,
                full.jit_compile,
                shortlist=shortlist,
            )
            batch_mean, covered = candidate_counts(
                translator, sources, full_translations, _BATCH_SIZE.value
            )
            one_mean, _ = candidate_counts(translator, sources[:200], full_translations, 1)
            translations, seconds = timed_pass(translator, sources)
            score = bleu(translations, references)[0].score
            print(
                f"| {setting} | {batch_mean:.0f} | {one_mean:.0f} | "
                f"{100 * covered / len(sources):.1f} % | {score:.2f} | "
                f"{len(sources) / seconds:.1f} | {full_seconds / seconds:.2f}x |",
                flush=True,
            )


if __name__ == "__main__":
    run_main(main)
