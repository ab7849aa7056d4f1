"""Attention masks: the one mask convention of this code base.

Convention (the same as Keras): an attention mask is a **boolean** tensor, ``True`` where a query
position *may attend* to a key position and ``False`` where it may not. Its shape is broadcastable
to ``(batch, num_heads, query_len, key_len)``:

* padding mask   ``(batch, 1, 1, key_len)``    — hides padded keys from every query;
* causal mask    ``(1, 1, query_len, key_len)`` — hides the future from each query;
* combined with :func:`combine_masks` (logical AND).

Masks are never additive ``-1e9`` tensors: :func:`transformer.attention.masked_softmax` applies
them, which keeps the softmax finite in float16 and bfloat16.

Example:
    >>> ids = tf.constant([[5, 6, 0]])               # 0 is padding
    >>> padding_mask(ids, pad_id=0).shape
    TensorShape([1, 1, 1, 3])
    >>> combine_masks(padding_mask(ids, 0), causal_mask(3)).shape
    TensorShape([1, 1, 3, 3])
"""

from __future__ import annotations

import tensorflow as tf


def padding_mask(token_ids: tf.Tensor, pad_id: int = 0) -> tf.Tensor:
    """Returns ``(batch, 1, 1, length)`` booleans, ``True`` at real (non-padding) tokens."""
    # A reshape, not ``[:, None, None, :]``: LiteRT has no builtin boolean slice with new axes.
    batch, length = tf.shape(token_ids)[0], tf.shape(token_ids)[1]
    return tf.reshape(token_ids != pad_id, [batch, 1, 1, length])


def causal_mask(
    query_len: int | tf.Tensor,
    key_len: int | tf.Tensor | None = None,
    query_offset: int | tf.Tensor = 0,
) -> tf.Tensor:
    """Returns the ``(1, 1, query_len, key_len)`` look-ahead mask.

    Query ``i`` (at absolute position ``query_offset + i``) may attend to keys ``0 ..
    query_offset + i``. ``key_len`` defaults to ``query_len``; a longer ``key_len`` with an offset
    serves incremental decoding, where one new query looks at a buffer of cached keys.
    """
    key_len = query_len if key_len is None else key_len
    query_positions = tf.range(query_len)[:, tf.newaxis] + query_offset  # (query_len, 1)
    key_positions = tf.range(key_len)[tf.newaxis, :]  # (1, key_len)
    allowed = key_positions <= query_positions  # (query_len, key_len)
    return tf.reshape(allowed, [1, 1, tf.shape(allowed)[0], tf.shape(allowed)[1]])


def combine_masks(*masks: tf.Tensor | None) -> tf.Tensor | None:
    """Logical AND of the given masks (``None`` entries are skipped); ``None`` if all are."""
    present = [mask for mask in masks if mask is not None]
    if not present:
        return None
    combined = present[0]
    for mask in present[1:]:
        combined = tf.logical_and(combined, mask)
    return combined
