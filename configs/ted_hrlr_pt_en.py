"""The TensorFlow tutorial's data set, TED talks Portuguese -> English (downloads it)."""

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
