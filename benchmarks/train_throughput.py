"""Training throughput (target tokens/s, MFU) of our Transformer against a Keras-MHA model.

    .venv/bin/python benchmarks/train_throughput.py [--precisions=float32,mixed_bfloat16]
        [--repetitions=5] [--steps=5] [--jit_compile] [--size=small] [--peers=tf,torch]
        [--multi30k]    # also real Multi30k batches of configs/multi30k_de_en.py (needs data)

Prints, in one run: the fp32/bf16 matmul peak measured here (2048^2 matmuls); target tokens/s
and model-FLOPs utilisation (MFU, against that fp32 peak) of our model and of the Keras-MHA model
(the TensorFlow tutorial's design around ``keras.layers.MultiHeadAttention``, written below) on
the synthetic batch of ``--size`` (small: d 256, 4 heads, d_ff 1024, 3+3 layers, vocab 8000,
batch 128 x 24/24 tokens, no padding), in each precision, with the ratio ours/Keras. Both models
train with the same step (label-smoothed loss, Adam) in ``tf.function``; each figure is the
median of ``--repetitions`` repetitions of ``--steps`` steps after one untimed repetition.

With ``--peers`` it runs the peers' training scripts (``../shared/peers``: ``tf_train.py``, the
tutorial model with its own step; ``torch_train.py``, PyTorch ``nn.Transformer``) on the same
size, precision and machine, and prints our ratio to each. With ``--multi30k``, useful
(non-padding) target tokens/s and the padding share on real batches.
"""

from __future__ import annotations

import tempfile

import harness
import keras
import tensorflow as tf
from absl import flags

from cli.errors import run_main
from transformer import positional_encoding

_PRECISIONS = flags.DEFINE_list(
    "precisions", ["float32", "mixed_bfloat16"], "Keras precision policies to time, in turn."
)
_REPETITIONS = flags.DEFINE_integer("repetitions", 5, "Timed repetitions (median).")
_STEPS = flags.DEFINE_integer("steps", 5, "Steps per timed repetition.")
_JIT_COMPILE = flags.DEFINE_boolean("jit_compile", False, "Compile the whole step with XLA.")
_MULTI30K = flags.DEFINE_boolean("multi30k", False, "Also time real Multi30k batches.")
_SIZE = harness.define_size_flag()
_PEERS = harness.define_peers_flag(["tf", "torch"], [])

# (precision, jit_compile) -> the peers' --mode for the same training.
PEER_MODES = {
    "tf": {("float32", False): "fp32", ("float32", True): "xla", ("mixed_bfloat16", False): "bf16"},
    "torch": {("float32", False): "eager", ("mixed_bfloat16", False): "bf16"},
}


def matmul_peak(dtype: tf.DType) -> float:
    """GFLOP/s of chained 2048x2048 matmuls in tf.function (median of 5 x 10)."""
    a = tf.random.normal([2048, 2048], dtype=tf.float32)
    a = tf.cast(a, dtype) * tf.cast(0.02, dtype)

    @tf.function
    def chain(x):
        for _ in range(10):
            x = tf.matmul(x, a)
        return x

    seconds = harness.median_seconds(lambda: chain(a).numpy(), 5)
    return 10 * 2 * 2048**3 / seconds / 1e9


class KerasPositionalEmbedding(keras.layers.Layer):
    """Scaled embedding plus sinusoidal positions."""

    def __init__(self, vocab: int, d_model: int) -> None:
        super().__init__()
        self.d_model = d_model
        self.embedding = keras.layers.Embedding(vocab, d_model)

    def call(self, ids: tf.Tensor) -> tf.Tensor:
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

    def call(self, x: tf.Tensor, memory: tf.Tensor | None = None, training: bool = False):
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

    def __init__(self, shape: harness.Shape) -> None:
        super().__init__()
        d_model, heads, d_ff = shape.d_model, shape.num_heads, shape.d_ff
        self.embed = KerasPositionalEmbedding(shape.vocab, d_model)
        self.encoder = [KerasBlock(d_model, heads, d_ff, False) for _ in range(shape.num_layers)]
        self.decoder = [KerasBlock(d_model, heads, d_ff, True) for _ in range(shape.num_layers)]
        self.dropout = keras.layers.Dropout(0.1)

    def call(self, inputs: tuple[tf.Tensor, tf.Tensor], training: bool = False) -> tf.Tensor:
        source, target = inputs
        memory = self.dropout(self.embed(source), training=training)
        for layer in self.encoder:
            memory = layer(memory, training=training)
        x = self.dropout(self.embed(target), training=training)
        for layer in self.decoder:
            x = layer(x, memory, training=training)
        matrix = tf.cast(self.embed.embedding.embeddings, x.dtype)
        return tf.cast(tf.tensordot(x, matrix, [[-1], [1]]), tf.float32)


