"""Batched beam search with GNMT length normalisation and early stopping, XLA-compatible.

Each sentence has ``beam_size`` slots of *alive* hypotheses and keeps the ``beam_size`` best
*finished* ones. A step expands the alive hypotheses and fills the slots with the ``beam_size``
best continuations; those that end (EOS, or the sentence's length limit) join the finished ones,
and their slots are masked (log-probability -inf: no continuation comes from them) until the next
step refills them from the hypotheses still alive. With one slot this is exactly greedy search.

Scores: a finished hypothesis of ``length`` tokens (EOS included) scores
``sum(log p) / lp(length)``, with ``lp(length) = ((5 + length) / 6) ** alpha`` (Wu et al., 2016).

Early stopping (the Tensor2Tensor / Flax criterion): a sentence is *done* once its best finished
score is at least the best score an alive hypothesis could still reach (a log-probability can only
fall, and ``lp`` grows at most to ``lp(limit)``), or nothing is alive; this is exact for the
returned best hypothesis. A done sentence's result is frozen, and the loop ends as soon as every
sentence is done. "Finished hypotheses stop costing work" therefore means: they spawn no
continuations and never hold a slot beyond the step they ended in, and decoding stops when no
sentence can still improve; until then the rows of done sentences and masked slots are still
computed, because XLA needs static shapes (``batch * beam_size`` rows every step).

Output convention as in :mod:`decoding.greedy`.
"""

from __future__ import annotations

import tensorflow as tf

from decoding.common import forbid_tokens, start_search, trim_output
from decoding.ensemble import Ensemble
from decoding.options import SearchOptions
from transformer.model import Transformer


def gnmt_length_penalty(length: tf.Tensor | int, alpha: float) -> tf.Tensor:
    """GNMT length penalty ``((5 + length) / 6) ** alpha``, float32.

    Example:
        >>> float(gnmt_length_penalty(7, 0.6))
        1.1486983...
    """
    return ((5.0 + tf.cast(length, tf.float32)) / 6.0) ** alpha


