"""Batched beam search with GNMT length normalisation and early stopping, XLA-compatible.

Each sentence has ``beam_size`` slots of *alive* hypotheses and keeps the ``beam_size`` best
*finished* ones. A step expands the alive hypotheses and fills the slots with the ``beam_size``
best continuations; those that end (EOS, or the sentence's length limit) join the finished ones,
and their slots are masked (log-probability -inf: no continuation comes from them) until the next
step refills them from the hypotheses still alive. With one slot this is exactly greedy search.

Scores: a finished hypothesis of ``length`` tokens (EOS included) scores
``sum(log p) / lp(length)``, with ``lp(length) = ((5 + length) / 6) ** alpha`` (Wu et al., 2016).

Early stopping (the Tensor2Tensor / Flax criterion): a sentence is *done* once its n-th best
finished score (n: the hypotheses returned, 1 for the best alone) is at least the best score an
alive hypothesis could still reach (a log-probability can only fall, and ``lp`` grows at most to
``lp(limit)``), or nothing is alive; this is exact for the returned hypotheses. A done sentence's
result is frozen, and the loop ends as soon as every sentence is done. Finished hypotheses spawn no
continuations and never hold a slot beyond the step they ended in. Under XLA (static shapes) the
rows of done sentences are still computed until the last sentence is done, and the self-attention
cache is a buffer for the length limit; with ``dynamic_shapes`` (the graph search) a done sentence
leaves the batch at once, so later steps run only the sentences still searching (with the exact
criterion and a large length penalty, the last steps of a batch often decode a handful of
sentences), and the cache grows by one position a step.

Output convention as in :mod:`decoding.greedy`.
"""

from __future__ import annotations

from typing import NamedTuple

import tensorflow as tf

from decoding.common import (
    TargetPrefix,
    growing_cache_shapes,
    start_search,
    top_k_allowed,
    trim_output,
)
from decoding.constraints import (
    MISSING_TOKEN_PENALTY,
    Constraints,
    allocate_beam,
    forbid_avoided,
    forbid_ends,
    forbid_glued,
    met_tokens,
    state_constraints,
    with_term_candidates,
)
from decoding.ensemble import Ensemble
from decoding.options import SearchOptions
from transformer.model import Transformer


def gnmt_length_penalty(length: tf.Tensor | int, alpha: float) -> tf.Tensor:
    """GNMT length penalty ``((5 + length) / 6) ** alpha``, float32.

    Example:
        >>> round(float(gnmt_length_penalty(7, 0.6)), 4)  # (12 / 6) ** 0.6
        1.5157
    """
    return ((5.0 + tf.cast(length, tf.float32)) / 6.0) ** alpha


class Hypotheses(NamedTuple):
    """Each sentence's n best hypotheses, best first (:func:`n_best_search`).

    ids: int32 ``(batch, n, out_len)``, as :mod:`decoding.greedy`'s outputs (EOS, then PAD).
    scores: float32 ``(batch, n)``: ``log_probs / lp(length)``, what the search ranks by.
    log_probs: float32 ``(batch, n)``: the sum of the tokens' log-probabilities (EOS included).
    token_log_probs: float32 ``(batch, n, out_len)``: each token's log-probability (0 where
        ``ids`` is PAD), when asked for (``with_token_log_probs``); else None.
    """

    ids: tf.Tensor
    scores: tf.Tensor
    log_probs: tf.Tensor
    token_log_probs: tf.Tensor | None = None


