"""What each training speed-up contributes: our model's step with Keras' stock pieces, then with
each of ours added in turn, timed side by side in one run.

    .venv/bin/python benchmarks/train_step_parts.py [--precision=mixed_bfloat16] [--rounds=8]

Variants, each adding one change to the previous:
  keras_pieces   keras.layers.Dropout, keras.layers.LayerNormalization, the loss not compiled
  +byte_dropout  transformer.dropout.Dropout (one random byte per element)
  +layer_norm    transformer.normalization.LayerNormalization (closed-form gradient)
  +xla_loss      the label-smoothed loss compiled by XLA: the code as it is
Every variant trains the same "small" model as benchmarks/train_throughput.py (d 256, 4 heads,
d_ff 1024, 3+3 layers, vocab 8000, dropout 0.1) on the same synthetic 128 x 24/24 batch. The
rounds interleave the variants (4 steps each per round) so that host noise hits them alike;
printed: the median step time, target tokens/s and the speed-up over keras_pieces.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import tensorflow as tf  # noqa: E402

import training.step  # noqa: E402
import transformer.attention  # noqa: E402
import transformer.layers  # noqa: E402
import transformer.model  # noqa: E402
from benchmarks.train_throughput import SMALL, build, synthetic_batch  # noqa: E402
from training.loss import label_smoothed_loss  # noqa: E402
from transformer.dropout import Dropout  # noqa: E402
from transformer.normalization import LayerNormalization  # noqa: E402

# The modules whose `Dropout` and `LayerNormalization` the model's layers look up when built.
DROPOUT_USERS = [transformer.attention, transformer.layers, transformer.model]
NORM_USERS = [transformer.layers, transformer.model]

VARIANTS = {
    "keras_pieces": (keras.layers.Dropout, keras.layers.LayerNormalization, False),
    "+byte_dropout": (Dropout, keras.layers.LayerNormalization, False),
    "+layer_norm": (Dropout, LayerNormalization, False),
    "+xla_loss": (Dropout, LayerNormalization, True),
}


def make_step(dropout_class, norm_class, compiled_loss: bool, batch: dict):
    """Builds the model and its tf.function step with the given pieces, and warms it up."""
    for module in DROPOUT_USERS:
        module.Dropout = dropout_class
    for module in NORM_USERS:
        module.LayerNormalization = norm_class
    training.step.label_smoothed_loss = (
        label_smoothed_loss if compiled_loss else label_smoothed_loss.python_function
    )
    try:
        keras.utils.set_random_seed(0)
        model = build("ours", SMALL)
        optimizer = keras.optimizers.Adam(1e-4, beta_2=0.98, epsilon=1e-9)
        step = tf.function(training.step.make_replica_step(model, optimizer, 0.1))
        for _ in range(2):
            float(step(batch)[0])
    finally:
        for module in DROPOUT_USERS:
            module.Dropout = Dropout
        for module in NORM_USERS:
            module.LayerNormalization = LayerNormalization
        training.step.label_smoothed_loss = label_smoothed_loss
    return step


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--precision", default="mixed_bfloat16")
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--steps", type=int, default=4, help="steps per variant per round")
    args = parser.parse_args()
    print(
        f"TensorFlow {tf.__version__}, Keras {keras.__version__}, {os.cpu_count()} CPU cores, "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {args.precision}, "
        f"{args.rounds} rounds x {args.steps} steps per variant"
    )
    keras.mixed_precision.set_global_policy(args.precision)
    batch = synthetic_batch(SMALL)
    steps = {name: make_step(*pieces, batch) for name, pieces in VARIANTS.items()}
    seconds = {name: [] for name in steps}
    for _ in range(args.rounds):
        for name, step in steps.items():
            start = time.perf_counter()
            for _ in range(args.steps):
                result = step(batch)
            float(result[0])
            seconds[name].append((time.perf_counter() - start) / args.steps)
    tokens = SMALL["batch"] * SMALL["target_len"]
    baseline = statistics.median(seconds["keras_pieces"])
    for name, times in seconds.items():
        median = statistics.median(times)
        print(
            f"RESULT {name:14s} step {median * 1e3:6.1f} ms  {tokens / median:6.0f} target tok/s  "
            f"speed-up {baseline / median:.2f}"
        )


if __name__ == "__main__":
    main()
