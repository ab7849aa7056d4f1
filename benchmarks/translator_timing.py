"""Timing translators on real text, batch 1 and in batches, taking turns; imports no TensorFlow.

``decode_throughput.py --workdir`` times our SavedModels with :func:`time_translators` in its own
process and the CTranslate2 and LiteRT exports with this file as a program, in a process of
their own:

    python benchmarks/translator_timing.py SPEC.json   # prints the timings as JSON

SPEC.json: ``{"exports": {name: {"runtime": "ctranslate2" | "litert", "path": dir}},
"length_penalty": p (CTranslate2's), "sentences": [...], "batch1_sentences": n, "reps": r,
"batch_size": b}``. Give one export a process: runtimes' thread pools keep
their threads spinning after a call, so two models in one process slow each other (CTranslate2
float32 beside the int8 export, both on two threads: 83.9 ms a sentence and 121.2 sentences/s
in batches of 64; alone 18.0 ms and 166.9; docs/PERFORMANCE.md).
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Mapping, Sequence

BATCH1_BLOCK = 50  # sentences a translator translates one by one before the next one's turn


def _seconds(translator: object, sentences: list[str], batch_size: int) -> tuple[list[str], float]:
    started = time.perf_counter()
    translations = translator.translate(sentences, batch_size=batch_size, progress=False)
    return translations, time.perf_counter() - started


def time_translators(
    translators: Mapping[str, object],
    sentences: Sequence[str],
    batch1_sentences: int,
    reps: int,
    batch_size: int = 64,
) -> dict[str, dict]:
    """Batch 1 over the first ``batch1_sentences`` (one per call) and ``batch_size`` over all
    ``sentences`` (sorted by length as translate.py does: ``reps`` passes), after one untimed
    pass of each (every shape traced and compiled: a server's steady state). The translators
    take turns, block by block of ``BATCH1_BLOCK`` sentences and pass by pass, each round
    starting with the next one: a slow spell of a shared machine falls on all of them.

    Returns:
        ``{name: {"batch1_seconds": [...], "pass_seconds": [...], "translations": [...]}}``.
    """
    names = list(translators)
    sentences = list(sentences)
    single = [[sentence] for sentence in sentences[:batch1_sentences]]
    results = {name: {"batch1_seconds": [], "pass_seconds": []} for name in names}

    def in_turn(round_number: int) -> list[str]:
        first = round_number % len(names)
        return names[first:] + names[:first]

    for name, translator in translators.items():  # warm-up
        for batch in single:
            translator.translate(batch, batch_size=1, progress=False)
        results[name]["translations"] = translator.translate(
            sentences, batch_size=batch_size, progress=False
        )
    blocks = [single[start : start + BATCH1_BLOCK] for start in range(0, len(single), BATCH1_BLOCK)]
    for number, block in enumerate(blocks):
        for name in in_turn(number):
            for batch in block:
                _, seconds = _seconds(translators[name], batch, 1)
                results[name]["batch1_seconds"].append(seconds)
    for number in range(reps):
        for name in in_turn(number):
            translations, seconds = _seconds(translators[name], sentences, batch_size)
            results[name]["translations"] = translations
            results[name]["pass_seconds"].append(seconds)
    return results


def main(spec_path: str) -> None:
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from exports.ctranslate2 import CTranslate2Translator
    from exports.litert import LiteRTTranslator

    with open(spec_path, encoding="utf-8") as file:
        spec = json.load(file)
    loaders = {
        "ctranslate2": lambda path: CTranslate2Translator(
            path, length_penalty=spec["length_penalty"]
        ),
        "litert": LiteRTTranslator,
    }
    translators = {
        name: loaders[export["runtime"]](export["path"]) for name, export in spec["exports"].items()
    }
    timings = time_translators(
        translators, spec["sentences"], spec["batch1_sentences"], spec["reps"], spec["batch_size"]
    )
    loaded = sorted(module for module in sys.modules if module.startswith("tensorflow"))
    assert not loaded, f"TensorFlow was imported: {loaded[:3]}"
    json.dump(timings, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1])
