"""Multi30k English -> German, the same model as the default."""

from configs import multi30k_de_en


def get_config():
    config = multi30k_de_en.get_config()
    config.data.name = "multi30k/en-de"
    return config
