"""The paper's base model (6+6 layers, d_model 512) on WMT14 German -> English (downloads the
data; for accelerators). TFDS's wmt14_translate/de-en has German sources and English targets.
Not trained in this repository: no measured result (docs/RESULTS.md records Multi30k only).
"""

from configs import base


def get_config():
    config = base.get_config()
    config.data.name = "wmt14_translate/de-en"
    config.data.test_split = "test"
    config.data.max_length = 256
    config.data.tokens_per_batch = 25000
    config.tokenizer.vocab_size = 37000
    config.tokenizer.model_type = "bpe"
    config.model.num_layers = 6
    config.model.num_decoder_layers = 6
    config.model.d_model = 512
    config.model.num_heads = 8
    config.model.d_ff = 2048
    config.model.dropout = 0.1
    config.train.steps = 100000
    config.train.warmup_steps = 4000
    config.train.precision = "mixed_bfloat16"
    config.train.checkpoint_every = 2000
    config.train.eval_every = 5000
    return config
