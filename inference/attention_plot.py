"""Heat maps of the encoder-decoder attention of every head in the last decoder layer."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")  # files only, no display needed
import matplotlib.pyplot as plt  # noqa: E402
import tensorflow as tf  # noqa: E402

from decoding.translator import ModelTranslator  # noqa: E402


def plot_cross_attention(translator: ModelTranslator, sentence: str, path: str) -> str:
    """Translates ``sentence`` and saves one heat map per head to ``path`` (PNG); returns the
    translation. Rows are output pieces, columns source pieces.

    Example:
        >>> plot_cross_attention(translator, "Ein Hund rennt.", "/tmp/attention.png")
    """
    outputs = translator.cross_attention(tf.constant([sentence]))
    source_pieces = [p.decode() for p in outputs["source_pieces"][0].numpy() if p]
    output_pieces = [p.decode() for p in outputs["target_pieces"][0].numpy() if p]
    # (heads, target_len, source_len), without the padding.
    last_layer = outputs["attention"][0, :, : len(output_pieces), : len(source_pieces)].numpy()
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
    return outputs["translation"][0].numpy().decode("utf-8", errors="replace")
