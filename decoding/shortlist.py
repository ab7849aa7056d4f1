"""A vocabulary shortlist: a search's steps score only the target pieces its batch may need.

Most of a decoding step's time beyond the layers goes to the output projection and the
log-softmax over every target piece, of which a sentence uses a few dozen. A :class:`Shortlist`
holds, for each source piece, the target pieces that co-occur with it most in the training data,
and the target pieces most frequent overall (built by ``inference.shortlist``); a batch's
:class:`Candidates` are the union over its source pieces, with the special ids and any piece a
prefix or a term needs. The search then runs over the candidates (Marian's lexical shortlists,
CTranslate2's ``vmap``): the model scores them alone (``Transformer.decode_step``'s
``output_ids``), the log-softmax normalizes over them, and the output ids are mapped back.

The search sees a vocabulary of candidate positions. The special ids keep their positions
(PAD, UNK, BOS, EOS are ids 0 to 3 and come first), so the search's options stay the same; the
ids it never writes besides PAD and BOS (a multilingual model's tags) are left out. Candidate
sets are padded to a multiple of :data:`CANDIDATE_BUCKET` (padding scores -inf): few shapes, so
few XLA compilations.

Example:
    >>> shortlist = Shortlist(table=tf.constant([[0, 0], [0, 0], [0, 0], [0, 0], [7, 9]]),
    ...                       frequent=tf.constant([5]))
    >>> candidates = Candidates.of(shortlist, tf.constant([[4, 3]]), 10, [0, 2], bucket=8)
    >>> candidates.ids.numpy().tolist(), int(candidates.count)
    ([0, 1, 2, 3, 5, 7, 9, 0], 7)
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import tensorflow as tf

from common.special_tokens import PAD_ID, SPECIAL_PIECES
from decoding.options import SearchOptions
from transformer.model import DecodeCache

# Candidate sets are padded to a multiple of this many ids.
CANDIDATE_BUCKET = 256
# The special ids, 0 to 3: the first candidates, at their own positions.
SPECIAL_IDS = sorted(SPECIAL_PIECES)
assert list(range(len(SPECIAL_IDS))) == SPECIAL_IDS


class Shortlist(NamedTuple):
    """What a work directory's or an export's shortlist holds (tensors, or numpy arrays).

    table: int32 ``(source_vocab_size, k)``: each source piece's ``k`` target pieces, padded
        with PAD.
    frequent: int32 ``(n,)``: the target pieces every batch keeps.
    """

    table: tf.Tensor
    frequent: tf.Tensor


class Candidates(NamedTuple):
    """One batch's candidate target pieces.

    ids: int32 ``(size,)``: the special ids, then the other candidates in id order, then PAD
        up to a multiple of the bucket.
    count: int32 scalar: the real candidates (the rest is padding).
    """

    ids: tf.Tensor
    count: tf.Tensor

    @classmethod
    def of(
        cls,
        shortlist: Shortlist,
        source_ids: tf.Tensor,
        vocab_size: int,
        never_written: list[int],
        *target_ids: tf.Tensor,
        bucket: int = CANDIDATE_BUCKET,
        size_of_shapes: bool = False,
    ) -> Candidates:
        """The candidates of a ``(batch, source_len)`` batch: its source pieces' shortlisted
        target pieces, the frequent ones, and every id in ``target_ids`` (tensors of ids a
        search must be able to write: prefixes, terms; PAD ignored), less ``never_written``.

        ``size_of_shapes``: padded to the most candidates inputs of these shapes can have (at
        most the vocabulary), not to the next bucket, so that one shape of inputs gives one shape
        of candidates: an XLA search, compiled once per shape, then never compiles again for a
        batch whose pieces have more candidates (a served request's seconds)."""
        rows = tf.gather(shortlist.table, tf.reshape(source_ids, [-1]))  # (batch * len, k)
        wanted = [tf.reshape(rows, [-1]), tf.cast(shortlist.frequent, rows.dtype)]
        wanted += [tf.cast(tf.reshape(ids, [-1]), rows.dtype) for ids in target_ids]
        wanted = tf.concat(wanted, axis=0)
        chosen = tf.scatter_nd(wanted[:, tf.newaxis], tf.ones_like(wanted), [vocab_size]) > 0
        left_out = SPECIAL_IDS + [i for i in never_written if i not in SPECIAL_IDS]
        chosen &= tf.reduce_all(tf.range(vocab_size)[:, tf.newaxis] != left_out, axis=1)
        others = tf.cast(tf.where(chosen)[:, 0], tf.int32)  # in id order
        ids = tf.concat([tf.constant(SPECIAL_IDS, tf.int32), others], axis=0)
        count = tf.shape(ids)[0]
        if size_of_shapes:  # the special ids and every wanted id distinct, within the vocabulary
            count_to_hold = tf.minimum(len(SPECIAL_IDS) + tf.size(wanted), vocab_size)
        else:
            count_to_hold = count
        size = -(-count_to_hold // bucket) * bucket
        return cls(tf.pad(ids, [[0, size - count]], constant_values=PAD_ID), count)

    def positions(self, ids: tf.Tensor, vocab_size: int) -> tf.Tensor:
        """Token ids (any shape; each a candidate, or PAD) -> their candidate positions."""
        real = self.ids[: self.count]
        position = tf.scatter_nd(real[:, tf.newaxis], tf.range(self.count), [vocab_size])
        return tf.gather(position, ids)

    def token_ids(self, positions: tf.Tensor) -> tf.Tensor:
        """Candidate positions (a search's output over them) -> token ids."""
        return tf.gather(self.ids, positions)


class ShortlistedModel:
    """A model (or ensemble) whose steps score ``candidates`` alone: what a search calls
    (``encode``, ``init_cache``, ``decode_step``), its tokens being candidate positions.

    Example:
        >>> ids = decode(ShortlistedModel(model, candidates), source_ids, options)
        >>> candidates.token_ids(ids)   # the translations' token ids (see SearchSpace)
    """

    def __init__(self, model, candidates: Candidates) -> None:
        self.model, self.candidates = model, candidates

    def encode(self, source_ids: tf.Tensor):
        return self.model.encode(source_ids)

    def init_cache(self, memory, memory_mask, max_length: int | tf.Tensor | None) -> DecodeCache:
        return self.model.init_cache(memory, memory_mask, max_length)

    def decode_step(
        self, positions: tf.Tensor, index: tf.Tensor, cache: DecodeCache, growing: bool = False
    ) -> tuple[tf.Tensor, DecodeCache]:
        """``(batch,)`` candidate positions -> logits ``(candidates, batch)`` (padding -inf)
        and the updated cache."""
        ids = self.candidates.ids
        logits, cache = self.model.decode_step(
            tf.gather(ids, positions), index, cache, growing, output_ids=ids
        )
        padding = tf.range(tf.shape(ids)[0]) >= self.candidates.count  # (candidates,)
        return tf.where(padding[:, tf.newaxis], -float("inf"), logits), cache


class SearchSpace(NamedTuple):
    """What a search runs over: the model and options to call it with, and the ``candidates``
    its token ids are positions of (None: the whole vocabulary, the ids themselves).

    Example:
        >>> space = SearchSpace.of(model, options, candidates, vocab_size=8000)
        >>> ids = decode(space.model, source_ids, space.options, True, space.positions(prefix))
        >>> space.token_ids(ids)   # the translations' token ids
    """

    model: object
    options: SearchOptions
    candidates: Candidates | None
    vocab_size: int

    @classmethod
    def of(
        cls, model, options: SearchOptions, candidates: Candidates | None, vocab_size: int
    ) -> SearchSpace:
        """Over ``candidates``, the ids a search never writes beyond PAD and BOS are no
        candidates, so the options forbid none."""
        if candidates is None:
            return cls(model, options, None, vocab_size)
        options = dataclasses.replace(options, forbidden_ids=())
        return cls(ShortlistedModel(model, candidates), options, candidates, vocab_size)

    def positions(self, ids: tf.Tensor | None) -> tf.Tensor | None:
        """Token ids (a prefix's, terms'; each a candidate) as the search writes them."""
        if ids is None or self.candidates is None:
            return ids
        return self.candidates.positions(ids, self.vocab_size)

    def token_ids(self, ids: tf.Tensor) -> tf.Tensor:
        """What the search wrote as token ids."""
        return ids if self.candidates is None else self.candidates.token_ids(ids)

    def of_each_token(self, values: tf.Tensor) -> tf.Tensor:
        """``(vocab_size, ...)`` values of the tokens -> those of the search's tokens."""
        return values if self.candidates is None else tf.gather(values, self.candidates.ids)
