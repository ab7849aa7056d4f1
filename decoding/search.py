"""One entry point for translation: greedy search for a beam of 1, beam search otherwise."""

from __future__ import annotations

import tensorflow as tf

from decoding.beam import beam_search
from decoding.ensemble import Ensemble
from decoding.greedy import greedy_search
from decoding.options import SearchOptions
from transformer.model import Transformer


def decode(
    model: Transformer | Ensemble,
    source_ids: tf.Tensor,
    options: SearchOptions = SearchOptions(),
    dynamic_shapes: bool = False,
    target_prefix: tf.Tensor | None = None,
) -> tf.Tensor:
    """Translates ``(batch, source_len)`` ids to ``(batch, out_len)`` output ids.

    ``options.beam_size == 1`` runs :func:`~decoding.greedy.greedy_search` (the length penalty
    is then unused); a larger beam runs :func:`~decoding.beam.beam_search` and drops the scores.
    ``dynamic_shapes`` (not under XLA): the self-attention cache grows with the output instead of
    being allocated for the length limit, and beam search removes done sentences from the batch.
    ``target_prefix``: ``(batch, prefix_len)`` ids each output starts with (padded), or None.
    Output convention as in :mod:`decoding.greedy`.

    Example:
        >>> decode(model, tf.constant([[5, 6, 7, 0]]), SearchOptions(max_length=8)).shape
        TensorShape([1, 8])  # (batch, out_len), out_len <= 8
    """
    if options.beam_size == 1:
        return greedy_search(model, source_ids, options, dynamic_shapes, target_prefix)
    ids, _ = beam_search(model, source_ids, options, dynamic_shapes, target_prefix)
    return ids
