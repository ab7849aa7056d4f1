"""Input-pipeline throughput, compared with what a training step consumes.

Loads the Multi30k de-en training split (raw files from $MULTI30K_DIR), trains a SentencePiece
model into a temporary directory, builds the training batches exactly as training does
(`data_pipeline.make_batches`) and times them:

* the length count: tokenizing and counting the first 100,000 pairs (all of Multi30k), once;
* epochs: what each epoch costs, as in training: read, shuffle, tokenize, filter, bucket, pad
  (the training pipeline caches nothing, so every epoch tokenizes anew).

It prints examples/s, target tokens/s (non-padding and padded), the padding share and the
ratio of the pipeline's target tokens/s to `--train_tokens_per_second` (the target training
throughput, in non-padding target tokens). A ratio well above 1 means the input pipeline is not
what limits training.

Command:
    MULTI30K_DIR=../shared/data/multi30k .venv/bin/python benchmarks/input_pipeline.py \\
        [--train_tokens_per_second=8000] [--epochs=3] [--tokens_per_batch=4096]
"""

from __future__ import annotations

import dataclasses
import tempfile

import harness
import tensorflow as tf
from absl import flags

import data_pipeline as dp
from cli.errors import run_main

_DATASET = flags.DEFINE_string("dataset", "multi30k/de-en", "Data set name (data.name's forms).")
_DATA_DIR = flags.DEFINE_string("data_dir", None, "TFDS data directory (default: TFDS's).")
_WORKDIR = flags.DEFINE_string("workdir", None, "Where the tokenizer goes (default: a temp dir).")
_VOCAB = flags.DEFINE_integer("vocab_size", 8000, "SentencePiece vocabulary size.")
_MODEL_TYPE = flags.DEFINE_enum("model_type", "unigram", ["unigram", "bpe"], "SentencePiece type.")
_MAX_LENGTH = flags.DEFINE_integer("max_length", 128, "Longest example kept (BOS/EOS incl.).")
_TOKENS = flags.DEFINE_integer("tokens_per_batch", 4096, "Token budget per batch.")
_EPOCHS = flags.DEFINE_integer("epochs", 3, "Cached epochs to time.")
_SEED = flags.DEFINE_integer("seed", 0, "Shuffle seed.")
_TRAIN_TPS = flags.DEFINE_float(
    "train_tokens_per_second",
    8000.0,
    "Non-padding target tokens per second a training step consumes (target throughput).",
)


def _summary(batch: dict[str, tf.Tensor]) -> tuple[tf.Tensor, ...]:
    """Batch size, padded lengths and non-padding token counts of one batch."""
    b, s = tf.unstack(tf.shape(batch["source"]))
    t = tf.shape(batch["target_out"])[1]
    count = lambda ids: tf.math.count_nonzero(ids != dp.PAD_ID, dtype=tf.int32)  # noqa: E731
    return b, s, t, count(batch["source"]), count(batch["target_out"])


@dataclasses.dataclass
class Throughput:
    """Counts and seconds of the timed passes over the batches."""

    seconds: float = 0.0
    batches: int = 0
    examples: int = 0
    target_tokens: int = 0  # Non-padding target_out tokens.
    padded_target_tokens: int = 0  # B * T summed over batches.
    source_tokens: int = 0
    padded_source_tokens: int = 0
    epoch_seconds: list[float] = dataclasses.field(default_factory=list)

    def add_epoch(self, batches: tf.data.Dataset) -> None:
        """Times one pass; the counting is done in-graph so it adds next to nothing."""
        _, seconds = harness.timed(
            lambda: [self._add(*x) for x in batches.map(_summary).as_numpy_iterator()]
        )
        self.epoch_seconds.append(seconds)
        self.seconds += seconds

    def _add(self, b: int, s: int, t: int, src_tokens: int, tgt_tokens: int) -> None:
        self.batches += 1
        self.examples += b
        self.padded_target_tokens += b * t
        self.padded_source_tokens += b * s
        self.target_tokens += tgt_tokens
        self.source_tokens += src_tokens

    def row(self, name: str) -> str:
        """One line of the table: rates, padding shares and the ratio to training."""
        s = self.seconds
        return (
            f"{name:<24} {self.examples / s:>12,.0f} {self.target_tokens / s:>14,.0f} "
            f"{self.padded_target_tokens / s:>14,.0f} "
            f"{1 - self.target_tokens / self.padded_target_tokens:>8.1%} "
            f"{1 - self.source_tokens / self.padded_source_tokens:>8.1%} "
            f"{self.target_tokens / s / _TRAIN_TPS.value:>8.1f}x"
        )


