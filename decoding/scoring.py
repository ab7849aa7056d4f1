"""Forced decoding: the log-probability a model (or ensemble) gives to given target sentences.

A target is scored as a search would have scored it: each token's log-probability under the
model's (an ensemble's mean) next-token distribution given the source and the tokens before it,
summed over the target's tokens (EOS included), and that sum divided by GNMT's length penalty
``lp(length)`` as beam search ranks hypotheses (:func:`~decoding.beam.gnmt_length_penalty`). So a
hypothesis of :func:`~decoding.beam.n_best_search` scores here what the search reported (up to
float rounding: one teacher-forced pass here, one cached step per token there). Uses: filtering a
corpus by how likely the model finds each pair, reranking, a confidence per translation.

One teacher-forced pass of the whole batch; targets padded with PAD at the end score as they
would alone (the decoder is causal and padding is masked).

Example:
    >>> scores = force_score(model, source_ids, target_ids, SearchOptions())
    >>> scores.token_log_probs.shape, scores.log_probs.shape   # (batch, target_len), (batch,)
    (TensorShape([2, 7]), TensorShape([2]))
"""

from __future__ import annotations

import math
from typing import NamedTuple

import tensorflow as tf

from decoding.beam import gnmt_length_penalty
from decoding.ensemble import Ensemble
from decoding.options import SearchOptions
from transformer.model import Transformer


class ForcedScores(NamedTuple):
    """What :func:`force_score` returns, float32.

    token_log_probs: ``(batch, target_len)``: each target token's log-probability, 0 past the
        target's end.
    log_probs: ``(batch,)``: their sum.
    scores: ``(batch,)``: ``log_probs / lp(length)``, length counting EOS (beam search's score).
    """

    token_log_probs: tf.Tensor
    log_probs: tf.Tensor
    scores: tf.Tensor


def next_token_log_probs(
    model: Transformer | Ensemble, source_ids: tf.Tensor, target_in_ids: tf.Tensor
) -> tf.Tensor:
    """Teacher-forced float32 log-probabilities ``(batch, target_len, target_vocab_size)`` of
    every next token after each prefix of ``target_in_ids`` (BOS first); an ensemble's are the
    log of its members' mean probability, as in its search."""
    members = model.models if isinstance(model, Ensemble) else [model]
    log_probs = [
        tf.nn.log_softmax(member((source_ids, target_in_ids), training=False)) for member in members
    ]
    if len(log_probs) == 1:
        return log_probs[0]
    return tf.reduce_logsumexp(tf.stack(log_probs), axis=0) - math.log(len(log_probs))


def force_score(
    model: Transformer | Ensemble,
    source_ids: tf.Tensor,
    target_ids: tf.Tensor,
    options: SearchOptions = SearchOptions(),
) -> ForcedScores:
    """Scores each target given its source.

    Args:
        model: a built Transformer or an Ensemble.
        source_ids: ``(batch, source_len)`` int32 ids as a search reads them (EOS, then PAD).
        target_ids: ``(batch, target_len)`` int32 ids as a search writes them: the tokens, EOS,
            then PAD (``decoding.greedy``'s output convention).
        options: its ``length_penalty`` (GNMT's alpha), ``bos_id`` and ``pad_id``.

    Returns:
        :class:`ForcedScores`.
    """
    source_ids = tf.convert_to_tensor(source_ids, tf.int32)
    target_ids = tf.convert_to_tensor(target_ids, tf.int32)
    bos = tf.fill([tf.shape(target_ids)[0], 1], options.bos_id)
    target_in_ids = tf.concat([bos, target_ids[:, :-1]], axis=1)  # shifted right
    log_probs = next_token_log_probs(model, source_ids, target_in_ids)  # (batch, len, vocab)
    real = target_ids != options.pad_id
    token_log_probs = tf.where(real, tf.gather(log_probs, target_ids, batch_dims=2), 0.0)
    total = tf.reduce_sum(token_log_probs, axis=1)
    lengths = tf.reduce_sum(tf.cast(real, tf.int32), axis=1)
    return ForcedScores(
        token_log_probs, total, total / gnmt_length_penalty(lengths, options.length_penalty)
    )
