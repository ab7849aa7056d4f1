"""Lexically constrained beam search: required target phrases (terms) in every output, phrases
to avoid in none (Post & Vilar, 2018: dynamic beam allocation, as fairseq's unordered
constraints).

A sentence's terms are token sequences, placed in any order. Each hypothesis carries its
progress: which terms it has written whole (``met``), and the term it is inside of (``current``,
-1: none) with that term's tokens written so far (``position``); a token that leaves a term
before its end drops that progress (the term may start again later). At every step each alive
hypothesis offers, besides its ``beam`` best tokens, the next token of every term it may write
next (the next one of ``current``, or the first of each unmet term when it is inside none). A
candidate's *bank* is the number of term tokens it has met; the beam is filled round-robin
across banks, from the furthest along down, each bank's candidates in order of their
log-probability, so hypotheses that placed more of the terms compete only with one another.

A term stands as whole words: the token after it may not continue its last word (a piece
starting with a letter or digit, ``Constraints.continues_word``), so "dog" is not met by "dogs".
A hypothesis ends (EOS) only once every term is met. The output length limit of a sentence
grows by its terms' tokens; at that limit the hypotheses still missing terms end too, ranked
below every complete one (by :data:`MISSING_TOKEN_PENALTY` per missing token): when the terms
cannot all be placed, the result is the best hypothesis holding the most term tokens. An
avoided phrase's last token is never written after the phrase's other tokens.

Example:
    >>> terms = PhraseSet.of(tf.constant([[[7, 8], [9, 0]]]), pad_id=0)   # one sentence
    >>> terms.lengths.numpy().tolist()                                     # two terms
    [[2, 1]]
"""

from __future__ import annotations

from typing import NamedTuple

import tensorflow as tf

# A finished hypothesis missing term tokens ranks by its score minus this per missing token.
MISSING_TOKEN_PENALTY = 1e4


class PhraseSet(NamedTuple):
    """Each sentence's phrases (required terms or avoided phrases) as a search reads them.

    ids: int32 ``(batch, count, width + 1)``: token ids padded with PAD (one more column, so
        that the token after a phrase's end can be read); a row of PAD only is no phrase.
    lengths: int32 ``(batch, count)``: each phrase's tokens (0: none).
    """

    ids: tf.Tensor
    lengths: tf.Tensor

    @classmethod
    def of(cls, ids: tf.Tensor, pad_id: int) -> PhraseSet:
        """``(batch, count, width)`` ids padded with ``pad_id`` (no BOS, EOS or PAD inside)."""
        ids = tf.convert_to_tensor(ids, tf.int32)
        no_phrase = tf.maximum(1 - tf.shape(ids)[1], 0)  # at least one phrase, maybe empty
        ids = tf.pad(ids, [[0, 0], [0, no_phrase], [0, 1]], constant_values=pad_id)
        return cls(ids, tf.reduce_sum(tf.cast(ids != pad_id, tf.int32), axis=2))

    @property
    def total_lengths(self) -> tf.Tensor:
        """int32 ``(batch,)``: each sentence's phrase tokens."""
        return tf.reduce_sum(self.lengths, axis=1)

    @property
    def length_bound(self) -> tf.Tensor:
        """int32 scalar: the most phrase tokens a sentence can have, ``count * width``, from
        the shape (a constant for XLA, which compiles for each shape)."""
        shape = tf.shape(self.ids)
        return shape[1] * (shape[2] - 1)


def initial_progress(terms: PhraseSet, beam: int) -> dict[str, tf.Tensor]:
    """Every hypothesis' progress before the first step: nothing met, inside no term.
    ``met``: bool ``(batch, beam, count)``; ``current``, ``position``: int32 ``(batch, beam)``;
    ``just_met``: bool ``(batch, beam)``, whether its last token ended a term."""
    batch, count = tf.shape(terms.lengths)[0], tf.shape(terms.lengths)[1]
    return {
        "met": tf.zeros([batch, beam, count], tf.bool),
        "current": tf.fill([batch, beam], -1),
        "position": tf.zeros([batch, beam], tf.int32),
        "just_met": tf.zeros([batch, beam], tf.bool),
    }


