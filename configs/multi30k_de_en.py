"""The default: Multi30k German -> English, sized to train within an hour on two CPU cores.

3+3 pre-norm layers (d_model 256, 4 heads, d_ff 1024; 7.58 M parameters with the 8,000-piece
joint vocabulary), float32, 3,000 steps of 2,048 target tokens at a peak learning rate of 2e-3
with a cosine decay, dropout 0.1; beam 4, length penalty 1.2, the average of the last 5
checkpoints. Measured: test2016 BLEU 41.99 (lower-cased 42.22, chrF2 61.00) after 18 min 47 s of
training on a 2-core Zen 5 EPYC (bash scripts/main.sh in a clean clone, 2026-11-25). How each
setting was chosen: docs/RESULTS.md.
"""

from configs import base


def get_config():
    config = base.get_config()
    config.data.name = "multi30k/de-en"
    config.data.max_length = 64
    config.data.tokens_per_batch = 2048
    config.tokenizer.vocab_size = 8000
    config.model.num_layers = 3
    config.model.d_model = 256
    config.model.num_heads = 4
    config.model.d_ff = 1024
    config.model.dropout = 0.1
    config.model.norm_first = True
    config.train.steps = 3000
    config.train.warmup_steps = 300
    config.train.peak_learning_rate = 2e-3
    config.train.decay = "cosine"
    config.train.log_every = 25
    config.train.checkpoint_every = 200
    config.train.keep_checkpoints = 5
    config.train.eval_every = 1000
    config.train.eval_max_sentences = 300
    config.decode.beam_size = 4
    config.decode.length_penalty = 1.2
    return config
