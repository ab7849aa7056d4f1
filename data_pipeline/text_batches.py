"""Token-budget batches of labelled texts, one text an example, for a classifier.

Each batch is a dict of int32 tensors:

* ``tokens`` [B, L]: BOS, then the text's pieces, cut after ``max_length - 1`` of them (a long
  message is classified by its beginning, never dropped), padded with ``PAD_ID``;
* ``label``  [B]: the class id.

Texts are bucketed by length as translation pairs are (``data_pipeline.batching``): bucket ``i``
has batch size ``tokens_per_batch // (b_i - 1)``, so ``B * L <= tokens_per_batch``. Shuffling
draws the examples' indices (the texts stay in one constant), so a saved iterator position holds
integers, not texts, and restores into the same pipeline built again.

Example:
    >>> batches = make_text_batches(["Buy now", "Lunch?"], [1, 0], tokenizer, max_length=256,
    ...                             tokens_per_batch=8192, shuffle=True, seed=0, repeat=True)
    >>> sorted(next(iter(batches)))
    ['label', 'tokens']
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import tensorflow as tf

from data_pipeline.batching import bucket_batch_sizes, default_bucket_boundaries
from data_pipeline.tokenizer import BOS_ID, PAD_ID, Tokenizer

_TOKENIZE_BATCH = 256


def text_tokens(tokenizer: Tokenizer, texts: tf.Tensor, max_length: int) -> tf.RaggedTensor:
    """``[N]`` strings -> ragged ``[N, None]`` ids: BOS and the first ``max_length - 1`` pieces
    (what a classifier reads of a text; also what it is served).

    Example:
        >>> text_tokens(tokenizer, tf.constant(["Buy now"]), 4).to_list()  # doctest: +SKIP
        [[2, 812, 95]]
    """
    pieces = tokenizer.tokenize(texts)[:, : max_length - 1]
    count = tf.shape(texts, out_type=tf.int64)[:1]
    bos = tf.RaggedTensor.from_tensor(tf.fill(tf.concat([count, [1]], 0), BOS_ID))
    return tf.concat([bos, tf.cast(pieces, tf.int32)], axis=1)


def make_text_batches(
    texts: Sequence[str],
    labels: Sequence[int],
    tokenizer: Tokenizer,
    *,
    max_length: int,
    tokens_per_batch: int,
    shuffle: bool,
    seed: int,
    repeat: bool = False,
) -> tf.data.Dataset:
    """Batches ``{"tokens", "label"}`` of ``texts`` and their class ids (see the module):
    endless with ``repeat``, in a seeded order with ``shuffle`` (one shuffle running on across
    passes, so a saved position restores it exactly).
    """
    if len(texts) != len(labels) or not texts:
        raise ValueError(
            f"Expected as many labels as texts (>0), got {len(labels)} and {len(texts)}."
        )
    if max_length < 2 or tokens_per_batch < max_length:
        raise ValueError(
            f"Expected 2 <= max_length <= tokens_per_batch, got {max_length} and "
            f"{tokens_per_batch}."
        )
    all_texts = tf.constant(list(texts), tf.string)
    all_labels = tf.constant(np.asarray(labels, np.int32))
    indices = tf.data.Dataset.range(len(texts))
    if repeat:
        indices = indices.repeat()
    if shuffle:
        indices = indices.shuffle(len(texts), seed=seed, reshuffle_each_iteration=not repeat)

    @tf.autograph.experimental.do_not_convert
    def tokenize(index: tf.Tensor) -> dict:
        return {
            "tokens": text_tokens(tokenizer, tf.gather(all_texts, index), max_length),
            "label": tf.gather(all_labels, index),
        }

    examples = (
        indices.batch(_TOKENIZE_BATCH).map(tokenize, num_parallel_calls=tf.data.AUTOTUNE).unbatch()
    )
    boundaries = default_bucket_boundaries(max_length)
    batches = examples.bucket_by_sequence_length(
        element_length_func=lambda example: tf.shape(example["tokens"])[0],
        bucket_boundaries=boundaries,
        bucket_batch_sizes=bucket_batch_sizes(boundaries, tokens_per_batch),
        no_padding=True,
    )

    @tf.autograph.experimental.do_not_convert
    def dense(batch: dict) -> dict:
        return {"tokens": batch["tokens"].to_tensor(PAD_ID), "label": batch["label"]}

    return batches.map(dense, num_parallel_calls=tf.data.AUTOTUNE).prefetch(tf.data.AUTOTUNE)
