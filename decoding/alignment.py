"""Cross-attention read off a teacher-forced pass: the heat maps the demo page draws and the
attention word alignments are made from (:mod:`common.alignment`).

The alignment's attention is the mean of the heads of the decoder layer before the last
(:func:`alignment_layer`), at the step where each target token is predicted. Chosen by measure
(``benchmarks/alignment_heads.py``): on test2016 with the default De→En model, the share of
copied pieces (found once in the source and once in the translation) whose most attended source
piece is their copy was 0.697 for that layer's mean, against 0.661 and 0.589 for the first and
last layers' and 0.272 for the last layer's first head (CTranslate2's default alignment head).
Single heads ranged from 0.19 to 0.77, but which head aligns is a matter of training, and a
layer's mean needs no choosing per model (Garg et al., 2019, found the penultimate layer best
too). ``docs/RESULTS.md`` has the table.

Example:
    >>> weights = alignment_attention(model, source_ids, target_ids)
    >>> weights.shape   # (batch, target_len, source_len)
    TensorShape([2, 7, 5])
"""

from __future__ import annotations

import tensorflow as tf

from common.special_tokens import BOS_ID, PAD_ID
from decoding.ensemble import Ensemble
from transformer.model import Transformer


def alignment_layer(num_decoder_layers: int) -> int:
    """The decoder layer the alignment is read from: the one before the last (the last of a
    one-layer decoder), counted from 0."""
    return max(num_decoder_layers - 2, 0)


def cross_attention_weights(
    model: Transformer, source_ids: tf.Tensor, target_ids: tf.Tensor
) -> list[tf.Tensor]:
    """Each decoder layer's cross-attention, float32 ``(batch, heads, target_len, source_len)``,
    when each of the ``(batch, target_len)`` ``target_ids`` (a search's output convention: EOS,
    then PAD) is predicted (row t: BOS and the tokens before t read); 0 at padding."""
    bos = tf.fill([tf.shape(target_ids)[0], 1], tf.constant(BOS_ID, target_ids.dtype))
    memory, memory_mask = model.encode(source_ids)
    _, weights = model.decode(
        tf.concat([bos, target_ids[:, :-1]], axis=1),
        memory,
        memory_mask,
        return_attention_scores=True,
    )
    visible = (target_ids != PAD_ID)[:, None, :, None] & (source_ids != PAD_ID)[:, None, None, :]
    return [tf.where(visible, tf.cast(layer, tf.float32), 0.0) for layer in weights]


def alignment_attention(
    model: Transformer | Ensemble, source_ids: tf.Tensor, target_ids: tf.Tensor
) -> tf.Tensor:
    """The alignment's attention, float32 ``(batch, target_len, source_len)``: the mean of the
    heads of :func:`alignment_layer` (an ensemble's: the mean of its members')."""
    members = model.models if isinstance(model, Ensemble) else [model]
    means = [
        tf.reduce_mean(
            cross_attention_weights(member, source_ids, target_ids)[
                alignment_layer(member.config.num_decoder_layers)
            ],
            axis=1,
        )
        for member in members
    ]
    return tf.add_n(means) / len(means)
