"""How much subword regularisation changes the segmentation, for a few sampling alphas.

    .venv/bin/python benchmarks/subword_sampling.py --spm_model=runs/multi30k_en_de/spm.model
        [--data=multi30k/en-de --split=train --alphas=0.2,0.3,0.5,1.0]

For each side of the split and each alpha (`--config.tokenizer.sampling_alpha`), prints the
pieces per sentence of one sampled pass relative to the best segmentation, and the share of
sentences whose sampled segmentation differs from the best one. Sampling uses SentencePiece's
own random generator, so the figures vary slightly from run to run.
"""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import tensorflow as tf  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--spm_model", required=True, help="a workdir's spm.model")
    parser.add_argument("--data", default="multi30k/en-de")
    parser.add_argument("--split", default="train")
    parser.add_argument("--alphas", default="0.2,0.3,0.5,1.0")
    args = parser.parse_args()

    import data_pipeline as dp

    tokenizer = dp.Tokenizer.from_file(args.spm_model)
    sides: tuple[list[bytes], list[bytes]] = ([], [])
    pairs = dp.load_translation_splits(args.data, [args.split])[args.split]
    for sources, targets in pairs.batch(4096).as_numpy_iterator():
        sides[0].extend(sources)
        sides[1].extend(targets)
    print(f"{args.data} {args.split}: {len(sides[0])} pairs; {args.spm_model}: "
          f"{tokenizer.model_type}, {tokenizer.vocab_size} pieces")
    for side, sentences in zip(args.data.split("/")[-1].split("-"), sides, strict=True):
        strings = tf.constant(sentences)
        best = tokenizer.tokenize(strings).to_list()
        best_pieces = sum(map(len, best))
        for alpha in (float(a) for a in args.alphas.split(",")):
            sampled = tokenizer.sampling(alpha).tokenize(strings).to_list()
            changed = sum(s != b for s, b in zip(sampled, best, strict=True))
            print(
                f"RESULT {side} alpha {alpha}: {sum(map(len, sampled)) / best_pieces:.3f}x the "
                f"pieces of the best segmentation ({best_pieces / len(best):.2f} a sentence); "
                f"{changed / len(best):.1%} of sentences segmented differently"
            )


if __name__ == "__main__":
    main()