def beam_search(
    model: Transformer | Ensemble,
    source_ids: tf.Tensor,
    options: SearchOptions = SearchOptions(),
) -> tuple[tf.Tensor, tf.Tensor]:
    """Returns each sentence's best hypothesis and its length-normalised score.

    The model runs on ``batch * beam_size`` rows; every step reorders the self-attention cache
    with one ``tf.gather`` per leaf, while the encoder keys/values are tiled once. Works eagerly and
    inside ``tf.function`` (also with ``jit_compile=True``).

    Args:
        model: a built :class:`~transformer.model.Transformer`, or an
            :class:`~decoding.ensemble.Ensemble` of them.
        source_ids: ``(batch, source_len)`` int32 ids, padded with ``options.pad_id`` at the end.
        options: beam size (a beam of 1 gives the greedy output), GNMT length penalty, length
            limits and special ids (:class:`~decoding.options.SearchOptions`).

    Returns:
        ``(ids, scores)``: int32 ``(batch, out_len)`` (see :mod:`decoding.greedy`) and float32
        ``(batch,)`` scores ``sum(log p) / lp(length)``.

    Example:
        >>> options = SearchOptions(beam_size=4)
        >>> ids, scores = beam_search(model, tf.constant([[5, 6, 7, 0]]), options)
        >>> scores.shape
        TensorShape([1])
    """
    alpha, beam = options.length_penalty, options.beam_size
    bos_id, eos_id, pad_id = options.bos_id, options.eos_id, options.pad_id
    source_ids, limits, buffer_length, cache = start_search(model, source_ids, options)
    batch = tf.shape(source_ids)[0]
    # (batch, ...) -> (batch * beam, ...): each sentence's rows repeated beam times, consecutively.
    cache = tf.nest.map_structure(lambda leaf: tf.repeat(leaf, beam, axis=0), cache)
    # Sequences hold BOS in column 0; step t reads column t and writes column t + 1.
    columns = tf.range(buffer_length + 1)
    best_reachable_penalty = gnmt_length_penalty(limits, alpha)  # (batch,)
    sentence_offsets = tf.range(batch)[:, tf.newaxis] * beam  # (batch, 1)
    minus_inf = tf.constant(-float("inf"))

    def body(step, alive_seqs, alive_log_probs, self_cache, seqs, scores, done):
        tokens = tf.reshape(tf.gather(alive_seqs, step, axis=2), [-1])  # (batch * beam,)
        logits, next_cache = model.decode_step(tokens, step, {**cache, "self": self_cache})
        # A sentence's beam best continuations are among each alive hypothesis' beam best
        # tokens: two small top-k's instead of one over (batch, beam * vocab_size).
        row_logits, row_tokens = tf.math.top_k(forbid_tokens(logits, [pad_id, bos_id]), beam)
        row_log_probs = row_logits - tf.reduce_logsumexp(logits, axis=-1, keepdims=True)
        candidates = alive_log_probs[:, :, tf.newaxis] + tf.reshape(
            row_log_probs, [batch, beam, beam]
        )  # (batch, beam, beam): [sentence, hypothesis, its k-th best token]
        top_log_probs, top_indices = tf.math.top_k(
            tf.reshape(candidates, [batch, beam * beam]), beam
        )  # (batch, beam)
        top_beams = top_indices // beam
        top_tokens = tf.gather(
            tf.reshape(row_tokens, [batch, beam * beam]), top_indices, batch_dims=1
        )
        alive_seqs = tf.gather(alive_seqs, top_beams, batch_dims=1)  # (batch, beam, columns)
        alive_seqs = tf.where(columns == step + 1, top_tokens[:, :, tf.newaxis], alive_seqs)
        rows = tf.reshape(top_beams + sentence_offsets, [-1])  # (batch * beam,)
        self_cache = tf.nest.map_structure(lambda leaf: tf.gather(leaf, rows), next_cache["self"])
        ended = step + 1 >= limits[:, tf.newaxis]  # (batch, 1)
        if eos_id is not None:
            ended = ended | (top_tokens == eos_id)  # (batch, beam)
        ended = tf.broadcast_to(ended, tf.shape(top_tokens))

        # Hypotheses that ended join the finished ones (the beam best are kept) and leave the beam.
        ended_scores = top_log_probs / gnmt_length_penalty(step + 1, alpha)
        all_scores = tf.concat([scores, tf.where(ended, ended_scores, minus_inf)], axis=1)
        new_scores, picked = tf.math.top_k(all_scores, beam)  # (batch, beam)
        new_seqs = tf.gather(tf.concat([seqs, alive_seqs], axis=1), picked, batch_dims=1)
        scores = tf.where(done[:, tf.newaxis], scores, new_scores)
        seqs = tf.where(done[:, tf.newaxis, tf.newaxis], seqs, new_seqs)
        alive_log_probs = tf.where(ended, minus_inf, top_log_probs)
        best_reachable = tf.reduce_max(alive_log_probs, axis=1) / best_reachable_penalty
        done |= scores[:, 0] >= best_reachable
        return step + 1, alive_seqs, alive_log_probs, self_cache, seqs, scores, done

    initial_seqs = tf.where(columns == 0, bos_id, tf.fill([batch, beam, buffer_length + 1], pad_id))
    # Only the first of the identical initial hypotheses is alive.
    initial_log_probs = tf.tile([[0.0] + [-float("inf")] * (beam - 1)], [batch, 1])
    state = tf.while_loop(
        lambda *state: ~tf.reduce_all(state[-1]),
        body,
        (
            tf.constant(0),
            initial_seqs,
            initial_log_probs,
            cache["self"],
            initial_seqs,
            tf.fill([batch, beam], minus_inf),
            tf.zeros([batch], tf.bool),
        ),
    )
    seqs, scores = state[4], state[5]
    return trim_output(seqs[:, 0, 1:], pad_id), scores[:, 0]