def step_seconds(model: keras.Model, batches: list[dict], steps_per_repetition: int) -> float:
    """Median seconds per training step, over ``--repetitions`` after one untimed repetition."""
    step = harness.make_train_step(model, _JIT_COMPILE.value)

    def repetition() -> None:
        for index in range(steps_per_repetition):
            result = step(batches[index % len(batches)])
        float(result[0])

    return harness.median_seconds(repetition, _REPETITIONS.value) / steps_per_repetition


def run_peers(shape: harness.Shape, precision: str, fp32_peak: float) -> dict[str, float]:
    """``{peer: target tok/s}`` of the peers' training scripts run now in ``precision``."""
    figures = {}
    scripts = {"tf": ("tf_train.py", "tensorflow"), "torch": ("torch_train.py", "torch")}
    for peer in _PEERS.value:
        mode = PEER_MODES[peer].get((precision, _JIT_COMPILE.value))
        script, module = scripts[peer]
        if mode is None:
            print(f"peer {script}: no mode for {precision} with jit_compile={_JIT_COMPILE.value}")
            continue
        arguments = ["--size", shape.name, "--mode", mode, "--steps", str(_STEPS.value)]
        arguments += ["--reps", str(_REPETITIONS.value), "--peak", f"{fp32_peak:.0f}"]
        results = harness.run_peer(script, arguments, module, shape.name)
        tag = f"{peer} {shape.name} {mode}"  # the peer's RESULT line, e.g. "tf small fp32"
        if results and tag in results:
            figures[f"{peer} {mode}"] = results[tag]
    return figures


def synthetic(shape: harness.Shape, fp32_peak: float) -> None:
    """Target tokens/s and MFU of ours and of the Keras-MHA model (and the peers) per precision."""
    flops = shape.train_flops_per_target_token()
    batch = harness.synthetic_batch(shape)
    tokens = shape.batch * shape.target_len
    harness.print_config(
        "\nsynthetic batch",
        {
            "shape": shape.describe(),
            "batch": f"{shape.batch} x {shape.source_len}/{shape.target_len} tokens",
            "N": f"{shape.matmul_params() / 1e6:.2f} M matmul weights",
            "FLOPs": f"{flops / 1e6:.2f} M per target token (6N + attention)",
        },
    )
    for precision in _PRECISIONS.value:
        keras.mixed_precision.set_global_policy(precision)
        figures = {}
        for kind in ("ours", "keras_mha"):
            keras.utils.set_random_seed(0)
            model = (
                harness.build_transformer(shape) if kind == "ours" else KerasMHATransformer(shape)
            )
            seconds = step_seconds(model, [batch], _STEPS.value)
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
        for peer, speed in run_peers(shape, precision, fp32_peak).items():
            print(f"RESULT {precision:15s} ratio ours/peer {peer} {figures['ours'] / speed:.2f}")
    keras.mixed_precision.set_global_policy("float32")


def multi30k() -> None:
    """Useful target tokens/s on the De->En config's real batches, made as training makes them."""
    from configs import multi30k_de_en
    from rundir.model import build_model
    from training.data import load_data, training_batches

    config = multi30k_de_en.get_config()
    precision = _PRECISIONS.value[-1]
    config.train.precision = precision
    with tempfile.TemporaryDirectory() as workdir:
        pairs, tokenizer = load_data(config, workdir, [])
        batches_ds = training_batches(config, pairs[config.data.train_split], tokenizer)
        batches = list(batches_ds.take(_STEPS.value * 4).as_numpy_iterator())
    computed = sum(b["target_out"].size for b in batches)
    useful = sum(int((b["target_out"] != 0).sum()) for b in batches)
    keras.mixed_precision.set_global_policy(precision)
    keras.utils.set_random_seed(0)
    model = build_model(config, tokenizer.vocab_size)
    tensors = [{k: tf.constant(v) for k, v in b.items()} for b in batches]
    seconds = step_seconds(model, tensors, len(tensors))
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


def main(argv: list[str]) -> None:
    del argv
    harness.start(__doc__)
    fp32_peak, bf16_peak = matmul_peak(tf.float32), matmul_peak(tf.bfloat16)
    print(
        f"RESULT matmul peak (2048^2, tf.function): fp32 {fp32_peak:.0f} GFLOP/s, "
        f"bf16 {bf16_peak:.0f} GFLOP/s"
    )
    synthetic(harness.SHAPES[_SIZE.value], fp32_peak)
    if _MULTI30K.value:
        multi30k()


if __name__ == "__main__":
    run_main(main)
