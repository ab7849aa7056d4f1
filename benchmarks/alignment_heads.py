"""Which cross-attention aligns words best: each decoder layer's heads, and each layer's mean.

    .venv/bin/python benchmarks/alignment_heads.py --workdir=runs/multi30k_de_en
        [--checkpoint=averaged] [--split=test2016] [--max_sentences=0]

Translates the split's sources with the work directory's model, then reads each decoder layer's
cross-attention as the model writes its own translation (teacher-forced: row t is where it looks
when it predicts piece t). Multi30k has no gold word alignments, so the measure is the copied
words: a translation's piece (not punctuation) found exactly once in the translation and exactly
once in the source (names, numbers, cognates such as "in") must be aligned to that copy. Prints,
for each layer, the share of copied pieces whose most attended source piece is the copy, for
each head and for the heads' mean, and which attention ``decoding.alignment`` aligns with.
"""

from __future__ import annotations

import string

import harness  # noqa: I001  (first: sets up the path and TensorFlow's logging)
import numpy as np
import tensorflow as tf
from absl import flags

from cli.errors import run_main
from common.alignment import EOS_PIECE
from common.special_tokens import PAD_ID
from decoding.alignment import alignment_layer, cross_attention_weights
from decoding.translator import encode_sources
from inference.loading import load_translator

_WORKDIR = flags.DEFINE_string("workdir", None, "A trained work directory.", required=True)
_CHECKPOINT = flags.DEFINE_string("checkpoint", "averaged", "Its checkpoint.")
_SPLIT = flags.DEFINE_string("split", "test2016", "The split translated.")
_MAX_SENTENCES = flags.DEFINE_integer("max_sentences", 0, "Only the first sentences (0: all).")
_BATCH_SIZE = flags.DEFINE_integer("batch_size", 64, "Sentences per batch.")
_NOT_WORDS = set(string.punctuation) | {"▁"}


def copied_pieces(source: list[str], target: list[str]) -> list[tuple[int, int]]:
    """``(source position, target position)`` of each piece found once in each (not
    punctuation, not ``</s>``).

    Example:
        >>> copied_pieces(["▁Peter", "▁geht", ".", "</s>"], ["▁Peter", "▁goes", ".", "</s>"])
        [(0, 0)]
    """
    return [
        (source.index(piece), position)
        for position, piece in enumerate(target)
        if piece != EOS_PIECE
        and not set(piece) <= _NOT_WORDS
        and source.count(piece) == 1
        and target.count(piece) == 1
    ]


def main(argv: list[str]) -> None:
    del argv
    harness.start(__doc__)
    translator, _ = load_translator(_WORKDIR.value, _CHECKPOINT.value, jit_compile=False)
    model, tokenizer = translator.model, translator.tokenizer
    sources, _ = harness.workdir_split(_WORKDIR.value, _SPLIT.value, _MAX_SENTENCES.value)
    translations = translator.translate(sources, batch_size=_BATCH_SIZE.value, progress=False)
    layers, heads = model.config.num_decoder_layers, model.config.num_heads
    harness.print_config(
        "workload",
        {"split": _SPLIT.value, "sentences": len(sources), "layers": layers, "heads": heads},
    )
    hits, copies = np.zeros([layers, heads + 1]), 0  # the last column: the heads' mean
    for start in range(0, len(sources), _BATCH_SIZE.value):
        batch = slice(start, start + _BATCH_SIZE.value)
        source_ids = encode_sources(tokenizer, tf.constant(sources[batch]), 256)
        target_ids = encode_sources(tokenizer, tf.constant(translations[batch]), 256)
        weights = np.stack(
            [w.numpy() for w in cross_attention_weights(model, source_ids, target_ids)], axis=1
        )  # (batch, layers, heads, target_len, source_len)
        weights = np.concatenate([weights, weights.mean(axis=2, keepdims=True)], axis=2)
        for row in range(len(weights)):
            source = _pieces(tokenizer, source_ids[row])
            for source_position, target_position in copied_pieces(
                source, _pieces(tokenizer, target_ids[row])
            ):
                copies += 1
                looked_at = weights[row, :, :, target_position].argmax(axis=-1)  # (layers, heads+1)
                hits += looked_at == source_position
    print(f"copied pieces: {copies}")
    chosen = alignment_layer(layers)
    for layer in range(layers):
        shares = hits[layer] / max(copies, 1)
        for head in range(heads):
            print(f"RESULT layer {layer} head {head}: {shares[head]:.3f}")
        mark = " (decoding.alignment's)" if layer == chosen else ""
        print(f"RESULT layer {layer} heads' mean: {shares[heads]:.3f}{mark}")


def _pieces(tokenizer, ids: tf.Tensor) -> list[str]:
    """A row's pieces, padding left out."""
    real = ids[ids != PAD_ID]
    return [piece.decode("utf-8") for piece in tokenizer.id_to_piece(real).numpy()]


if __name__ == "__main__":
    run_main(main)
