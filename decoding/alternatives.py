"""Alternatives at the first free position: the n most likely tokens after each sentence's target
prefix (or at the start, without one), each continued by the search.

What an interactive translation tool offers as the next word (CTranslate2's
``return_alternatives``): an n-best list of the search differs mostly near the end, these differ
right after what the user has accepted. Each alternative is the search's output for its own
prefix (the sentence's prefix and one of the n tokens), scored by forced decoding as the searches
score (:func:`~decoding.scoring.force_score`), and the n come back best first.

Example:
    >>> found = alternatives_search(model, source_ids, SearchOptions(), 3, prefix_ids)
    >>> found.ids.shape   # (batch, 3, out_len): three continuations of each sentence's prefix
    TensorShape([2, 3, 9])
"""

from __future__ import annotations

import tensorflow as tf

from decoding.beam import Hypotheses
from decoding.common import forbid_tokens
from decoding.ensemble import Ensemble
from decoding.options import SearchOptions
from decoding.scoring import force_score, next_token_log_probs
from decoding.search import decode
from transformer.model import Transformer


def alternatives_search(
    model: Transformer | Ensemble,
    source_ids: tf.Tensor,
    options: SearchOptions,
    num_alternatives: int,
    target_prefix: tf.Tensor,
) -> Hypotheses:
    """Each sentence's ``num_alternatives`` continuations of its prefix that differ at the first
    position after it, best first (graph mode: the searches run with dynamic shapes).

    Args:
        model: a built Transformer or an Ensemble.
        source_ids: ``(batch, source_len)`` int32 ids, padded at the end.
        options: the search's (:func:`decoding.search.decode`: greedy or beam search).
        num_alternatives: n, at least 1.
        target_prefix: ``(batch, prefix_len)`` int32 ids, padded with ``options.pad_id`` (a row
            of padding only: alternatives at the first position).

    Returns:
        :class:`~decoding.beam.Hypotheses` ``(batch, n, out_len)`` with token log-probabilities.
    """
    if num_alternatives < 1:
        raise ValueError(f"num_alternatives must be at least 1, got {num_alternatives}.")
    n, pad_id = num_alternatives, options.pad_id
    source_ids = tf.convert_to_tensor(source_ids, tf.int32)
    prefix = tf.convert_to_tensor(target_prefix, tf.int32)
    batch = tf.shape(source_ids)[0]
    lengths = tf.reduce_sum(tf.cast(prefix != pad_id, tf.int32), axis=1)  # (batch,)
    bos = tf.fill([batch, 1], options.bos_id)
    log_probs = next_token_log_probs(model, source_ids, tf.concat([bos, prefix], axis=1))
    after_prefix = tf.gather(log_probs, lengths, batch_dims=1)  # (batch, vocab)
    allowed = forbid_tokens(tf.transpose(after_prefix), options.never_written)  # (vocab, batch)
    _, tokens = tf.math.top_k(tf.transpose(allowed), n)  # (batch, n)
    # (batch, prefix_len) -> (batch * n, prefix_len + 1): each prefix n times, each with one of
    # the n tokens written at its first free position.
    repeated = tf.repeat(tf.pad(prefix, [[0, 0], [0, 1]], constant_values=pad_id), n, axis=0)
    positions = tf.stack([tf.range(batch * n), tf.repeat(lengths, n)], axis=1)
    extended = tf.tensor_scatter_nd_update(repeated, positions, tf.reshape(tokens, [-1]))
    sources = tf.repeat(source_ids, n, axis=0)
    output_ids = decode(model, sources, options, dynamic_shapes=True, target_prefix=extended)
    forced = force_score(model, sources, output_ids, options)
    # (batch * n, ...) -> (batch, n, ...), best first.
    scores = tf.reshape(forced.scores, [batch, n])
    order = tf.argsort(scores, axis=1, direction="DESCENDING", stable=True)

    def by_sentence(values: tf.Tensor) -> tf.Tensor:
        return tf.gather(tf.reshape(values, [batch, n, -1]), order, batch_dims=1)

    return Hypotheses(
        ids=by_sentence(output_ids),
        scores=tf.gather(scores, order, batch_dims=1),
        log_probs=tf.gather(tf.reshape(forced.log_probs, [batch, n]), order, batch_dims=1),
        token_log_probs=by_sentence(forced.token_log_probs),
    )
