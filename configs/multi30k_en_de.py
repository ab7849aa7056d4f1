"""Multi30k English -> German: the default's recipe with 3 + 3 layers, the model measured in the
README's results (the 4 + 2 split was measured on German -> English only), and a length penalty
chosen on the validation split (beam 4: 34.72 / 35.15 / 35.43 / 33.87 BLEU at 0.6 / 1.0 / 1.4 /
2.0; the German outputs were short, brevity penalty 0.942 at 1.0)."""

from configs import multi30k_de_en


def get_config():
    config = multi30k_de_en.get_config()
    config.data.name = "multi30k/en-de"
    config.model.num_layers = 3
    config.model.num_decoder_layers = 3
    config.decode.length_penalty = 1.4
    return config