def met_tokens(terms: PhraseSet, progress: dict[str, tf.Tensor]) -> tf.Tensor:
    """int32 ``(batch, hypotheses)``: the term tokens each hypothesis has written (its bank)."""
    whole = tf.where(progress["met"], terms.lengths[:, tf.newaxis, :], 0)
    return tf.reduce_sum(whole, axis=2) + progress["position"]


def forbid_ends(
    scores: tf.Tensor,
    terms: PhraseSet,
    progress: dict[str, tf.Tensor],
    eos_id: int | None,
) -> tf.Tensor:
    """Vocabulary-major ``(vocab_size, rows)`` scores (rows: ``(batch, beam)`` flattened) with
    EOS at -inf in the rows of hypotheses still missing term tokens."""
    if eos_id is None:
        return scores
    missing = met_tokens(terms, progress) < terms.total_lengths[:, tf.newaxis]  # (batch, beam)
    at_eos = tf.range(tf.shape(scores)[0])[:, tf.newaxis] == eos_id  # (vocab_size, 1)
    forbidden = at_eos & tf.reshape(missing, [1, -1])
    return tf.where(forbidden, tf.constant(-float("inf"), scores.dtype), scores)


def forbid_glued(
    scores: tf.Tensor, progress: dict[str, tf.Tensor], continues_word: tf.Tensor
) -> tf.Tensor:
    """Vocabulary-major ``(vocab_size, rows)`` scores with every token that continues a word
    (``continues_word``: bool ``(vocab_size,)``) at -inf in the rows of hypotheses whose last
    token ended a term: a term stands as whole words."""
    glued = continues_word[:, tf.newaxis] & tf.reshape(progress["just_met"], [1, -1])
    return tf.where(glued, tf.constant(-float("inf"), scores.dtype), scores)


def forbid_avoided(
    scores: tf.Tensor, avoided: PhraseSet, alive_seqs: tf.Tensor, step: tf.Tensor
) -> tf.Tensor:
    """Vocabulary-major ``(vocab_size, rows)`` scores with each avoided phrase's last token at
    -inf in the rows whose hypothesis ends with the phrase's other tokens.

    ``alive_seqs``: int32 ``(batch, beam, columns)``, BOS in column 0 and the tokens written so
    far in columns 1 to ``step`` (the next token goes to column ``step + 1``)."""
    batch, beam = tf.shape(alive_seqs)[0], tf.shape(alive_seqs)[1]
    width = tf.shape(avoided.ids)[2] - 1
    # Phrase token j (of the first length - 1) must stand in column step - length + 2 + j.
    offsets = tf.range(width)[tf.newaxis, tf.newaxis, :]  # (1, 1, width)
    columns = step - avoided.lengths[:, :, tf.newaxis] + 2 + offsets  # (batch, count, width)
    written = tf.gather(alive_seqs, tf.clip_by_value(columns, 0, step), axis=2, batch_dims=1)
    # written: (batch, beam, count, width); a column before BOS never matches a phrase token.
    needed = offsets < avoided.lengths[:, :, tf.newaxis] - 1  # (batch, count, width)
    same = (written == avoided.ids[:, tf.newaxis, :, :width]) & (columns >= 1)[:, tf.newaxis]
    follows = tf.reduce_all(same | ~needed[:, tf.newaxis], axis=3)  # (batch, beam, count)
    follows &= (avoided.lengths > 0)[:, tf.newaxis, :]
    last = tf.gather(avoided.ids, tf.maximum(avoided.lengths - 1, 0), axis=2, batch_dims=2)
    rows = tf.range(batch * beam)[:, tf.newaxis]  # (rows, 1)
    last = tf.reshape(
        tf.broadcast_to(last[:, tf.newaxis, :], tf.shape(follows)), [batch * beam, -1]
    )
    indices = tf.stack([last, tf.broadcast_to(rows, tf.shape(last))], axis=-1)  # (rows, count, 2)
    follows = tf.reshape(follows, [batch * beam, -1])
    inf = tf.constant(float("inf"), scores.dtype)
    blocked = tf.where(follows, -inf, inf)  # +inf: leaves a score as it is
    return tf.tensor_scatter_nd_min(scores, tf.reshape(indices, [-1, 2]), tf.reshape(blocked, [-1]))


