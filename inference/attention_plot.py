"""Heat maps of the encoder-decoder attention of every head in the last decoder layer."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")  # files only, no display needed
import matplotlib.pyplot as plt  # noqa: E402
import tensorflow as tf  # noqa: E402

from data_pipeline.tokenizer import BOS_ID, EOS_ID  # noqa: E402
from decoding.translator import ModelTranslator, encode_sources  # noqa: E402


def plot_cross_attention(translator: ModelTranslator, sentence: str, path: str) -> str:
    """Translates ``sentence`` and saves one heat map per head to ``path`` (PNG); returns the
    translation. Rows are output pieces, columns source pieces.

    Example:
        >>> plot_cross_attention(translator, "Ein Hund rennt.", "/tmp/attention.png")
    """
    model, tokenizer = translator.model, translator.tokenizer
    text = tf.constant([sentence])
    source_ids = encode_sources(tokenizer, text, translator.max_source_length)
    translation = translator.translate_batch(text)
    output_ids = tokenizer.tokenize(translation)[0].numpy().tolist() + [EOS_ID]
    target_in = tf.constant([[BOS_ID, *output_ids[:-1]]])
    memory, memory_mask = model.encode(source_ids)
    _, weights = model.decode(target_in, memory, memory_mask, return_attention_scores=True)
    last_layer = weights[-1][0].numpy()  # (heads, target_len, source_len)
    source_pieces = [p.decode() for p in tokenizer.id_to_piece(source_ids[0]).numpy()]
    output_pieces = [p.decode() for p in tokenizer.id_to_piece(tf.constant(output_ids)).numpy()]
    num_heads = last_layer.shape[0]
    columns = min(num_heads, 4)
    rows = (num_heads + columns - 1) // columns
    size = 0.35 * max(len(source_pieces), len(output_pieces)) + 2
    figure, axes = plt.subplots(rows, columns, figsize=(columns * size, rows * size), squeeze=False)
    for head, axis in enumerate(axes.flat):
        if head >= num_heads:
            axis.axis("off")
            continue
        axis.imshow(last_layer[head], cmap="viridis", vmin=0.0, vmax=1.0)
        axis.set_title(f"head {head + 1}")
        axis.set_xticks(range(len(source_pieces)), source_pieces, rotation=90)
        axis.set_yticks(range(len(output_pieces)), output_pieces)
    figure.suptitle("Encoder-decoder attention, last decoder layer")
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
    return translation[0].numpy().decode("utf-8", errors="replace")
