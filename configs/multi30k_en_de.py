"""Multi30k English -> German: the default's model with dropout 0.2 and subword sampling (alpha
0.5), mixed bfloat16, 12,000 steps; length penalty 1.4, the average of the last 5 checkpoints.

Measured on a 2-core Zen 5 EPYC (2026-11-24): 53 min 27 s of training, validation BLEU 42.32,
test2016 40.24 (lower-cased 40.72); five runs: test2016 lower-cased mean 40.86 (40.36-41.16).
On a CPU without native bfloat16 (slower there) pass --config.train.precision=float32
--config.train.steps=3000 --config.model.dropout=0.1 --config.tokenizer.sampling_alpha=0
(validation 39.31, 53 min 33 s on a Zen 2 EPYC, 2026-11-23). History: docs/RESULTS.md.
"""

from configs import multi30k_de_en


def get_config():
    config = multi30k_de_en.get_config()
    config.data.name = "multi30k/en-de"
    config.model.num_layers = 3
    config.model.num_decoder_layers = 3
    config.model.dropout = 0.2
    config.train.precision = "mixed_bfloat16"
    config.train.steps = 12000
    config.tokenizer.sampling_alpha = 0.5
    config.decode.length_penalty = 1.4
    return config
