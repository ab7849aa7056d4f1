"""Latency and throughput of an exported SavedModel on Multi30k sentences.

    .venv/bin/python benchmarks/saved_model_latency.py --saved_model=runs/multi30k_de_en/saved_model
        [--data=multi30k/de-en --split=test2016 --sentences=200]

Loads the SavedModel the way a server would (tensorflow + tensorflow_text only), then prints the
median (and 90th percentile) time of one sentence per call over ``--sentences`` sentences, and
sentences/s and output tokens/s (whitespace words) at batch 1 and batch 64, after one untimed
warm-up pass over the same sentences (tracing; XLA compilations of a --jit_compile export).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import tensorflow as tf  # noqa: E402
import tensorflow_text  # noqa: E402, F401  (the SentencePiece ops of the graph)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--saved_model", required=True)
    parser.add_argument("--data", default="multi30k/de-en")
    parser.add_argument("--split", default="test2016")
    parser.add_argument("--sentences", type=int, default=200)
    args = parser.parse_args()

    from data_pipeline import load_translation_splits  # only to read the sentences

    pairs = load_translation_splits(args.data, [args.split])[args.split]
    sources = [s.decode() for s, _ in pairs.take(args.sentences).as_numpy_iterator()]
    serve = tf.saved_model.load(args.saved_model).signatures["serving_default"]
    # Warm-up: one untimed pass at batch 1 and at batch 64, as a server would have made; a
    # SavedModel exported with --jit_compile compiles each padded input shape here, once.
    started = time.perf_counter()
    for sentence in sources:
        serve(text=tf.constant([sentence]))
    for index in range(0, len(sources), 64):
        serve(text=tf.constant(sources[index : index + 64]))
    print(f"warm-up pass (batch 1 and 64): {time.perf_counter() - started:.1f} s")

    latencies, words = [], 0
    for sentence in sources:
        start = time.perf_counter()
        output = serve(text=tf.constant([sentence]))["translation"].numpy()
        latencies.append(time.perf_counter() - start)
        words += len(output[0].split())
    total = sum(latencies)
    p90 = sorted(latencies)[int(0.9 * len(latencies))]
    print(
        f"RESULT batch 1: median {statistics.median(latencies) * 1e3:.1f} ms per sentence, "
        f"p90 {p90 * 1e3:.1f} ms; {len(sources) / total:.1f} sentences/s, "
        f"{words / total:.0f} output words/s ({len(sources)} sentences of {args.data} "
        f"{args.split})"
    )
    start, words = time.perf_counter(), 0
    for index in range(0, len(sources), 64):
        outputs = serve(text=tf.constant(sources[index : index + 64]))["translation"].numpy()
        words += sum(len(o.split()) for o in outputs)
    seconds = time.perf_counter() - start
    print(
        f"RESULT batch 64: {len(sources) / seconds:.1f} sentences/s, "
        f"{words / seconds:.0f} output words/s"
    )


if __name__ == "__main__":
    main()