def beam_search(
    model: Transformer | Ensemble,
    source_ids: tf.Tensor,
    options: SearchOptions = SearchOptions(),
    dynamic_shapes: bool = False,
    target_prefix: tf.Tensor | None = None,
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
        dynamic_shapes: remove each sentence's rows from the computation as soon as it is done
            (the batch shrinks as the search goes), and grow the self-attention cache by one
            position a step instead of allocating it for the length limit; the same results.
            Not under XLA, which needs static shapes.
        target_prefix: ``(batch, prefix_len)`` int32 ids every hypothesis starts with, padded
            with ``options.pad_id`` (:class:`~decoding.common.TargetPrefix`); its tokens are
            scored as the search's own. None: no prefix.

    Returns:
        ``(ids, scores)``: int32 ``(batch, out_len)`` (see :mod:`decoding.greedy`) and float32
        ``(batch,)`` scores ``sum(log p) / lp(length)``.

    Example:
        >>> options = SearchOptions(beam_size=4)
        >>> ids, scores = beam_search(model, tf.constant([[5, 6, 7, 0]]), options)
        >>> scores.shape
        TensorShape([1])
    """
    hypotheses = n_best_search(
        model, source_ids, options, 1, dynamic_shapes, target_prefix=target_prefix
    )
    return hypotheses.ids[:, 0], hypotheses.scores[:, 0]


def n_best_search(
    model: Transformer | Ensemble,
    source_ids: tf.Tensor,
    options: SearchOptions = SearchOptions(),
    num_hypotheses: int = 1,
    dynamic_shapes: bool = False,
    with_token_log_probs: bool = False,
    target_prefix: tf.Tensor | None = None,
    constraints: Constraints | None = None,
) -> Hypotheses:
    """:func:`beam_search` returning each sentence's ``num_hypotheses`` best hypotheses (at
    most ``options.beam_size``), best first, with their scores and log-probabilities, and with
    ``with_token_log_probs`` each token's (kept beside the ids as the search goes). A
    ``target_prefix`` is :func:`beam_search`'s.

    The best of them is :func:`beam_search`'s hypothesis; a sentence searches until its n-th
    best is sure, so a larger n may take more steps, never changing a better hypothesis. Where
    fewer than n hypotheses ended (a beam that ran out), the rest have score -inf.

    ``constraints``: each sentence's required terms and avoided phrases, honoured by dynamic
    beam allocation (:mod:`decoding.constraints`; under XLA, of static shapes): every
    hypothesis returned holds every term, unless none could by the length limit (which grows by
    the sentence's term tokens); then those holding the most term tokens come first.

    Example:
        >>> hypotheses = n_best_search(model, tf.constant([[5, 6, 7, 0]]), options, 4)
        >>> hypotheses.ids.shape, hypotheses.scores.shape   # (batch, n, out_len), (batch, n)
        (TensorShape([1, 4, 9]), TensorShape([1, 4]))
    """
    alpha, beam, n = options.length_penalty, options.beam_size, num_hypotheses
    if not 1 <= n <= beam:
        raise ValueError(f"num_hypotheses must be between 1 and the beam size ({beam}), got {n}.")
    bos_id, eos_id, pad_id = options.bos_id, options.eos_id, options.pad_id
    source_ids, limits, buffer_length, cache = start_search(
        model,
        source_ids,
        options,
        growing_cache=dynamic_shapes,
        # Room for the terms besides each translation's own limit.
        extra_lengths=None if constraints is None else constraints.terms.total_lengths,
        extra_bound=0 if constraints is None else constraints.terms.length_bound,
    )
    batch = tf.shape(source_ids)[0]
    prefix = None if target_prefix is None else TargetPrefix.of(target_prefix, pad_id)
    # (batch, ...) -> (batch * beam, ...): each sentence's rows repeated beam times, consecutively.
    cache = tf.nest.map_structure(lambda leaf: tf.repeat(leaf, beam, axis=0), cache)
    encoder_cache = {key: value for key, value in cache.items() if key != "self"}
    # Sequences hold BOS in column 0; step t reads column t and writes column t + 1.
    columns = tf.range(buffer_length + 1)
    minus_inf = tf.constant(-float("inf"))

    def body(step, search, self_cache, encoder_cache, results):
        """``search``: the sentences still searching, each leaf ``(active, ...)``: ``index`` (in
        the batch), ``limit``, the ``alive`` hypotheses (``seqs``, ``log_probs``), the
        ``finished`` ones (``seqs``, ``scores``, ``sums`` of log-probabilities, ``ranks``:
        what they are ranked by, the scores, less :data:`MISSING_TOKEN_PENALTY` a term token
        missing) and ``done``; with ``constraints``, their leaves
        (:meth:`~decoding.constraints.Constraints.search_state`).
        ``results``: each sentence's n best finished hypotheses so far, ``(batch, n, ...)``.
        With ``with_token_log_probs``, ``alive_tokens`` and ``tokens`` (and ``results``'s)
        hold each hypothesis' tokens' log-probabilities, column for column with its ``seqs``."""
        active = tf.shape(search["index"])[0]
        alive_seqs, alive_log_probs = search["alive_seqs"], search["alive_log_probs"]
        seqs, scores, sums, ranks = (
            search["seqs"],
            search["scores"],
            search["sums"],
            search["ranks"],
        )
        done = search["done"]
        tokens = tf.reshape(tf.gather(alive_seqs, step, axis=2), [-1])  # (active * beam,)
        logits, next_cache = model.decode_step(
            tokens, step, {**encoder_cache, "self": self_cache}, growing=dynamic_shapes
        )  # (vocab_size, active * beam)
        # A sentence's beam best continuations are among each alive hypothesis' beam best
        # tokens: two small top-k's instead of one over (active, beam * vocab_size).
        allowed = logits
        if prefix is not None:  # inside its prefix, a hypothesis may write the prefix's token only
            sentence_prefix = TargetPrefix(search["prefix_ids"], search["prefix_lengths"])
            allowed = sentence_prefix.force(logits, step, rows_per_sentence=beam)
        if constraints is not None:  # no EOS before every term, no avoided phrase
            sentence_constraints, progress = state_constraints(search)
            terms = sentence_constraints.terms
            allowed = forbid_ends(allowed, terms, progress, eos_id)
            if constraints.continues_word is not None:
                allowed = forbid_glued(allowed, progress, constraints.continues_word)
            allowed = forbid_avoided(allowed, sentence_constraints.avoided, alive_seqs, step)
        row_logits, row_tokens = top_k_allowed(allowed, beam, options.never_written)
        normalizer = tf.reduce_logsumexp(logits, axis=0)[:, tf.newaxis]  # (active * beam, 1)
        row_log_probs = row_logits - normalizer
        width = beam  # each hypothesis' candidates: its beam best tokens, and its terms' next
        if constraints is not None:
            row_tokens, row_log_probs = with_term_candidates(
                terms, progress, allowed, normalizer, row_tokens, row_log_probs
            )
            width = tf.shape(row_tokens)[1]
        candidates = alive_log_probs[:, :, tf.newaxis] + tf.reshape(
            row_log_probs, [active, beam, width]
        )  # (active, beam, width): [sentence, hypothesis, its k-th candidate token]
        candidates = tf.reshape(candidates, [active, beam * width])
        candidate_tokens = tf.reshape(row_tokens, [active, beam * width])
        if constraints is None:
            top_log_probs, top_indices = tf.math.top_k(candidates, beam)  # (active, beam)
        else:  # dynamic beam allocation
            top_indices, progress = allocate_beam(
                terms, progress, candidate_tokens, candidates, beam
            )
            top_log_probs = tf.gather(candidates, top_indices, batch_dims=1)
        top_beams = top_indices // width
        top_tokens = tf.gather(candidate_tokens, top_indices, batch_dims=1)
        alive_seqs = tf.gather(alive_seqs, top_beams, batch_dims=1)  # (active, beam, columns)
        alive_seqs = tf.where(columns == step + 1, top_tokens[:, :, tf.newaxis], alive_seqs)
        kept = {}  # each finished or alive hypothesis' leaves, concatenated: (active, 2 beam, ...)
        if with_token_log_probs:
            top_token_log_probs = tf.gather(
                tf.reshape(row_log_probs, [active, beam * width]), top_indices, batch_dims=1
            )  # (active, beam): the log-probability of each new hypothesis' last token
            alive_tokens = tf.gather(search["alive_tokens"], top_beams, batch_dims=1)
            alive_tokens = tf.where(
                columns == step + 1, top_token_log_probs[:, :, tf.newaxis], alive_tokens
            )
            kept["tokens"] = tf.concat([search["tokens"], alive_tokens], axis=1)
        rows = top_beams + tf.range(active)[:, tf.newaxis] * beam  # (active, beam) cache rows
        ended = step + 1 >= search["limit"][:, tf.newaxis]  # (active, 1)
        if eos_id is not None:
            ended = ended | (top_tokens == eos_id)  # (active, beam)
        ended = tf.broadcast_to(ended, tf.shape(top_tokens))

        # Hypotheses that ended join the finished ones (the beam best are kept) and leave the beam.
        ended_scores = top_log_probs / gnmt_length_penalty(step + 1, alpha)
        ended_ranks = ended_scores
        if constraints is not None:  # those missing terms (at the length limit) rank last
            missing = terms.total_lengths[:, tf.newaxis] - met_tokens(terms, progress)
            ended_ranks -= MISSING_TOKEN_PENALTY * tf.cast(missing, tf.float32)
        all_ranks = tf.concat([ranks, tf.where(ended, ended_ranks, minus_inf)], axis=1)
        new_ranks, picked = tf.math.top_k(all_ranks, beam)  # (active, beam)
        all_scores = tf.concat([scores, tf.where(ended, ended_scores, minus_inf)], axis=1)
        new_scores = tf.gather(all_scores, picked, batch_dims=1)
        new_seqs = tf.gather(tf.concat([seqs, alive_seqs], axis=1), picked, batch_dims=1)
        all_sums = tf.concat([sums, tf.where(ended, top_log_probs, minus_inf)], axis=1)
        new_sums = tf.gather(all_sums, picked, batch_dims=1)
        scores = tf.where(done[:, tf.newaxis], scores, new_scores)
        ranks = tf.where(done[:, tf.newaxis], ranks, new_ranks)
        sums = tf.where(done[:, tf.newaxis], sums, new_sums)
        seqs = tf.where(done[:, tf.newaxis, tf.newaxis], seqs, new_seqs)
        finished = {
            key: tf.where(
                done[:, tf.newaxis, tf.newaxis],
                search[key],
                tf.gather(leaves, picked, batch_dims=1),
            )
            for key, leaves in kept.items()
        }
        alive_log_probs = tf.where(ended, minus_inf, top_log_probs)
        best_penalty = gnmt_length_penalty(search["limit"], alpha)
        done |= ranks[:, n - 1] >= tf.reduce_max(alive_log_probs, axis=1) / best_penalty
        index = search["index"][:, tf.newaxis]
        found = {"seqs": seqs[:, :n], "scores": scores[:, :n], "sums": sums[:, :n]}
        found |= {key: leaves[:, :n] for key, leaves in finished.items()}
        results = {
            key: tf.tensor_scatter_nd_update(results[key], index, found[key]) for key in results
        }
        search = {
            **search,
            "alive_seqs": alive_seqs,
            "alive_log_probs": alive_log_probs,
            "seqs": seqs,
            "scores": scores,
            "sums": sums,
            "ranks": ranks,
            "done": done,
            **finished,
        }
        if constraints is not None:
            search |= {f"term_{key}": value for key, value in progress.items()}
        if with_token_log_probs:
            search["alive_tokens"] = alive_tokens
        if dynamic_shapes:  # the done sentences leave: their rows of every tensor and cache
            keep = tf.where(~done)[:, 0]  # (still active,)
            search = tf.nest.map_structure(lambda leaf: tf.gather(leaf, keep), search)
            rows = tf.gather(rows, keep)
            kept_rows = tf.reshape(
                keep[:, tf.newaxis] * beam + tf.range(beam, dtype=keep.dtype), [-1]
            )
            encoder_cache = tf.cond(
                tf.reduce_any(done),
                lambda: tf.nest.map_structure(
                    lambda leaf: tf.gather(leaf, kept_rows), encoder_cache
                ),
                lambda: encoder_cache,
            )
        rows = tf.reshape(rows, [-1])
        self_cache = tf.nest.map_structure(lambda leaf: tf.gather(leaf, rows), next_cache["self"])
        return step + 1, search, self_cache, encoder_cache, results

    initial_seqs = tf.where(columns == 0, bos_id, tf.fill([batch, beam, buffer_length + 1], pad_id))
    search = {
        "index": tf.range(batch),
        "limit": limits,
        "alive_seqs": initial_seqs,
        # Only the first of the identical initial hypotheses is alive.
        "alive_log_probs": tf.tile([[0.0] + [-float("inf")] * (beam - 1)], [batch, 1]),
        "seqs": initial_seqs,
        "scores": tf.fill([batch, beam], minus_inf),
        "sums": tf.fill([batch, beam], minus_inf),
        "ranks": tf.fill([batch, beam], minus_inf),
        "done": tf.zeros([batch], tf.bool),
    }
    if constraints is not None:
        search |= constraints.search_state(beam)
    if prefix is not None:  # in the search state: sentences leave it with dynamic shapes
        search |= {"prefix_ids": prefix.ids, "prefix_lengths": prefix.lengths}
    results = {
        "seqs": initial_seqs[:, :n],
        "scores": tf.fill([batch, n], minus_inf),
        "sums": tf.fill([batch, n], minus_inf),
    }
    if with_token_log_probs:
        no_tokens = tf.zeros([batch, beam, buffer_length + 1])
        search |= {"alive_tokens": no_tokens, "tokens": no_tokens}
        results["tokens"] = no_tokens[:, :n]
    state = (tf.constant(0), search, cache["self"], encoder_cache, results)
    shapes = tf.nest.map_structure(lambda tensor: tensor.shape, state)
    if dynamic_shapes:  # fewer sentences (and cache rows) as the search goes; a longer cache
        step_shape, search_shapes, self_shapes, encoder_shapes, results_shapes = shapes

        def any_rows(shape: tf.TensorShape) -> tf.TensorShape:
            return tf.TensorShape([None]).concatenate(shape[1:])

        shapes = (
            step_shape,
            tf.nest.map_structure(any_rows, search_shapes),
            growing_cache_shapes(self_shapes, rows_change=True),
            tf.nest.map_structure(any_rows, encoder_shapes),
            results_shapes,
        )
    _, _, _, _, results = tf.while_loop(
        lambda step, search, *_: tf.reduce_any(~search["done"]),
        body,
        state,
        shape_invariants=shapes,
    )
    seqs = results["seqs"][:, :, 1:]  # (batch, n, buffer_length): BOS dropped
    ids = tf.reshape(trim_output(tf.reshape(seqs, [batch * n, -1]), pad_id), [batch, n, -1])
    token_log_probs = None
    if with_token_log_probs:  # (batch, n, out_len), 0 where ids is PAD
        tokens = results["tokens"][:, :, 1 : tf.shape(ids)[2] + 1]
        token_log_probs = tf.where(ids != pad_id, tokens, 0.0)
    return Hypotheses(ids, results["scores"], results["sums"], token_log_probs)
