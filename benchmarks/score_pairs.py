"""Forced scoring (``score.py``'s work) of a split with some pairs misaligned: how well the
scores find those pairs, and how fast each runtime scores.

    .venv/bin/python benchmarks/score_pairs.py --workdir=runs/multi30k_de_en [--checkpoint=averaged]
        [--saved_model=DIR] [--ctranslate2=DIR] [--split=test2016] [--noise=0.1] [--reps=3]

Reads the split's pairs, gives a --noise share of them (chosen with --seed) another chosen
pair's target (none keeps its own), and scores every pair with each runtime given: the work
directory's model, a SavedModel, a CTranslate2 export through our runtime, and CTranslate2's own
``score_batch`` on the same pieces (the peer: no Python per pair, no GNMT normalisation). Prints
for each: pairs/s (the median of --reps passes after one warm-up pass, batches of
--batch_size), and the misaligned pairs found among the lowest-scoring ones (as many as were
misaligned) when ranked by score (``log_prob / lp(length)``), by log_prob and by confidence.
Run it alone on the machine.
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable

import harness  # noqa: I001  (first: sets up the path and TensorFlow's logging)
from absl import flags

from cli.errors import run_main
from common.translation import Hypothesis
from inference.loading import load_translator

_WORKDIR = flags.DEFINE_string("workdir", None, "A trained work directory.", required=True)
_CHECKPOINT = flags.DEFINE_string("checkpoint", "averaged", "Its checkpoint.")
_SAVED_MODEL = flags.DEFINE_string("saved_model", None, "Also this SavedModel of it.")
_CTRANSLATE2 = flags.DEFINE_string("ctranslate2", None, "Also this CTranslate2 export of it.")
_SPLIT = flags.DEFINE_string("split", "test2016", "The split scored.")
_MAX_PAIRS = flags.DEFINE_integer("max_pairs", 0, "Score only the split's first pairs (0: all).")
_NOISE = flags.DEFINE_float("noise", 0.1, "The share of pairs given another pair's target.")
_SEED = flags.DEFINE_integer("seed", 0, "Chooses the misaligned pairs.")
_REPS = flags.DEFINE_integer("reps", 3, "Timed passes per runtime.")
_BATCH_SIZE = flags.DEFINE_integer("batch_size", 64, "Pairs per batch.")


def misaligned(targets: list[str], share: float, seed: int) -> tuple[list[str], set[int]]:
    """``targets`` with a ``share`` of them moved to other chosen pairs, and those pairs."""
    rng = random.Random(seed)
    chosen = sorted(rng.sample(range(len(targets)), round(share * len(targets))))
    moved = chosen[:]
    while any(a == b for a, b in zip(chosen, moved, strict=True)):
        rng.shuffle(moved)
    noisy = list(targets)
    for index, source_of_target in zip(chosen, moved, strict=True):
        noisy[index] = targets[source_of_target]
    return noisy, set(chosen)


def found(scores: list[Hypothesis], bad: set[int], key: Callable[[Hypothesis], float]) -> int:
    """How many of the ``len(bad)`` lowest by ``key`` are among ``bad``."""
    lowest = sorted(range(len(scores)), key=lambda i: key(scores[i]))[: len(bad)]
    return sum(index in bad for index in lowest)


def pairs_per_second(score: Callable[[], object], count: int) -> tuple[float, object]:
    result = score()  # warm-up: every shape traced
    seconds = []
    for _ in range(_REPS.value):
        started = time.perf_counter()
        result = score()
        seconds.append(time.perf_counter() - started)
    return count / statistics.median(seconds), result


def main(argv: list[str]) -> None:
    del argv
    harness.start(__doc__)
    sources, targets = harness.workdir_split(_WORKDIR.value, _SPLIT.value, _MAX_PAIRS.value)
    noisy, bad = misaligned(targets, _NOISE.value, _SEED.value)
    runtimes = {"work directory": load_translator(_WORKDIR.value, _CHECKPOINT.value)[0]}
    if _SAVED_MODEL.value:
        from exports.saved_model import SavedModelTranslator

        runtimes["SavedModel"] = SavedModelTranslator(_SAVED_MODEL.value)
    if _CTRANSLATE2.value:
        from exports.ctranslate2 import CTranslate2Translator

        runtimes["CTranslate2 (ours)"] = CTranslate2Translator(_CTRANSLATE2.value)
    print(f"{len(sources)} pairs of {_SPLIT.value}, {len(bad)} misaligned (seed {_SEED.value})")
    print(f"Misaligned pairs among the {len(bad)} lowest, ranked three ways:")
    print("| runtime | pairs/s | by score | by log_prob | by confidence |")
    print("| --- | --- | --- | --- | --- |")
    for name, translator in runtimes.items():
        rate, scores = pairs_per_second(
            lambda t=translator: t.score(
                sources, noisy, batch_size=_BATCH_SIZE.value, progress=False
            ),
            len(sources),
        )
        keys = (lambda h: h.score, lambda h: h.log_prob, lambda h: h.confidence)
        cells = " | ".join(f"{found(scores, bad, key)} / {len(bad)}" for key in keys)
        print(f"| {name} | {rate:.0f} | {cells} |")
    if _CTRANSLATE2.value:
        translator = runtimes["CTranslate2 (ours)"]
        limit = translator.max_source_length - 1
        source_pieces = [p[:limit] for p in translator.tokenizer.encode(sources, out_type=str)]
        target_pieces = translator.tokenizer.encode(noisy, out_type=str)

        def raw() -> object:
            return translator.translator.score_batch(
                source_pieces, target_pieces, max_batch_size=_BATCH_SIZE.value
            )

        rate, _ = pairs_per_second(raw, len(sources))
        print(f"| CTranslate2's score_batch alone (the peer) | {rate:.0f} | | | |")


if __name__ == "__main__":
    run_main(main)
