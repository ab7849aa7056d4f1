"""One entry point for translation: greedy search for a beam of 1, beam search otherwise."""

from __future__ import annotations

import tensorflow as tf

from decoding.beam import beam_search
from decoding.common import BOS_ID, EOS_ID, PAD_ID
from decoding.ensemble import Ensemble
from decoding.greedy import greedy_search
from transformer.model import Transformer


def decode(
    model: Transformer | Ensemble,
    source_ids: tf.Tensor,
    *,
    beam_size: int = 4,
    length_penalty: float = 0.6,
    max_length: int | None = None,
    max_length_ratio: float = 1.5,
    max_length_offset: float = 10,
    bos_id: int = BOS_ID,
    eos_id: int | None = EOS_ID,
    pad_id: int = PAD_ID,
) -> tf.Tensor:
    """Translates ``(batch, source_len)`` ids to ``(batch, out_len)`` output ids.

    ``beam_size=1`` runs :func:`~decoding.greedy.greedy_search` (``length_penalty`` is then
    unused); a larger beam runs :func:`~decoding.beam.beam_search` and drops the scores. Output
    convention and length options as in :mod:`decoding.greedy`.

    Example:
        >>> decode(model, tf.constant([[5, 6, 7, 0]]), beam_size=4, max_length=8).shape
        TensorShape([1, 8])  # (batch, out_len), out_len <= 8
    """
    options = dict(
        max_length=max_length,
        max_length_ratio=max_length_ratio,
        max_length_offset=max_length_offset,
        bos_id=bos_id,
        eos_id=eos_id,
        pad_id=pad_id,
    )
    if beam_size == 1:
        return greedy_search(model, source_ids, **options)
    ids, _ = beam_search(
        model, source_ids, beam_size=beam_size, length_penalty=length_penalty, **options
    )
    return ids