def term_candidates(
    terms: PhraseSet, progress: dict[str, tf.Tensor], row_tokens: tf.Tensor
) -> tuple[tf.Tensor, tf.Tensor]:
    """The tokens each hypothesis offers for the terms, besides its best ones.

    Args:
        row_tokens: int32 ``(batch, beam, k)``: each hypothesis' best tokens.

    Returns:
        ``(tokens, offered)``: int32 and bool ``(batch, beam, count)``: term c's next token,
        offered unless c is met or empty, another term is in progress, the token is among the
        hypothesis' best or an earlier term offers it too.
    """
    current, position = progress["current"], progress["position"]
    count = tf.shape(terms.lengths)[1]
    term_index = tf.range(count)[tf.newaxis, tf.newaxis, :]  # (1, 1, count)
    inside = current[:, :, tf.newaxis] == term_index  # (batch, beam, count)
    columns = tf.where(inside, position[:, :, tf.newaxis], 0)  # (batch, beam, count)
    tokens = tf.gather(terms.ids, tf.transpose(columns, [0, 2, 1]), axis=2, batch_dims=2)
    tokens = tf.transpose(tokens, [0, 2, 1])  # (batch, count, beam) -> (batch, beam, count)
    offered = ~progress["met"] & (terms.lengths > 0)[:, tf.newaxis, :]
    offered &= inside | (current == -1)[:, :, tf.newaxis]
    offered &= ~tf.reduce_any(tokens[..., tf.newaxis] == row_tokens[:, :, tf.newaxis, :], axis=3)
    same = tokens[..., tf.newaxis] == tokens[:, :, tf.newaxis, :]  # (batch, beam, count, count)
    earlier = term_index[..., tf.newaxis] > term_index[:, :, tf.newaxis, :]  # [c, d]: d < c
    offered &= ~tf.reduce_any(same & earlier & offered[:, :, tf.newaxis, :], axis=3)
    return tokens, offered


def advance(
    terms: PhraseSet, progress: dict[str, tf.Tensor], tokens: tf.Tensor
) -> dict[str, tf.Tensor]:
    """Each hypothesis' progress after writing each of its candidate ``tokens``.

    Args:
        progress: the hypotheses', leaves ``(batch, beam, ...)``.
        tokens: int32 ``(batch, beam, k)``: each hypothesis' candidate tokens.

    Returns:
        The candidates' progress, leaves ``(batch, beam, k, ...)``.
    """
    current, position = progress["current"], progress["position"]
    count = tf.shape(terms.lengths)[1]
    term = tf.maximum(current, 0)  # (batch, beam)
    expected = tf.gather(
        tf.gather(terms.ids, term, batch_dims=1), position[..., tf.newaxis], batch_dims=2
    )[..., 0]  # (batch, beam): the next token of the term in progress
    current_length = tf.gather(terms.lengths, term, batch_dims=1)  # (batch, beam)
    continues = (current >= 0)[..., tf.newaxis] & (tokens == expected[..., tf.newaxis])
    completes = continues & (position + 1 == current_length)[..., tf.newaxis]  # (batch, beam, k)
    completed = completes[..., tf.newaxis] & tf.one_hot(current, count, True, False)[:, :, None]
    met = progress["met"][:, :, tf.newaxis, :] | completed  # (batch, beam, k, count)
    # A token that continues no term may start an unmet one (the first such term).
    firsts = terms.ids[:, tf.newaxis, tf.newaxis, :, 0]  # (batch, 1, 1, count)
    startable = ~met & (tokens[..., tf.newaxis] == firsts) & ~continues[..., tf.newaxis]
    startable &= (terms.lengths > 0)[:, tf.newaxis, tf.newaxis, :]
    starts = tf.reduce_any(startable, axis=3)  # (batch, beam, k)
    first = tf.argmax(tf.cast(startable, tf.int32), axis=3, output_type=tf.int32)
    lengths = tf.broadcast_to(terms.lengths[:, tf.newaxis, tf.newaxis, :], tf.shape(met))
    first_length = tf.gather(lengths, first[..., tf.newaxis], batch_dims=3)[..., 0]
    single = starts & (first_length == 1)
    met |= single[..., tf.newaxis] & tf.one_hot(first, count, True, False)
    inside = continues & ~completes
    entering = starts & ~single
    return {
        "just_met": completes | single,
        "met": met,
        "current": tf.where(inside, current[..., tf.newaxis], tf.where(entering, first, -1)),
        "position": tf.where(inside, position[..., tf.newaxis] + 1, tf.where(entering, 1, 0)),
    }


