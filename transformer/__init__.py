"""A from-scratch Transformer (Vaswani et al., 2017) in TensorFlow / Keras 3.

Modules, in reading order: ``masks`` (the one boolean mask convention), ``dense`` (a Dense
layer that skips ``tensordot``), ``attention`` (scaled dot-product and multi-head attention),
``settings`` (``TransformerConfig``: the model's settings, checked once), ``dropout`` and
``normalization`` (dropout and layer norm, made cheaper for CPUs), ``embedding``
(scaled token embeddings and sinusoidal positions), ``building`` (a ``build()`` for layers made
of self-building sublayers), ``layers`` (encoder and decoder layers),
``model`` (the ``Transformer``), ``classifier`` (its encoder as a text classifier).
"""

from transformer.attention import MultiHeadAttention, masked_softmax, scaled_dot_product_attention
from transformer.classifier import TextClassifier
from transformer.dense import Dense
from transformer.dropout import Dropout
from transformer.embedding import TokenEmbedding, positional_encoding
from transformer.layers import DecoderLayer, EncoderLayer, FeedForward
from transformer.masks import causal_mask, combine_masks, padding_mask
from transformer.model import Transformer
from transformer.normalization import LayerNormalization
from transformer.settings import LAYER_NORM_EPSILON, SettingError, TransformerConfig

__all__ = [
    "LAYER_NORM_EPSILON",
    "DecoderLayer",
    "Dense",
    "Dropout",
    "EncoderLayer",
    "FeedForward",
    "LayerNormalization",
    "MultiHeadAttention",
    "SettingError",
    "TextClassifier",
    "TokenEmbedding",
    "Transformer",
    "TransformerConfig",
    "causal_mask",
    "combine_masks",
    "masked_softmax",
    "padding_mask",
    "positional_encoding",
    "scaled_dot_product_attention",
]
