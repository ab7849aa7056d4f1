"""Multi30k English -> German: the default's recipe with 3 + 3 layers, the model measured in the
README's results (the 4 + 2 split of the default was measured on German -> English only)."""

from configs import multi30k_de_en


def get_config():
    config = multi30k_de_en.get_config()
    config.data.name = "multi30k/en-de"
    config.model.num_layers = 3
    config.model.num_decoder_layers = 3
    return config