def main(argv: list[str]) -> None:
    del argv
    harness.start(__doc__)
    splits, load_s = harness.timed(
        lambda: dp.load_translation_splits(
            dp.spec.parse(_DATASET.value, data_dir=_DATA_DIR.value), ["train"]
        )
    )
    train = splits["train"]
    with tempfile.TemporaryDirectory() as tmp:
        workdir = _WORKDIR.value or tmp
        tokenizer, tokenizer_s = harness.timed(
            lambda: dp.load_or_train_tokenizer(workdir, train, _VOCAB.value, _MODEL_TYPE.value)
        )
        config = dict(
            max_length=_MAX_LENGTH.value,
            tokens_per_batch=_TOKENS.value,
            shuffle=True,
            seed=_SEED.value,
        )
        (batches, stats), count_s = harness.timed(
            lambda: dp.make_batches_with_stats(train, tokenizer, **config)
        )
        epochs = Throughput()
        for _ in range(_EPOCHS.value):
            epochs.add_epoch(batches)

    print("\n=== Input pipeline benchmark ===")
    print(f"data set               : {_DATASET.value} train ({stats.total:,} pairs)")
    print(
        f"tokenizer              : SentencePiece {tokenizer.model_type}, joint, vocab "
        f"{tokenizer.vocab_size:,}"
    )
    print(
        f"make_batches           : max_length={_MAX_LENGTH.value} "
        f"tokens_per_batch={_TOKENS.value} shuffle=True seed={_SEED.value} "
        f"buckets={len(dp.default_bucket_boundaries(_MAX_LENGTH.value))}"
    )
    print(
        f"filtered               : {stats.dropped:,} of {stats.total:,} longer than "
        f"max_length; kept {stats.kept:,} ({stats.kept_target_tokens:,} target tokens)"
    )
    print(f"load (TFDS)            : {load_s:.1f} s; tokenizer training: {tokenizer_s:.1f} s")
    print(
        f"length count (read + tokenize + count): {count_s:.2f} s = "
        f"{stats.total / count_s:,.0f} examples/s, "
        f"{stats.kept_target_tokens / count_s:,.0f} target tokens/s"
    )
    print(
        f"\n{'':<24} {'examples/s':>12} {'tgt tokens/s':>14} {'padded tgt/s':>14} "
        f"{'tgt pad':>8} {'src pad':>8} {'vs train':>9}"
    )
    print(epochs.row(f"{_EPOCHS.value} epochs"))
    print("epoch times (s)        : " + ", ".join(f"{x:.2f}" for x in epochs.epoch_seconds))
    print(
        f"batches per epoch: {epochs.batches / _EPOCHS.value:,.0f}, mean batch "
        f"{epochs.examples / epochs.batches:,.1f} examples, "
        f"{epochs.padded_target_tokens / epochs.batches:,.0f} padded target tokens"
    )
    slowest = epochs.target_tokens / len(epochs.epoch_seconds) / max(epochs.epoch_seconds)
    ratio = slowest / _TRAIN_TPS.value
    print(
        f"training step consumes : {_TRAIN_TPS.value:,.0f} target tokens/s "
        "(--train_tokens_per_second)"
    )
    print(
        f"pipeline / train       : {ratio:.1f}x (slowest epoch) -> "
        + (
            "the input pipeline is not the bottleneck"
            if ratio >= 1
            else "THE INPUT PIPELINE WOULD LIMIT TRAINING"
        )
    )


if __name__ == "__main__":
    run_main(main)
