"""Tiny models whose random weights still give varied outputs, and a padded batch of sources.

A random tiny model's logits are nearly flat, so its outputs barely depend on the source. The
models here scale the output projection (peaked, source-dependent distributions) and shift the
EOS logit: some sentences end with EOS, others reach their length limit.
"""

import numpy as np
import pytest
import tensorflow as tf

from decoding import EOS_ID
from transformer.model import Transformer

SOURCE_VOCAB, TARGET_VOCAB = 40, 30
SOURCE_LENGTHS = [9, 3, 5, 7, 2, 9]


@pytest.fixture
def make_model():
    """Returns ``make(eos_bias=-2.0, scale=6.0, **transformer_overrides) -> Transformer``."""

    def make(eos_bias: float = -2.0, scale: float = 6.0, **overrides) -> Transformer:
        args = dict(
            source_vocab_size=SOURCE_VOCAB,
            target_vocab_size=TARGET_VOCAB,
            shared_embeddings="none",
            num_layers=2,
            d_model=16,
            num_heads=4,
            d_ff=32,
            dropout=0.0,
        )
        model = Transformer(**{**args, **overrides})
        model((tf.fill([1, 3], 5), tf.fill([1, 2], 5)))  # builds the weights
        kernel, bias = model.output_projection.get_weights()
        bias[EOS_ID] += eos_bias
        model.output_projection.set_weights([kernel * scale, bias])
        return model

    return make


@pytest.fixture
def sources() -> tf.Tensor:
    """``(6, 9)`` source ids 4..39, padded with 0 to the lengths in ``SOURCE_LENGTHS``."""
    ids = np.random.default_rng(0).integers(4, SOURCE_VOCAB, size=(6, 9))
    for row, length in enumerate(SOURCE_LENGTHS):
        ids[row, length:] = 0
    return tf.constant(ids, tf.int32)


@pytest.fixture
def count_decode_steps(monkeypatch):
    """Returns ``start(model) -> calls``: ``len(calls)`` counts the model's eager decode steps."""

    def start(model: Transformer) -> list:
        calls, decode_step = [], model.decode_step

        def counting_decode_step(*args):
            calls.append(args[1])
            return decode_step(*args)

        monkeypatch.setattr(model, "decode_step", counting_decode_step)
        return calls

    return start
