"""The TensorFlow tutorial's data set, TED talks Portuguese -> English (downloads it).

The tutorial's model size (4+4 layers, d_model 128, 8 heads, d_ff 512), 20,000 steps with the
paper's inverse-square-root schedule. Not trained in this repository: no measured result
(docs/RESULTS.md records Multi30k only).
"""

from configs import base


def get_config():
    config = base.get_config()
    config.data.name = "ted_hrlr_translate/pt_to_en"
    config.data.test_split = "test"
    config.model.num_layers = 4
    config.model.num_decoder_layers = 4
    config.model.d_model = 128
    config.model.num_heads = 8
    config.model.d_ff = 512
    config.train.steps = 20000
    config.train.warmup_steps = 4000
    return config
