"""What every search shares: output length limits, tokens never generated, the top-k of allowed
tokens, trimming. Scores are vocabulary-major, ``(vocab_size, rows)``, as
``Transformer.decode_step`` gives them.

Length limits are those of :class:`~decoding.options.SearchOptions`, so a sentence decodes the
same alone or padded inside a batch of longer ones. Under XLA searches allocate their key/value
cache for the limit of the *padded* source length (a static shape, never below any sentence's
limit); with dynamic shapes the cache grows by one position a step. Searches stop as soon as
every sentence has finished.

Example:
    >>> limits, buffer_length = output_length_limits(
    ...     tf.constant([[5, 6, 7, 0], [5, 6, 7, 8]]), SearchOptions(pad_id=0))
    >>> limits.numpy(), buffer_length
    (array([14, 16], dtype=int32), 16)
"""

from __future__ import annotations

import math
from typing import NamedTuple

import tensorflow as tf

from decoding.options import SearchOptions


def _length_limit(
    source_length: tf.Tensor, max_length: int | None, ratio: float, offset: float
) -> tf.Tensor:
    limit = tf.round(ratio * tf.cast(source_length, tf.float32) + offset)
    limit = tf.maximum(tf.cast(limit, tf.int32), 1)
    return limit if max_length is None else tf.minimum(limit, max_length)


def output_length_limits(
    source_ids: tf.Tensor, options: SearchOptions
) -> tuple[tf.Tensor, int | tf.Tensor]:
    """Returns each sentence's output length limit and the cache length a search allocates.

    Args:
        source_ids: ``(batch, source_len)`` int32 ids, padded with ``pad_id`` at the end.

    Returns:
        ``limits``, int32 ``(batch,)``, and ``buffer_length``, the limit of the padded
        ``source_len`` (a Python int when ``source_len`` is static), never below any limit.
    """
    max_length, ratio, offset = (
        options.max_length,
        options.max_length_ratio,
        options.max_length_offset,
    )
    padded_length = source_ids.shape[1]
    if padded_length is None:
        buffer_length = _length_limit(tf.shape(source_ids)[1], max_length, ratio, offset)
    else:
        buffer_length = max(1, round(ratio * padded_length + offset))
        buffer_length = buffer_length if max_length is None else min(buffer_length, max_length)
    real_lengths = tf.reduce_sum(tf.cast(source_ids != options.pad_id, tf.int32), axis=1)
    limits = _length_limit(real_lengths, max_length, ratio, offset)
    return tf.minimum(limits, buffer_length), buffer_length


def start_search(
    model,
    source_ids: tf.Tensor,
    options: SearchOptions,
    growing_cache: bool = False,
    extra_lengths: tf.Tensor | None = None,
    extra_bound: tf.Tensor | int = 0,
) -> tuple[tf.Tensor, tf.Tensor, int | tf.Tensor, dict]:
    """What every cached search does first: the length limits, the encoder pass and the cache.

    ``growing_cache``: a self-attention cache that grows by one position per step (dynamic
    shapes) instead of buffers of ``buffer_length`` positions (static shapes, for XLA).
    ``extra_lengths``: int32 ``(batch,)`` tokens each sentence may write beyond its limit (a
    constrained search's terms), at most ``extra_bound`` (from shapes only: a constant for
    XLA, which the buffers grow by).

    Returns:
        ``(source_ids as int32, limits, buffer_length, cache)``; see
        :func:`output_length_limits` and ``Transformer.init_cache``.
    """
    source_ids = tf.convert_to_tensor(source_ids, tf.int32)
    limits, buffer_length = output_length_limits(source_ids, options)
    if extra_lengths is not None:
        limits += extra_lengths
        buffer_length += extra_bound
    memory, memory_mask = model.encode(source_ids)
    cache = model.init_cache(memory, memory_mask, None if growing_cache else buffer_length)
    return source_ids, limits, buffer_length, cache


def growing_cache_shapes(self_cache_shapes: list, rows_change: bool = False) -> list:
    """``tf.while_loop`` shape invariants of a growing self-attention cache (a nest of
    ``(rows, heads, positions, depth)`` shapes): the positions grow every step, and with
    ``rows_change`` the rows change too (sentences leave a beam search)."""

    def invariant(shape: tf.TensorShape) -> tf.TensorShape:
        return tf.TensorShape([None if rows_change else shape[0], shape[1], None, shape[3]])

    return tf.nest.map_structure(invariant, self_cache_shapes)


def forbid_tokens(scores: tf.Tensor, token_ids: list[int]) -> tf.Tensor:
    """Sets ``scores[id, :]`` of vocabulary-major ``(vocab_size, rows)`` scores to -inf for each
    id: a search never generates padding or BOS.

    Padding is also what fills a finished output, so generating it would make outputs ambiguous.
    """
    forbidden = _is_forbidden(tf.shape(scores)[0], token_ids)[:, tf.newaxis]  # (V, 1)
    return tf.where(forbidden, tf.constant(-float("inf"), scores.dtype), scores)