def allocate(
    log_probs: tf.Tensor, banks: tf.Tensor, beam: int, bound: tf.Tensor | int | None = None
) -> tf.Tensor:
    """Dynamic beam allocation: the ``beam`` candidates kept, round-robin across banks.

    Args:
        log_probs: float32 ``(batch, candidates)``; -inf: not a candidate.
        banks: int32 ``(batch, candidates)``: each candidate's term tokens met, at most
            ``bound`` (from shapes only, as XLA needs; None: read from ``banks``).

    Returns:
        int32 ``(batch, beam)``: the kept candidates' indices: the best of the highest bank,
        the best of the next bank, ..., then each bank's second best, and so on; candidates
        at -inf last.

    Example:
        >>> allocate(tf.constant([[-1.0, -2.0, -3.0, -4.0]]), tf.constant([[0, 0, 0, 1]]), 2)
        <tf.Tensor: ... numpy=array([[3, 0]], dtype=int32)>
    """
    order = tf.argsort(log_probs, axis=1, direction="DESCENDING", stable=True)
    sorted_banks = tf.gather(banks, order, batch_dims=1)
    real = tf.gather(log_probs, order, batch_dims=1) > -float("inf")
    depth = tf.reduce_max(banks) + 1 if bound is None else bound + 1
    in_bank = tf.one_hot(sorted_banks, depth, dtype=tf.int32) * tf.cast(real, tf.int32)[..., None]
    rank = tf.reduce_sum(tf.cumsum(in_bank, axis=1) * in_bank, axis=2) - 1  # within its bank
    turn = rank * depth + (depth - 1 - sorted_banks)  # the round-robin order
    last = tf.reduce_max(turn) + 1 + tf.range(tf.shape(turn)[1])[tf.newaxis, :]
    turn = tf.where(real, turn, last)
    _, kept = tf.math.top_k(-turn, beam)
    return tf.gather(order, kept, batch_dims=1)


class Constraints(NamedTuple):
    """What a constrained search is given (:func:`decoding.beam.n_best_search`): each
    sentence's required ``terms`` and ``avoided`` phrases (either set may be empty), and
    ``continues_word``, bool ``(vocab_size,)``: the tokens that continue the word before them,
    which never follow a term (None: any token may).
    """

    terms: PhraseSet
    avoided: PhraseSet
    continues_word: tf.Tensor | None = None

    @classmethod
    def of(
        cls,
        term_ids: tf.Tensor,
        avoided_ids: tf.Tensor,
        pad_id: int,
        continues_word: tf.Tensor | None = None,
    ) -> Constraints:
        """Two ``(batch, count, width)`` id tensors padded with ``pad_id``."""
        terms, avoided = PhraseSet.of(term_ids, pad_id), PhraseSet.of(avoided_ids, pad_id)
        return cls(terms, avoided, continues_word)

    def search_state(self, beam: int) -> dict[str, tf.Tensor]:
        """The leaves a search keeps for each sentence (they leave with it): the phrases and
        every hypothesis' progress (:func:`initial_progress`, keys prefixed ``term_``)."""
        progress = initial_progress(self.terms, beam)
        return {
            "term_ids": self.terms.ids,
            "term_lengths": self.terms.lengths,
            "avoided_ids": self.avoided.ids,
            "avoided_lengths": self.avoided.lengths,
            **{f"term_{key}": value for key, value in progress.items()},
        }


