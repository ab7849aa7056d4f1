"""Multi30k multilingual: one model for the 12 directions among English, German, French and
Czech, the target language named by a tag in front of the source (Johnson et al., 2017).

The De→En default's architecture (3+3 pre-norm layers, d_model 256, 4 heads, d_ff 1024) with a
10,000-piece joint vocabulary for the four languages (the four tags included), mixed bfloat16,
4,096 target tokens a step. Directions are sampled in proportion to their data, which is
uniform here: each has the same 29,000 sentences. Validation BLEU is greedy on the first 100
sentences of each direction; their mean picks the best checkpoint. Decoding: beam 4, length
penalty 1.2, the average of the last 5 checkpoints. Results and timing: docs/RESULTS.md.
"""

from configs import multi30k_de_en


def get_config():
    config = multi30k_de_en.get_config()
    config.data.name = "multi30k/multilingual"
    config.data.tokens_per_batch = 4096
    config.tokenizer.vocab_size = 10_000
    config.train.precision = "mixed_bfloat16"
    config.train.steps = 4_000
    config.train.warmup_steps = 400
    config.train.checkpoint_every = 500
    config.train.eval_every = 1000
    config.train.eval_max_sentences = 100
    return config
