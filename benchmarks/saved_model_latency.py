"""Latency and throughput of an exported SavedModel on Multi30k sentences.

    .venv/bin/python benchmarks/saved_model_latency.py --saved_model=runs/multi30k_de_en/saved_model
        [--data=multi30k/de-en --split=test2016 --sentences=200]

Loads the SavedModel the way a server would (tensorflow + tensorflow_text only), then prints the
median (and 90th percentile) time of one sentence per call over ``--sentences`` sentences, and
sentences/s and output tokens/s (whitespace words) at batch 1 and batch 64, after one untimed
warm-up pass over the same sentences (tracing; XLA compilations of a --jit_compile export).
"""

from __future__ import annotations

import statistics

import harness
import tensorflow as tf
import tensorflow_text  # noqa: F401  (the SentencePiece ops of the graph)
from absl import flags

from cli.errors import run_main
from exports.saved_model import require_saved_model

_SAVED_MODEL = flags.DEFINE_string("saved_model", None, "Exported SavedModel.", required=True)
_DATA = flags.DEFINE_string("data", "multi30k/de-en", "Data set the sentences come from.")
_SPLIT = flags.DEFINE_string("split", "test2016", "Its split.")
_SENTENCES = flags.DEFINE_integer("sentences", 200, "The first this many sentences are timed.")


def main(argv: list[str]) -> None:
    del argv
    harness.start(__doc__)
    require_saved_model(_SAVED_MODEL.value)
    from data_pipeline import load_translation_splits, spec  # only to read the sentences

    pairs = load_translation_splits(spec.parse(_DATA.value), [_SPLIT.value])[_SPLIT.value]
    sources = [s.decode() for s, _ in pairs.take(_SENTENCES.value).as_numpy_iterator()]
    serve = tf.saved_model.load(_SAVED_MODEL.value).signatures["serving_default"]

    def translate(sentences: list[str]) -> list[bytes]:
        return list(serve(text=tf.constant(sentences))["translation"].numpy())

    def batches_of_64() -> int:
        """Translates ``sources`` in batches of 64; returns the output words."""
        words = 0
        for index in range(0, len(sources), 64):
            words += sum(len(output.split()) for output in translate(sources[index : index + 64]))
        return words

    # Warm-up: one untimed pass at batch 1 and at batch 64, as a server would have made; a
    # SavedModel exported with --jit_compile compiles each padded input shape here, once.
    _, seconds = harness.timed(lambda: ([translate([s]) for s in sources], batches_of_64()))
    print(f"warm-up pass (batch 1 and 64): {seconds:.1f} s")

    latencies, words = [], 0
    for sentence in sources:
        output, seconds = harness.timed(lambda sentence=sentence: translate([sentence]))
        latencies.append(seconds)
        words += len(output[0].split())
    total = sum(latencies)
    p90 = sorted(latencies)[int(0.9 * len(latencies))]
    print(
        f"RESULT batch 1: median {statistics.median(latencies) * 1e3:.1f} ms per sentence, "
        f"p90 {p90 * 1e3:.1f} ms; {len(sources) / total:.1f} sentences/s, "
        f"{words / total:.0f} output words/s ({len(sources)} sentences of {_DATA.value} "
        f"{_SPLIT.value})"
    )
    words, seconds = harness.timed(batches_of_64)
    print(
        f"RESULT batch 64: {len(sources) / seconds:.1f} sentences/s, "
        f"{words / seconds:.0f} output words/s"
    )


if __name__ == "__main__":
    run_main(main)
