"""Token-budget batches of teacher-forcing examples from (source, target) string pairs.

Each batch is a dict of int32 tensors padded with `PAD_ID`:

* `source`     [B, S]: source ids followed by EOS (the model uses it as is);
* `target_in`  [B, T]: BOS followed by the target ids (decoder input);
* `target_out` [B, T]: the target ids followed by EOS (what the decoder must predict).

Pipeline: optional `repeat` -> one seeded `shuffle` of the string pairs, running on across
passes (without `repeat`: reshuffled on every iteration) -> parallel tokenization of batches of
1,024 pairs -> length filter (per batch) -> unbatch -> `bucket_by_sequence_length` (ragged
batches) -> pad each batch to its longest example -> `prefetch`. Nothing of the data set is held
in memory but the shuffle buffer, and the buffer is most of what a saved iterator position
holds: a data set of at most `shuffle_buffer` pairs (Multi30k) is shuffled whole, pair by pair;
a larger one, streamed from disk in an order already shuffled (`data_pipeline.prepared`, TFDS),
is shuffled in blocks of `SHUFFLE_BLOCK` consecutive pairs, `shuffle_buffer` pairs in all (a
tf.data element costs ~180 bytes besides its text, so a block of 16 saves most of that). A
corpus of millions of pairs so trains in bounded memory with checkpoints of a few MB. Without
shuffling (validation) the tokenized batches are cached (`cache=True`). A sampling tokenizer
(subword regularisation, `Tokenizer.sampling`) tokenizes every pass anew, so each epoch sees new
segmentations.

Shuffling is deterministic for a given `seed` and TensorFlow global seed, and its whole random
state is in a saved iterator position, whichever process restores it. The pipeline's
structure depends only on the arguments and the number of pairs counted (below), never on
sampled segmentations, so an iterator position saved with `tf.train.Checkpoint(iterator=...)`
restores into the same pipeline built again.

Lengths count BOS/EOS: an example's length is `max(len(source), len(target_in))`. Examples
longer than `max_length` are dropped; a pass over the first `stats_sample` pairs (all of a
smaller data set) counts them in `BatchStats` and logs "filtered N of M examples ...".

Token budget. Bucket `i` holds lengths in `[b_(i-1), b_i)` and has batch size
`tokens_per_batch // (b_i - 1)`; a batch is padded to its longest element (< b_i), so
`B * max(S, T) <= tokens_per_batch` for every batch. The last boundary is `max_length + 1`.

Example:
    >>> batches = make_batches(pairs, tokenizer, max_length=128, tokens_per_batch=4096,
    ...                        shuffle=True, seed=0)                  # doctest: +SKIP
    >>> next(iter(batches))["target_in"].shape                         # e.g. (256, 16)
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Sequence

import numpy as np
import tensorflow as tf
from absl import logging

from data_pipeline.tokenizer import BOS_ID, EOS_ID, PAD_ID, Tokenizer

_TOKENIZE_BATCH = 1024
SHUFFLE_BUFFER = 30_000  # pairs of strings (~150 bytes each), in memory and in a saved position
SHUFFLE_BLOCK = 16  # pairs a shuffle-buffer element holds when the data set is larger
STATS_SAMPLE = 100_000  # pairs counted for BatchStats (and the shuffle buffer of a smaller set)
_LENGTH = "length"  # Internal: max(len(source), len(target_in)) of an example.


@dataclasses.dataclass(frozen=True)
class BatchStats:
    """Counts from the length-filtering pass over the first `STATS_SAMPLE` pairs.

    Example:
        >>> BatchStats(total=10, kept=9, too_long_source=1, too_long_target=0,
        ...            max_length=64, kept_target_tokens=120).dropped
        1
    """

    total: int
    kept: int
    too_long_source: int  # Dropped examples whose source (with EOS) is too long.
    too_long_target: int  # Dropped examples whose target (with BOS or EOS) is too long.
    max_length: int
    kept_target_tokens: int  # Sum of len(target_out) over kept examples (no padding).

    @property
    def dropped(self) -> int:
        return self.total - self.kept


def default_bucket_boundaries(max_length: int, min_length: int = 8, step: float = 1.1) -> list[int]:
    """Geometric bucket boundaries ending with `max_length + 1`.

    Example:
        >>> default_bucket_boundaries(20)
        [8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21]
    """
    boundaries, x = [], min_length
    while x <= max_length:
        boundaries.append(x)
        x = max(x + 1, int(x * step))
    return boundaries + [max_length + 1]


def bucket_batch_sizes(boundaries: Sequence[int], tokens_per_batch: int) -> list[int]:
    """Batch size per bucket so that batch size * longest possible element <= budget.

    There is one more bucket than boundaries (lengths >= the last boundary); it is empty after
    filtering and gets batch size 1.

    Example:
        >>> bucket_batch_sizes([8, 17], 64)
        [9, 4, 1]
    """
    return [tokens_per_batch // (b - 1) for b in boundaries] + [1]


def _check_args(max_length, tokens_per_batch, boundaries) -> list[int]:
    if max_length < 2:
        raise ValueError(f"max_length must be >= 2 (BOS/EOS count), got {max_length}.")
    if tokens_per_batch < max_length:
        raise ValueError(
            f"tokens_per_batch={tokens_per_batch} is smaller than max_length={max_length}: an "
            "example of maximal length would not fit in a batch."
        )
    if boundaries is None:
        return default_bucket_boundaries(max_length)
    boundaries = [int(b) for b in boundaries]
    if any(b < 2 for b in boundaries) or any(a >= b for a, b in itertools.pairwise(boundaries)):
        raise ValueError(f"bucket_boundaries must be increasing integers >= 2, got {boundaries}.")
    if boundaries and boundaries[-1] > max_length + 1:
        raise ValueError(
            f"bucket_boundaries must not exceed max_length + 1 = {max_length + 1}, got "
            f"{boundaries}."
        )
    return boundaries if boundaries[-1:] == [max_length + 1] else boundaries + [max_length + 1]


def _tokenize_fn(source_tokenizer: Tokenizer, target_tokenizer: Tokenizer):
    """(source, target) string batches -> a batch of examples (ragged [b, None]) + lengths."""

    @tf.autograph.experimental.do_not_convert
    def tokenize(source, target):
        src = source_tokenizer.tokenize(source)
        tgt = target_tokenizer.tokenize(target)
        n = tf.shape(source, out_type=tf.int64)[:1]
        bos = tf.RaggedTensor.from_tensor(tf.fill(tf.concat([n, [1]], 0), BOS_ID))
        eos = tf.RaggedTensor.from_tensor(tf.fill(tf.concat([n, [1]], 0), EOS_ID))
        batch = {
            "source": tf.concat([src, eos], axis=1),
            "target_in": tf.concat([bos, tgt], axis=1),
            "target_out": tf.concat([tgt, eos], axis=1),
        }
        # Example length (for filtering and bucketing) as a plain scalar per example, so later
        # per-example steps need not look into the ragged tensors.
        batch[_LENGTH] = tf.cast(
            tf.maximum(batch["source"].row_lengths(), batch["target_in"].row_lengths()), tf.int32
        )
        return batch

    return tokenize


@tf.autograph.experimental.do_not_convert
def _side_lengths(batch):
    return batch["source"].row_lengths(), batch["target_in"].row_lengths()


def _length_stats(tokenized_batches: tf.data.Dataset, max_length: int) -> BatchStats:
    src_lens, tgt_lens = [], []
    for s, t in tokenized_batches.map(_side_lengths).as_numpy_iterator():
        src_lens.append(s)
        tgt_lens.append(t)
    src = np.concatenate(src_lens) if src_lens else np.zeros([0], np.int64)
    tgt = np.concatenate(tgt_lens) if tgt_lens else np.zeros([0], np.int64)
    kept = (src <= max_length) & (tgt <= max_length)
    return BatchStats(
        total=int(src.size),
        kept=int(kept.sum()),
        too_long_source=int((src > max_length).sum()),
        too_long_target=int((tgt > max_length).sum()),
        max_length=max_length,
        kept_target_tokens=int(tgt[kept].sum()),
    )


def _filter_fn(max_length: int):
    @tf.autograph.experimental.do_not_convert
    def keep_short(batch):
        keep = batch[_LENGTH] <= max_length
        return {
            key: tf.ragged.boolean_mask(value, keep)
            if isinstance(value, tf.RaggedTensor)
            else tf.boolean_mask(value, keep)
            for key, value in batch.items()
        }

    return keep_short


@tf.autograph.experimental.do_not_convert
def _to_dense(batch):
    return {
        key: ids.to_tensor(default_value=PAD_ID) for key, ids in batch.items() if key != _LENGTH
    }


def make_batches_with_stats(
    pairs: tf.data.Dataset,
    tokenizer: Tokenizer,
    *,
    max_length: int,
    tokens_per_batch: int,
    shuffle: bool,
    seed: int,
    repeat: bool = False,
    cache: bool = True,
    bucket_boundaries: Sequence[int] | None = None,
    target_tokenizer: Tokenizer | None = None,
    shuffle_buffer: int = SHUFFLE_BUFFER,
    stats_sample: int = STATS_SAMPLE,
) -> tuple[tf.data.Dataset, BatchStats]:
    """`make_batches`, also returning the length-filtering counts.

    Example:
        >>> batches, stats = make_batches_with_stats(pairs, tok, max_length=64,
        ...     tokens_per_batch=4096, shuffle=False, seed=0)          # doctest: +SKIP
        >>> stats.dropped, stats.kept                                  # e.g. (12, 28988)
    """
    boundaries = _check_args(max_length, tokens_per_batch, bucket_boundaries)
    spec = pairs.element_spec
    if not (
        isinstance(spec, tuple)
        and len(spec) == 2
        and all(
            isinstance(s, tf.TensorSpec) and s.dtype == tf.string and s.shape.rank == 0
            for s in spec
        )
    ):
        raise ValueError(f"pairs must yield (source, target) tf.string scalars, got {spec}.")
    target_tokenizer = target_tokenizer or tokenizer
    tokenize = _tokenize_fn(tokenizer, target_tokenizer)
    # A sampling tokenizer must tokenize every pass anew, so nothing is cached.
    varies = bool(tokenizer.sampling_alpha or target_tokenizer.sampling_alpha)
    sample = pairs.take(stats_sample).batch(_TOKENIZE_BATCH)
    stats = _length_stats(sample.map(tokenize, num_parallel_calls=tf.data.AUTOTUNE), max_length)
    logging.info(
        "make_batches: filtered %d of %d examples longer than max_length=%d tokens "
        "(source too long: %d, target too long: %d); kept %d.",
        stats.dropped,
        stats.total,
        max_length,
        stats.too_long_source,
        stats.too_long_target,
        stats.kept,
    )
    if stats.kept == 0:
        raise ValueError(
            f"No examples left: all {stats.total} examples are longer than "
            f"max_length={max_length} (or the data set is empty)."
        )
    # Passes repeat before the shuffle: one shuffle runs on across them, its random state in a
    # saved iterator position. (A shuffle that reshuffles on every pass draws each pass's seed
    # from a generator that a saved position leaves out: a run resumed in a new process would
    # see other orders from the next pass on.)
    ds = pairs.repeat() if repeat else pairs
    # The buffer size is part of a saved iterator position, so it must come out the same every
    # time the pipeline is built: `stats.total` does (it counts pairs, not kept ones).
    if shuffle and stats.total <= shuffle_buffer:  # the whole set, pair by pair
        ds = ds.shuffle(stats.total, seed=seed, reshuffle_each_iteration=not repeat)
    elif shuffle:  # blocks of consecutive pairs: a saved position holds little but the text
        blocks = ds.batch(SHUFFLE_BLOCK)
        ds = blocks.shuffle(
            shuffle_buffer // SHUFFLE_BLOCK, seed=seed, reshuffle_each_iteration=not repeat
        ).unbatch()
    tokenized = ds.batch(_TOKENIZE_BATCH).map(tokenize, num_parallel_calls=tf.data.AUTOTUNE)
    if cache and not shuffle and not varies:
        tokenized = tokenized.cache()  # Tokenized batches (ragged), in memory: small sets only.
    # Filtering whole batches, then unbatching, is much cheaper than a per-example filter.
    ds = tokenized.map(_filter_fn(max_length), num_parallel_calls=tf.data.AUTOTUNE).unbatch()
    # Examples are 1-D ragged tensors: bucket them into ragged batches, then pad each batch to
    # its longest example.
    ds = ds.bucket_by_sequence_length(
        element_length_func=lambda example: example[_LENGTH],
        bucket_boundaries=boundaries,
        bucket_batch_sizes=bucket_batch_sizes(boundaries, tokens_per_batch),
        no_padding=True,
    ).map(_to_dense, num_parallel_calls=tf.data.AUTOTUNE)
    return ds.prefetch(tf.data.AUTOTUNE), stats


def make_batches(
    pairs: tf.data.Dataset,
    tokenizer: Tokenizer,
    *,
    max_length: int,
    tokens_per_batch: int,
    shuffle: bool,
    seed: int,
    repeat: bool = False,
    cache: bool = True,
    bucket_boundaries: Sequence[int] | None = None,
    target_tokenizer: Tokenizer | None = None,
    shuffle_buffer: int = SHUFFLE_BUFFER,
) -> tf.data.Dataset:
    """Token-budget batches `{"source", "target_in", "target_out"}`; see the module docstring.

    `tokenizer` is used for both sides unless `target_tokenizer` is given; a sampling tokenizer
    gives new segmentations on every pass (`Tokenizer.sampling`). Filtering counts are logged;
    use `make_batches_with_stats` to get them as a `BatchStats`.

    Example:
        >>> train = make_batches(pairs, tok, max_length=128, tokens_per_batch=4096,
        ...                      shuffle=True, seed=1, repeat=True)    # doctest: +SKIP
    """
    batches, _ = make_batches_with_stats(
        pairs,
        tokenizer,
        max_length=max_length,
        tokens_per_batch=tokens_per_batch,
        shuffle=shuffle,
        seed=seed,
        repeat=repeat,
        cache=cache,
        bucket_boundaries=bucket_boundaries,
        target_tokenizer=target_tokenizer,
        shuffle_buffer=shuffle_buffer,
    )
    return batches
