"""Greedy search with the model's key/value cache, XLA-compatible.

Output convention (shared by every search in :mod:`decoding`): ``(batch, out_len)`` int32 ids
*without* BOS; each row ends with its EOS *included*, unless it reached its length limit first
(see :mod:`decoding.common`); positions after the end hold ``pad_id``; ``out_len`` is the longest
row. ``eos_id=None`` means no end-of-sentence token: every sentence decodes to its length limit.
Padding and BOS are never generated. Options (lengths, special ids) are a
:class:`~decoding.options.SearchOptions`; greedy search ignores its beam size and length penalty.
"""

from __future__ import annotations

from collections.abc import Callable

import tensorflow as tf

from decoding.common import (
    TargetPrefix,
    forbid_tokens,
    growing_cache_shapes,
    output_length_limits,
    start_search,
    trim_output,
)
from decoding.ensemble import Ensemble
from decoding.options import SearchOptions
from transformer.model import Transformer


def greedy_search(
    model: Transformer | Ensemble,
    source_ids: tf.Tensor,
    options: SearchOptions = SearchOptions(),
    dynamic_shapes: bool = False,
    target_prefix: tf.Tensor | None = None,
) -> tf.Tensor:
    """Decodes the most likely next token at each step, one cached decoder step per position.

    Works eagerly and inside ``tf.function`` (also with ``jit_compile=True``): the loop state has
    fixed shapes and the loop stops once every sentence has emitted EOS or reached its limit.

    Args:
        model: a built :class:`~transformer.model.Transformer`, or an
            :class:`~decoding.ensemble.Ensemble` of them.
        source_ids: ``(batch, source_len)`` int32 ids, padded with ``options.pad_id`` at the end.
        options: length limits and special ids (:class:`~decoding.options.SearchOptions`).
        dynamic_shapes: grow the self-attention cache by one position a step instead of
            allocating it for the length limit (the same results; not under XLA).
        target_prefix: ``(batch, prefix_len)`` int32 ids each output starts with, padded with
            ``options.pad_id`` (:class:`~decoding.common.TargetPrefix`); the search goes on
            from there. None: no prefix.

    Returns:
        ``(batch, out_len)`` int32 ids, as described in the module docstring.

    Example:
        >>> ids = greedy_search(model, tf.constant([[5, 6, 7, 0], [8, 9, 10, 11]]),
        ...                     SearchOptions(max_length=8))
        >>> ids.shape  # (2, out_len), out_len <= 8: the longest output, EOS included
        TensorShape([2, 8])
    """

    def most_likely(logits: tf.Tensor, step: tf.Tensor) -> tf.Tensor:
        del step
        return tf.argmax(logits, axis=0, output_type=tf.int32)

    return token_by_token_search(
        model, source_ids, options, most_likely, dynamic_shapes, target_prefix
    )


# Chooses each sentence's next token: (vocab_size, batch) scores, the step -> (batch,) int32 ids.
ChooseToken = Callable[[tf.Tensor, tf.Tensor], tf.Tensor]


def token_by_token_search(
    model: Transformer | Ensemble,
    source_ids: tf.Tensor,
    options: SearchOptions,
    choose: ChooseToken,
    dynamic_shapes: bool = False,
    target_prefix: tf.Tensor | None = None,
) -> tf.Tensor:
    """One hypothesis a sentence, one cached decoder step a token, each token picked by
    ``choose`` from the step's scores (the model's logits, or an ensemble's log-probabilities;
    PAD, BOS and ``options.forbidden_ids`` at -inf): greedy search's loop, and random
    sampling's (:mod:`decoding.sampling`). Same arguments and output as :func:`greedy_search`.

    Example:
        >>> first = lambda scores, step: tf.fill([tf.shape(scores)[1]], 5)  # always id 5
        >>> token_by_token_search(model, tf.constant([[5, 6, 0]]), SearchOptions(), first)
    """
    bos_id, eos_id, pad_id = options.bos_id, options.eos_id, options.pad_id
    source_ids, limits, buffer_length, cache = start_search(
        model, source_ids, options, growing_cache=dynamic_shapes
    )
    batch = tf.shape(source_ids)[0]
    columns = tf.range(buffer_length)
    prefix = None if target_prefix is None else TargetPrefix.of(target_prefix, pad_id)

    def body(step, tokens, self_cache, output, finished):
        logits, next_cache = model.decode_step(
            tokens, step, {**cache, "self": self_cache}, growing=dynamic_shapes
        )  # (vocab_size, batch)
        logits = forbid_tokens(logits, options.never_written)
        if prefix is not None:
            logits = prefix.force(logits, step)
        tokens = tf.where(finished, pad_id, choose(logits, step))
        output = tf.where(columns == step, tokens[:, tf.newaxis], output)  # writes column `step`
        finished |= step + 1 >= limits
        if eos_id is not None:
            finished |= tokens == eos_id
        return step + 1, tokens, next_cache["self"], output, finished

    state = (
        tf.constant(0),
        tf.fill([batch], bos_id),
        cache["self"],
        tf.fill([batch, buffer_length], pad_id),  # (batch, buffer_length)
        tf.zeros([batch], tf.bool),
    )
    shapes = tf.nest.map_structure(lambda tensor: tensor.shape, state)
    if dynamic_shapes:
        shapes = (*shapes[:2], growing_cache_shapes(shapes[2]), *shapes[3:])
    _, _, _, output, _ = tf.while_loop(
        lambda *state: ~tf.reduce_all(state[-1]), body, state, shape_invariants=shapes
    )
    return trim_output(output, pad_id)


def reference_greedy_search(
    model: Transformer,
    source_ids: tf.Tensor,
    options: SearchOptions = SearchOptions(),
) -> tf.Tensor:
    """:func:`greedy_search` without a cache, the TensorFlow tutorial's way (tests, benchmarks).

    Every step re-runs ``model.decode`` over the whole prefix and keeps the last position's
    logits: quadratic work, but the same ids as :func:`greedy_search`. Not XLA-compatible (the
    prefix grows).

    Example:
        >>> source_ids = tf.constant([[5, 6, 7, 0]])
        >>> bool(tf.reduce_all(reference_greedy_search(model, source_ids) ==
        ...                    greedy_search(model, source_ids)))
        True
    """
    bos_id, eos_id, pad_id = options.bos_id, options.eos_id, options.pad_id
    source_ids = tf.convert_to_tensor(source_ids, tf.int32)
    limits, _ = output_length_limits(source_ids, options)
    memory, memory_mask = model.encode(source_ids)
    batch = tf.shape(source_ids)[0]

    def body(step, prefix, finished):
        logits = tf.transpose(model.decode(prefix, memory, memory_mask)[:, -1])  # (V, batch)
        logits = forbid_tokens(logits, options.never_written)
        tokens = tf.where(finished, pad_id, tf.argmax(logits, axis=0, output_type=tf.int32))
        prefix = tf.concat([prefix, tokens[:, tf.newaxis]], axis=1)  # (batch, step + 2)
        finished |= step + 1 >= limits
        if eos_id is not None:
            finished |= tokens == eos_id
        return step + 1, prefix, finished

    _, prefix, _ = tf.while_loop(
        lambda *state: ~tf.reduce_all(state[-1]),
        body,
        (tf.constant(0), tf.fill([batch, 1], bos_id), tf.zeros([batch], tf.bool)),
        shape_invariants=(
            tf.TensorShape([]),
            tf.TensorShape([None, None]),
            tf.TensorShape([None]),
        ),
    )
    return prefix[:, 1:]
