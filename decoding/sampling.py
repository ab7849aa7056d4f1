"""Random sampling: each token drawn from the model's distribution, reshaped by a temperature
and cut to its top-k tokens or its top-p mass, seeded per sentence; XLA-compatible.

Sampled translations are what back-translation wants (Edunov et al., 2018: sampled sources
beat beam search's for training). A sentence's draw depends only on its own seed, its source
and the model, never on the batch it is decoded in: each row's random numbers are a hash of its
seed, the step and the token id (murmur3's 32-bit finalizer, chained), so a seeded request is
reproducible whatever batching a translator or a server picks, and XLA needs no random state.

Example:
    >>> sampling = Sampling(top_k=10, temperature=0.8)
    >>> ids = sample_search(model, source_ids, SearchOptions(), sampling, seeds=tf.constant([0, 1]))
"""

from __future__ import annotations

import tensorflow as tf

from common.translation import Sampling
from decoding.ensemble import Ensemble
from decoding.greedy import token_by_token_search
from decoding.options import SearchOptions
from transformer.model import Transformer

_MASK32 = 0xFFFFFFFF


def sample_search(
    model: Transformer | Ensemble,
    source_ids: tf.Tensor,
    options: SearchOptions,
    sampling: Sampling,
    seeds: tf.Tensor,
    dynamic_shapes: bool = False,
    target_prefix: tf.Tensor | None = None,
) -> tf.Tensor:
    """One sampled translation a sentence (``options``' length limits and special ids; its beam
    size and length penalty are not used).

    Args:
        model: a built Transformer, or an Ensemble (its mean distribution is sampled).
        source_ids: ``(batch, source_len)`` int32 ids, padded at the end.
        options: as :func:`decoding.greedy.greedy_search`'s.
        sampling: temperature, top-k and top-p (:class:`common.translation.Sampling`; its
            ``seed`` is for the caller to derive ``seeds`` from).
        seeds: ``(batch,)`` int32: each sentence's seed; the same seed, source and model give
            the same translation, in any batch.
        dynamic_shapes, target_prefix: as :func:`decoding.greedy.greedy_search`'s (the
            sampling goes on from the prefix).

    Returns:
        ``(batch, out_len)`` int32 ids, as :mod:`decoding.greedy` describes them.
    """
    seeds = tf.convert_to_tensor(seeds, tf.int32)
    return token_by_token_search(
        model,
        source_ids,
        options,
        lambda scores, step: draw(scores, step, seeds, sampling),
        dynamic_shapes,
        target_prefix,
    )


def draw(scores: tf.Tensor, step: tf.Tensor, seeds: tf.Tensor, sampling: Sampling) -> tf.Tensor:
    """Each row's token drawn from ``softmax(scores / temperature)`` cut to its top-k and top-p:
    ``(vocab_size, batch)`` scores (vocabulary-major, as the searches' steps give them) ->
    ``(batch,)`` int32 ids, the Gumbel-max way (``argmax(logits + Gumbel noise)``).

    Example:
        >>> draw(tf.math.log([[0.9], [0.1]]), tf.constant(0), tf.constant([3]), Sampling())
        <tf.Tensor: shape=(1,), dtype=int32, numpy=array([0], dtype=int32)>   # 9 times in 10
    """
    logits = _cut(tf.transpose(scores) / sampling.temperature, sampling)  # (batch, vocab_size)
    uniform = hashed_uniform(seeds, step, tf.shape(logits)[1])
    gumbel = -tf.math.log(-tf.math.log(uniform))
    return tf.argmax(logits + gumbel, axis=1, output_type=tf.int32)


def _cut(logits: tf.Tensor, sampling: Sampling) -> tf.Tensor:
    """``(batch, vocab_size)`` logits with the tokens outside the top-k and the top-p at -inf."""
    minus_inf = tf.constant(-float("inf"), logits.dtype)
    if sampling.top_k:
        kth_best = tf.math.top_k(logits, sampling.top_k).values[:, -1:]  # (batch, 1)
        logits = tf.where(logits < kth_best, minus_inf, logits)
    if sampling.top_p < 1.0:
        ordered = tf.sort(logits, axis=1, direction="DESCENDING")  # (batch, vocab_size)
        # The mass of the tokens before each one: a token is kept while it is below top_p.
        before = tf.math.cumsum(tf.nn.softmax(ordered, axis=1), axis=1, exclusive=True)
        kept = tf.reduce_sum(tf.cast(before < sampling.top_p, tf.int32), axis=1)  # >= 1
        threshold = tf.gather(ordered, kept - 1, batch_dims=1)[:, tf.newaxis]  # (batch, 1)
        logits = tf.where(logits < threshold, minus_inf, logits)
    return logits


def hashed_uniform(seeds: tf.Tensor, step: tf.Tensor, width: tf.Tensor) -> tf.Tensor:
    """``(batch, width)`` float32 numbers in (0, 1), a pure function of each row's seed, the
    step and the column: murmur3's finalizer chained over the three (in int64, kept to 32 bits).

    Example:
        >>> hashed_uniform(tf.constant([7, 7]), tf.constant(3), 4)[0]   # rows of one seed agree
    """
    row = _mix32(tf.cast(seeds, tf.int64)[:, tf.newaxis])  # (batch, 1)
    row = _mix32(_xor(row, tf.cast(step, tf.int64) + 0x9E3779B9))
    column = tf.range(tf.cast(width, tf.int64), dtype=tf.int64)[tf.newaxis, :]  # (1, width)
    bits = _mix32(_xor(row, _mix32(column + 0x7F4A7C15)))  # (batch, width): 32 random bits each
    # The top 23 bits, plus a half: (k + 0.5) / 2**23 is exact in float32 and never 0 or 1.
    top23 = tf.bitwise.right_shift(bits, tf.constant(9, tf.int64))
    return (tf.cast(top23, tf.float32) + 0.5) / float(1 << 23)


def _mix32(x: tf.Tensor) -> tf.Tensor:
    """murmur3's 32-bit finalizer on int64 tensors holding 32-bit values (a bijection)."""
    x = tf.bitwise.bitwise_and(x, _MASK32)
    x = _xor(x, _shift(x, 16))
    x = _times32(x, 0x85EBCA6B)
    x = _xor(x, _shift(x, 13))
    x = _times32(x, 0xC2B2AE35)
    return _xor(x, _shift(x, 16))


def _xor(x: tf.Tensor, y: tf.Tensor) -> tf.Tensor:
    return tf.bitwise.bitwise_xor(x, y)


def _shift(x: tf.Tensor, bits: int) -> tf.Tensor:
    return tf.bitwise.right_shift(x, tf.constant(bits, tf.int64))


def _times32(x: tf.Tensor, factor: int) -> tf.Tensor:
    """``x * factor`` modulo 2**32 for 32-bit values in int64, without overflowing it: the
    factor's two 16-bit halves multiplied apart (each product under 2**48)."""
    low = x * (factor & 0xFFFF)
    high = tf.bitwise.left_shift(
        tf.bitwise.bitwise_and(x * (factor >> 16), 0xFFFF), tf.constant(16, tf.int64)
    )
    return tf.bitwise.bitwise_and(low + high, _MASK32)