def _is_forbidden(vocab_size: int | tf.Tensor, token_ids: list[int]) -> tf.Tensor:
    """``(vocab_size,)`` bool, True at each of ``token_ids``."""
    return tf.reduce_any(tf.range(vocab_size)[:, tf.newaxis] == token_ids, axis=1)


def top_k_allowed(
    scores: tf.Tensor, k: int, forbidden_ids: list[int]
) -> tuple[tf.Tensor, tf.Tensor]:
    """Each row's ``k`` best allowed tokens of vocabulary-major ``(vocab_size, rows)`` scores:
    ``tf.math.top_k(tf.transpose(forbid_tokens(scores, forbidden_ids)), k)`` without a top-k
    over every score (about 2.5x cheaper at 256 rows on a CPU).

    One pass over the scores finds each block of vocabulary's best score; the ``k`` best allowed
    tokens lie in the ``k + len(forbidden_ids)`` best blocks (each better block holds a better
    allowed or a forbidden token), and only those are searched. Ties go to the lower id, as in
    ``tf.math.top_k``.

    Scores of a vocabulary of a size known only when run (a shortlist's, in the graph) take
    the one top-k.

    Returns:
        ``(values, ids)``, each ``(rows, k)``, best first.
    """
    vocab_size = scores.shape[0]
    if vocab_size is None:
        return tf.math.top_k(tf.transpose(forbid_tokens(scores, forbidden_ids)), k)
    block = max(size for size in range(1, math.isqrt(vocab_size) + 1) if vocab_size % size == 0)
    num_blocks, searched = vocab_size // block, min(k + len(forbidden_ids), vocab_size // block)
    rows = tf.shape(scores)[1]
    block_best = tf.reduce_max(tf.reshape(scores, [num_blocks, block, rows]), axis=1)
    _, best_blocks = tf.math.top_k(tf.transpose(block_best), searched)  # (rows, searched)
    best_blocks = tf.sort(best_blocks, axis=-1)  # in id order
    ids = best_blocks[:, :, tf.newaxis] * block + tf.range(block)  # (rows, searched, block)
    row_of_ids = tf.broadcast_to(tf.range(rows)[:, tf.newaxis, tf.newaxis], tf.shape(ids))
    candidates = tf.gather_nd(scores, tf.stack([ids, row_of_ids], axis=-1))  # like ids
    is_forbidden = tf.gather(_is_forbidden(vocab_size, forbidden_ids), ids)
    candidates = tf.where(is_forbidden, tf.constant(-float("inf"), scores.dtype), candidates)
    values, positions = tf.math.top_k(tf.reshape(candidates, [rows, searched * block]), k)
    return values, tf.gather(tf.reshape(ids, [rows, searched * block]), positions, batch_dims=1)


class TargetPrefix(NamedTuple):
    """Each sentence's forced first output tokens, as a search's loop reads them. A prefix longer
    than its sentence's output length limit is cut there (the output is the prefix's start), so
    a sentence decodes the same in any batch.

    ids: int32 ``(batch, width + 1)``: the prefix, padded (one more column of padding, so that
        the column of any step past the prefix can be read).
    lengths: int32 ``(batch,)``: each prefix's tokens.
    """

    ids: tf.Tensor
    lengths: tf.Tensor

    @classmethod
    def of(cls, target_prefix: tf.Tensor, pad_id: int) -> TargetPrefix:
        """``(batch, prefix_len)`` ids padded with ``pad_id`` (no BOS, no EOS, no id a search
        never writes); a row of padding only: no prefix."""
        ids = tf.convert_to_tensor(target_prefix, tf.int32)
        lengths = tf.reduce_sum(tf.cast(ids != pad_id, tf.int32), axis=1)
        return cls(tf.pad(ids, [[0, 0], [0, 1]], constant_values=pad_id), lengths)

    def force(self, scores: tf.Tensor, step: tf.Tensor, rows_per_sentence: int = 1) -> tf.Tensor:
        """Vocabulary-major ``(vocab_size, rows)`` scores with every token but the prefix's at
        -inf in the rows of sentences still inside their prefix at ``step`` (each sentence's
        ``rows_per_sentence`` consecutive rows: a beam's hypotheses)."""
        column = tf.minimum(step, tf.shape(self.ids)[1] - 1)
        tokens = tf.repeat(self.ids[:, column], rows_per_sentence)  # (rows,)
        inside = tf.repeat(step < self.lengths, rows_per_sentence)  # (rows,)
        other = tf.range(tf.shape(scores)[0])[:, tf.newaxis] != tokens[tf.newaxis, :]
        return tf.where(
            inside[tf.newaxis, :] & other, tf.constant(-float("inf"), scores.dtype), scores
        )


def trim_output(ids: tf.Tensor, pad_id: int) -> tf.Tensor:
    """Drops the trailing columns that hold only padding: ``(batch, n)`` -> ``(batch, out_len)``.

    Searches never generate ``pad_id``, so the longest row has ``out_len`` non-padding ids.
    """
    out_len = tf.reduce_max(tf.reduce_sum(tf.cast(ids != pad_id, tf.int32), axis=1))
    return ids[:, :out_len]