def state_constraints(search: dict[str, tf.Tensor]) -> tuple[Constraints, dict[str, tf.Tensor]]:
    """The sentences' :class:`Constraints` and their hypotheses' progress out of a search's
    state (:meth:`Constraints.search_state`)."""
    constraints = Constraints(
        PhraseSet(search["term_ids"], search["term_lengths"]),
        PhraseSet(search["avoided_ids"], search["avoided_lengths"]),
    )
    progress = {key: search[f"term_{key}"] for key in ("met", "current", "position", "just_met")}
    return constraints, progress


def with_term_candidates(
    terms: PhraseSet,
    progress: dict[str, tf.Tensor],
    scores: tf.Tensor,
    normalizer: tf.Tensor,
    row_tokens: tf.Tensor,
    row_log_probs: tf.Tensor,
) -> tuple[tf.Tensor, tf.Tensor]:
    """Each hypothesis' candidates: its best tokens and the terms' next ones
    (:func:`term_candidates`; those not offered at -inf).

    Args:
        scores: vocabulary-major ``(vocab_size, rows)`` scores the search allows (rows:
            ``(batch, beam)`` flattened), and ``normalizer`` ``(rows, 1)`` their log-sum-exp
            over the whole vocabulary: a token's log-probability is their difference.
        row_tokens, row_log_probs: ``(rows, k)``: each row's best tokens.

    Returns:
        ``(tokens, log_probs)``, ``(rows, k + count)``.
    """
    batch, beam = tf.shape(progress["current"])[0], tf.shape(progress["current"])[1]
    tokens, offered = term_candidates(terms, progress, tf.reshape(row_tokens, [batch, beam, -1]))
    tokens = tf.reshape(tokens, [batch * beam, -1])  # (rows, count)
    rows = tf.broadcast_to(tf.range(batch * beam)[:, tf.newaxis], tf.shape(tokens))
    log_probs = tf.gather_nd(scores, tf.stack([tokens, rows], axis=-1)) - normalizer
    log_probs = tf.where(tf.reshape(offered, tf.shape(tokens)), log_probs, -float("inf"))
    return tf.concat([row_tokens, tokens], axis=1), tf.concat([row_log_probs, log_probs], axis=1)


def allocate_beam(
    terms: PhraseSet,
    progress: dict[str, tf.Tensor],
    tokens: tf.Tensor,
    log_probs: tf.Tensor,
    beam: int,
) -> tuple[tf.Tensor, dict[str, tf.Tensor]]:
    """The ``beam`` candidates kept (:func:`allocate`, banked by :func:`advance`'s progress).

    Args:
        tokens, log_probs: ``(batch, beam * width)``: each hypothesis' ``width`` candidates
            (their tokens and the hypotheses' log-probabilities with them), hypothesis-major.

    Returns:
        ``(kept, progress)``: int32 ``(batch, beam)`` indices of the kept candidates and
        their progress (leaves ``(batch, beam, ...)``).
    """
    batch = tf.shape(tokens)[0]
    candidates = advance(terms, progress, tf.reshape(tokens, [batch, beam, -1]))
    # (batch, beam, width, ...) -> (batch, beam * width, ...), as the candidates are ordered.
    candidates = {
        key: tf.reshape(value, tf.concat([[batch, -1], tf.shape(value)[3:]], axis=0))
        for key, value in candidates.items()
    }
    kept = allocate(log_probs, met_tokens(terms, candidates), beam, terms.length_bound)
    return kept, {key: tf.gather(value, kept, batch_dims=1) for key, value in candidates.items()}
