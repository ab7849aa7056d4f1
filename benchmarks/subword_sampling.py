"""How much subword regularisation changes the segmentation, for a few sampling alphas.

    .venv/bin/python benchmarks/subword_sampling.py --spm_model=runs/multi30k_en_de/spm.model
        [--data=multi30k/en-de --split=train --alphas=0.2,0.3,0.5,1.0]

For each side of the split and each alpha (`--config.tokenizer.sampling_alpha`), prints the
pieces per sentence of one sampled pass relative to the best segmentation, and the share of
sentences whose sampled segmentation differs from the best one. Sampling uses SentencePiece's
own random generator, so the figures vary slightly from run to run.
"""

from __future__ import annotations

import harness
import tensorflow as tf
from absl import flags

from cli.errors import run_main

_SPM_MODEL = flags.DEFINE_string("spm_model", None, "A workdir's spm.model.", required=True)
_DATA = flags.DEFINE_string("data", "multi30k/en-de", "Data set (its language pair names sides).")
_SPLIT = flags.DEFINE_string("split", "train", "Its split.")
_ALPHAS = flags.DEFINE_list("alphas", ["0.2", "0.3", "0.5", "1.0"], "Sampling alphas to try.")


def main(argv: list[str]) -> None:
    del argv
    harness.start(__doc__)
    import data_pipeline as dp

    tokenizer = dp.Tokenizer.from_file(_SPM_MODEL.value)
    sides: tuple[list[bytes], list[bytes]] = ([], [])
    data = dp.spec.parse(_DATA.value)
    pairs = dp.load_translation_splits(data, [_SPLIT.value])[_SPLIT.value]
    for sources, targets in pairs.batch(4096).as_numpy_iterator():
        sides[0].extend(sources)
        sides[1].extend(targets)
    print(
        f"{_DATA.value} {_SPLIT.value}: {len(sides[0])} pairs; {_SPM_MODEL.value}: "
        f"{tokenizer.model_type}, {tokenizer.vocab_size} pieces"
    )
    for side, sentences in zip(data.corpus.direction, sides, strict=True):
        strings = tf.constant(sentences)
        best = tokenizer.tokenize(strings).to_list()
        best_pieces = sum(map(len, best))
        for alpha in (float(a) for a in _ALPHAS.value):
            sampled = tokenizer.sampling(alpha).tokenize(strings).to_list()
            changed = sum(s != b for s, b in zip(sampled, best, strict=True))
            print(
                f"RESULT {side} alpha {alpha}: {sum(map(len, sampled)) / best_pieces:.3f}x the "
                f"pieces of the best segmentation ({best_pieces / len(best):.2f} a sentence); "
                f"{changed / len(best):.1%} of sentences segmented differently"
            )


if __name__ == "__main__":
    run_main(main)
