"""Tiny models whose random weights still give varied outputs, and a padded batch of sources.

A random tiny model's logits are nearly flat, so its outputs barely depend on the source. The
models here scale the output projection (peaked, source-dependent distributions) and shift the
EOS logit: some sentences end with EOS, others reach their length limit.
"""

import numpy as np
import pytest
import tensorflow as tf

from common.special_tokens import BOS_ID, EOS_ID, PAD_ID
from decoding.beam import gnmt_length_penalty
from transformer.model import Transformer
from transformer.settings import TransformerConfig

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
        model = Transformer(TransformerConfig(**{**args, **overrides}))
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

        def counting_decode_step(*args, **kwargs):
            calls.append(args[1])
            return decode_step(*args, **kwargs)

        monkeypatch.setattr(model, "decode_step", counting_decode_step)
        return calls

    return start


def _mean_log_probs(models, sources, ids) -> np.ndarray:
    """``log(mean_i softmax(model_i.decode(BOS + ids[:, :-1])))``, ``(batch, len, V)``:
    teacher-forced, one full pass per model, no cache (one model: its log-softmax)."""
    ids = np.asarray(ids)
    target_in = tf.constant(np.concatenate([np.full([len(ids), 1], BOS_ID), ids[:, :-1]], axis=1))
    log_probs = [
        tf.nn.log_softmax(model.decode(target_in, *model.encode(sources))) for model in models
    ]
    return (tf.reduce_logsumexp(tf.stack(log_probs), axis=0) - np.log(len(models))).numpy()


def _teacher_forced_scores(models, sources, ids, alpha: float = 0.6) -> np.ndarray:
    """``sum(log p) / lp(length)`` of each row of ``ids`` under :func:`_mean_log_probs`."""
    ids = np.asarray(ids)
    token_log_probs = np.take_along_axis(
        _mean_log_probs(models, sources, ids), ids[..., np.newaxis], -1
    )[..., 0]
    total = np.sum(np.where(ids != PAD_ID, token_log_probs, 0.0), axis=1)
    return total / gnmt_length_penalty(np.sum(ids != PAD_ID, axis=1), alpha).numpy()


@pytest.fixture
def mean_log_probs():
    """Returns ``mean(models, sources, ids) -> (batch, len, V)`` log-probabilities of the mean of
    the models' teacher-forced distributions."""
    return _mean_log_probs


@pytest.fixture
def teacher_forced_scores():
    """Returns ``score(models, sources, ids, alpha=0.6) -> (batch,)``: each row's
    ``sum(log p) / lp(length)`` under the models' mean distribution, without a cache."""
    return _teacher_forced_scores
