"""Training throughput: our Transformer against a Keras-MultiHeadAttention model of one shape.

    .venv/bin/python benchmarks/train_throughput.py [--precisions=float32,mixed_bfloat16]
        [--multi30k]    # also real Multi30k batches of configs/multi30k_de_en.py (needs data)

Prints, in one run: the fp32/bf16 matmul peak measured here; target tokens/s and model-FLOPs
utilisation (MFU) of our model and of the Keras-MHA model (the TensorFlow tutorial's design,
written below) on the synthetic "small" batch (d 256, 4 heads, d_ff 1024, 3+3 layers, vocab 8000,
batch 128 x 24/24 tokens, no padding), in each precision, with the ratio ours/Keras; with
``--multi30k``, useful (non-padding) target tokens/s and the padding share on real batches.
Both models train with the same step (label-smoothed loss, Adam) in ``tf.function``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from training.step import make_replica_step  # noqa: E402
from transformer import Transformer, positional_encoding  # noqa: E402

SMALL = dict(
    d_model=256,
    num_heads=4,
    d_ff=1024,
    num_layers=3,
    vocab=8000,
    batch=128,
    source_len=24,
    target_len=24,
)


def matmul_params(shape: dict) -> int:
    """Matmul weights touched once per token: encoder 4d^2 + 2d*d_ff per layer, decoder
    8d^2 + 2d*d_ff per layer, plus the tied d*V output projection."""
    d, f, layers = shape["d_model"], shape["d_ff"], shape["num_layers"]
    return layers * (4 * d * d + 2 * d * f) + layers * (8 * d * d + 2 * d * f) + d * shape["vocab"]


def train_flops_per_target_token(shape: dict) -> float:
    """6N (forward + backward matmuls, source length = target length) plus the attention score
    and value products (forward 4 * context * d per token per attention block, x3)."""
    d, layers = shape["d_model"], shape["num_layers"]
    s, t = shape["source_len"], shape["target_len"]
    attention_forward = layers * 4 * s * d * s + layers * (4 * t * d * t + 4 * s * d * t)
    return 6 * matmul_params(shape) + 3 * attention_forward / t


def median_seconds(fn, repetitions: int, warmup: int = 1) -> float:
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repetitions):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def matmul_peak(dtype: tf.DType) -> float:
    """GFLOP/s of chained 2048x2048 matmuls in tf.function (median of 5 x 10)."""
    a = tf.random.normal([2048, 2048], dtype=tf.float32)
    a = tf.cast(a, dtype) * tf.cast(0.02, dtype)

    @tf.function
    def chain(x):
        for _ in range(10):
            x = tf.matmul(x, a)
        return x

    seconds = median_seconds(lambda: chain(a).numpy(), 5)
    return 10 * 2 * 2048**3 / seconds / 1e9


class KerasPositionalEmbedding(keras.layers.Layer):
    def __init__(self, vocab: int, d_model: int) -> None:
        super().__init__()
        self.d_model = d_model
        self.embedding = keras.layers.Embedding(vocab, d_model)

    def call(self, ids):
        x = self.embedding(ids) * tf.cast(self.d_model**0.5, self.compute_dtype)
        return x + positional_encoding(tf.range(tf.shape(ids)[1]), self.d_model, self.compute_dtype)


class KerasBlock(keras.layers.Layer):
    """Tutorial-style post-norm layer around keras.layers.MultiHeadAttention."""

    def __init__(self, d_model: int, num_heads: int, d_ff: int, cross: bool) -> None:
        super().__init__()
        mha = dict(num_heads=num_heads, key_dim=d_model // num_heads, dropout=0.1)
        self.self_attention = keras.layers.MultiHeadAttention(**mha)
        self.cross_attention = keras.layers.MultiHeadAttention(**mha) if cross else None
        self.norms = [keras.layers.LayerNormalization() for _ in range(3)]
        self.hidden = keras.layers.Dense(d_ff, activation="relu")
        self.output_dense = keras.layers.Dense(d_model)
        self.dropout = keras.layers.Dropout(0.1)

    def call(self, x, memory=None, training=False):
        y = self.self_attention(
            x, x, x, use_causal_mask=self.cross_attention is not None, training=training
        )
        x = self.norms[0](x + self.dropout(y, training=training))
        if self.cross_attention is not None:
            y = self.cross_attention(x, memory, memory, training=training)
            x = self.norms[1](x + self.dropout(y, training=training))
        y = self.output_dense(self.dropout(self.hidden(x), training=training))
        return self.norms[2](x + self.dropout(y, training=training))


class KerasMHATransformer(keras.Model):
    """The TensorFlow tutorial's Transformer design (keras.layers.MultiHeadAttention), with
    key_dim = d_model / heads and one embedding shared by encoder, decoder and output."""

    def __init__(
        self, d_model: int, num_heads: int, d_ff: int, num_layers: int, vocab: int
    ) -> None:
        super().__init__()
        self.embed = KerasPositionalEmbedding(vocab, d_model)
        self.encoder = [KerasBlock(d_model, num_heads, d_ff, False) for _ in range(num_layers)]
        self.decoder = [KerasBlock(d_model, num_heads, d_ff, True) for _ in range(num_layers)]
        self.dropout = keras.layers.Dropout(0.1)

    def call(self, inputs, training=False):
        source, target = inputs
        memory = self.dropout(self.embed(source), training=training)
        for layer in self.encoder:
            memory = layer(memory, training=training)
        x = self.dropout(self.embed(target), training=training)
        for layer in self.decoder:
            x = layer(x, memory, training=training)
        matrix = tf.cast(self.embed.embedding.embeddings, x.dtype)
        return tf.cast(tf.tensordot(x, matrix, [[-1], [1]]), tf.float32)


def synthetic_batch(shape: dict) -> dict:
    rng = np.random.default_rng(0)

    def ids(length):
        return tf.constant(rng.integers(4, shape["vocab"], [shape["batch"], length]), tf.int32)

    target = ids(shape["target_len"] + 1)
    return {
        "source": ids(shape["source_len"]),
        "target_in": target[:, :-1],
        "target_out": target[:, 1:],
    }


def build(kind: str, shape: dict) -> keras.Model:
    if kind == "ours":
        return Transformer(
            source_vocab_size=shape["vocab"],
            num_layers=shape["num_layers"],
            d_model=shape["d_model"],
            num_heads=shape["num_heads"],
            d_ff=shape["d_ff"],
            dropout=0.1,
        )
    return KerasMHATransformer(
        shape["d_model"], shape["num_heads"], shape["d_ff"], shape["num_layers"], shape["vocab"]
    )


def step_seconds(
    model: keras.Model,
    batches: list[dict],
    jit_compile: bool,
    repetitions: int,
    steps_per_repetition: int,
) -> float:
    optimizer = keras.optimizers.Adam(1e-4, beta_2=0.98, epsilon=1e-9)
    step = tf.function(
        make_replica_step(model, optimizer, 0.1), jit_compile=jit_compile, reduce_retracing=True
    )

    def repetition():
        for index in range(steps_per_repetition):
            result = step(batches[index % len(batches)])
        float(result[0])

    return median_seconds(repetition, repetitions) / steps_per_repetition


def synthetic(args, fp32_peak: float) -> None:
    shape, flops = SMALL, train_flops_per_target_token(SMALL)
    batch = synthetic_batch(shape)
    tokens = shape["batch"] * shape["target_len"]
    print(
        f"\n== synthetic 'small' batch: {shape}\n   N = {matmul_params(shape) / 1e6:.2f} M "
        f"matmul weights, {flops / 1e6:.2f} MFLOP per target token (6N + attention); "
        f"jit_compile={args.jit_compile}, {args.repetitions} repetitions x "
        f"{args.steps} steps, median"
    )
    for precision in args.precisions.split(","):
        keras.mixed_precision.set_global_policy(precision)
        figures = {}
        for kind in ("ours", "keras_mha"):
            keras.utils.set_random_seed(0)
            seconds = step_seconds(
                build(kind, shape), [batch], args.jit_compile, args.repetitions, args.steps
            )
            figures[kind] = tokens / seconds
            mfu = 100 * figures[kind] * flops / (fp32_peak * 1e9)
            print(
                f"RESULT {precision:15s} {kind:10s} {figures[kind]:8.0f} target tok/s  "
                f"step {seconds * 1e3:6.1f} ms  MFU {mfu:5.1f} % of the fp32 peak",
                flush=True,
            )
        ratio = figures["ours"] / figures["keras_mha"]
        print(f"RESULT {precision:15s} ratio ours/keras_mha {ratio:.2f}")
    keras.mixed_precision.set_global_policy("float32")


def multi30k(args) -> None:
    import data_pipeline
    from configs import multi30k_de_en
    from training.trainer import build_model, load_data

    config = multi30k_de_en.get_config()
    precision = args.precisions.split(",")[-1]
    config.train.precision = precision
    with tempfile.TemporaryDirectory() as workdir:
        pairs, tokenizer = load_data(config, workdir, [])
        batches_ds = data_pipeline.make_batches(
            pairs["train"],
            tokenizer,
            max_length=config.data.max_length,
            tokens_per_batch=config.data.tokens_per_batch,
            shuffle=True,
            seed=0,
            repeat=True,
        )
        batches = list(batches_ds.take(args.steps * 4).as_numpy_iterator())
    computed = sum(b["target_out"].size for b in batches)
    useful = sum(int((b["target_out"] != 0).sum()) for b in batches)
    keras.mixed_precision.set_global_policy(precision)
    keras.utils.set_random_seed(0)
    model = build_model(config, tokenizer.vocab_size)
    tensors = [{k: tf.constant(v) for k, v in b.items()} for b in batches]
    seconds = step_seconds(model, tensors, args.jit_compile, args.repetitions, len(tensors))
    print(
        f"\n== Multi30k de-en batches of configs/multi30k_de_en.py ({precision}, "
        f"tokens_per_batch {config.data.tokens_per_batch}, {len(batches)} batches)"
    )
    print(
        f"RESULT multi30k useful target tok/s {useful / len(batches) / seconds:.0f}; "
        f"padding {100 * (1 - useful / computed):.1f} % of computed target positions; "
        f"step {seconds * 1e3:.0f} ms"
    )
    keras.mixed_precision.set_global_policy("float32")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--precisions", default="float32,mixed_bfloat16")
    parser.add_argument("--repetitions", type=int, default=5)
    parser.add_argument("--steps", type=int, default=5, help="steps per timed repetition")
    parser.add_argument("--jit_compile", action="store_true")
    parser.add_argument("--multi30k", action="store_true")
    args = parser.parse_args()
    print(
        f"TensorFlow {tf.__version__}, Keras {keras.__version__}, "
        f"{os.cpu_count()} CPU cores, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}"
    )
    fp32_peak, bf16_peak = matmul_peak(tf.float32), matmul_peak(tf.bfloat16)
    print(
        f"RESULT matmul peak (2048^2, tf.function): fp32 {fp32_peak:.0f} GFLOP/s, "
        f"bf16 {bf16_peak:.0f} GFLOP/s"
    )
    synthetic(args, fp32_peak)
    if args.multi30k:
        multi30k(args)


if __name__ == "__main__":
    main()
