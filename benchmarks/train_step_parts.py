"""What each training speed-up contributes: our model's step with Keras' stock pieces, then with
each of ours added in turn, timed side by side in one run.

    .venv/bin/python benchmarks/train_step_parts.py [--precision=mixed_bfloat16] [--rounds=8]
        [--steps=4] [--size=small]

Variants, each adding one change to the previous:
  keras_pieces   keras.layers.Dropout, keras.layers.LayerNormalization, the loss not compiled
  +byte_dropout  transformer.dropout.Dropout (one random byte per element)
  +layer_norm    transformer.normalization.LayerNormalization (closed-form gradient)
  +xla_loss      the label-smoothed loss compiled by XLA: the code as it is
Every variant trains the same model as benchmarks/train_throughput.py (``--size``; small: d 256,
4 heads, d_ff 1024, 3+3 layers, vocab 8000, dropout 0.1) on the same synthetic batch (small:
128 x 24/24 tokens) with the same step. The rounds interleave the variants (``--steps`` steps
each per round) so that host noise hits them alike; printed: the median step time, target
tokens/s and the speed-up over keras_pieces.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable

import harness
import keras
from absl import flags

import transformer.attention
import transformer.layers
import transformer.model
from cli.errors import run_main
from transformer.dropout import Dropout
from transformer.normalization import LayerNormalization

_PRECISION = flags.DEFINE_string("precision", "mixed_bfloat16", "Keras precision policy.")
_ROUNDS = flags.DEFINE_integer("rounds", 8, "Interleaved rounds (median over them).")
_STEPS = flags.DEFINE_integer("steps", 4, "Steps per variant per round.")
_SIZE = harness.define_size_flag()

# The modules whose `Dropout` and `LayerNormalization` the model's layers look up when built.
DROPOUT_USERS = [transformer.attention, transformer.layers, transformer.model]
NORM_USERS = [transformer.layers, transformer.model]

VARIANTS = {
    "keras_pieces": (keras.layers.Dropout, keras.layers.LayerNormalization, False),
    "+byte_dropout": (Dropout, keras.layers.LayerNormalization, False),
    "+layer_norm": (Dropout, LayerNormalization, False),
    "+xla_loss": (Dropout, LayerNormalization, True),
}


def make_step(
    shape: harness.Shape, dropout_class: type, norm_class: type, compiled_loss: bool, batch: dict
) -> Callable[[dict], tuple]:
    """Builds the model and its tf.function step with the given pieces, and warms it up."""
    for module in DROPOUT_USERS:
        module.Dropout = dropout_class
    for module in NORM_USERS:
        module.LayerNormalization = norm_class
    try:
        keras.utils.set_random_seed(0)
        step = harness.make_train_step(
            harness.build_transformer(shape), compiled_loss=compiled_loss
        )
        for _ in range(2):  # tracing happens here, with the pieces above
            float(step(batch)[0])
    finally:
        for module in DROPOUT_USERS:
            module.Dropout = Dropout
        for module in NORM_USERS:
            module.LayerNormalization = LayerNormalization
    return step


def main(argv: list[str]) -> None:
    del argv
    harness.start(__doc__)
    shape = harness.SHAPES[_SIZE.value]
    harness.print_config(
        "model", {"shape": shape.describe(), "batch": f"{shape.batch} x {shape.target_len}"}
    )
    keras.mixed_precision.set_global_policy(_PRECISION.value)
    batch = harness.synthetic_batch(shape)
    steps = {name: make_step(shape, *pieces, batch) for name, pieces in VARIANTS.items()}

    def run_steps(step: Callable[[dict], tuple]) -> None:
        for _ in range(_STEPS.value):
            result = step(batch)
        float(result[0])

    seconds = harness.time_round_robin(
        {name: lambda step=step: run_steps(step) for name, step in steps.items()}, _ROUNDS.value
    )
    tokens = shape.batch * shape.target_len
    medians = {name: statistics.median(times) / _STEPS.value for name, times in seconds.items()}
    for name, median in medians.items():
        print(
            f"RESULT {name:14s} step {median * 1e3:6.1f} ms  {tokens / median:6.0f} target tok/s  "
            f"speed-up {medians['keras_pieces'] / median:.2f}"
        )


if __name__ == "__main__":
    run_main(main)
