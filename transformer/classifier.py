"""The Transformer's encoder as a text classifier: the tutorials' spam filter.

Token embeddings -> the encoder layers (the translation model's own ``EncoderLayer``, attention
and masks) -> one vector a text (pooling) -> a dense head. Two classes give one logit (a
sigmoid's: the second class's log-odds), more give one logit a class (a softmax's).

Pooling: ``"mean"``, the mean of the encoder's output over the text's tokens (padding left
out), or ``"first"``, the output at the first token (BERT's ``[CLS]``: give every text the same
first token, e.g. BOS).
"""

from __future__ import annotations

import dataclasses

import keras
import tensorflow as tf

from transformer.building import SublayersBuildOnFirstCall
from transformer.dense import Dense
from transformer.dropout import Dropout
from transformer.embedding import TokenEmbedding
from transformer.layers import EncoderLayer
from transformer.masks import padding_mask
from transformer.normalization import LayerNormalization
from transformer.settings import SettingError, TransformerConfig

POOLINGS = ("mean", "first")


class TextClassifier(SublayersBuildOnFirstCall, keras.Model):
    """Classifies ``(batch, length)`` token ids (padded with ``config.pad_id``).

    Args:
        config: the encoder's settings (``source_vocab_size``, ``num_layers``, ``d_model``,
            ``num_heads``, ``d_ff``, the dropout rates, ``norm_first``; the decoder's unused).
        num_classes: 2 or more.
        pooling: one of :data:`POOLINGS`.

    Example:
        >>> config = TransformerConfig(source_vocab_size=8000, num_layers=2, d_model=64,
        ...                            num_heads=4, d_ff=128)
        >>> TextClassifier(config, num_classes=2)(tf.constant([[5, 6, 7, 0]])).shape
        TensorShape([1, 1])
    """

    def __init__(
        self, config: TransformerConfig, num_classes: int = 2, pooling: str = "mean", **kwargs
    ) -> None:
        super().__init__(**kwargs)
        if not isinstance(config, TransformerConfig):
            raise TypeError(f"config must be a TransformerConfig, got {config!r}.")
        if not isinstance(num_classes, int) or isinstance(num_classes, bool) or num_classes < 2:
            raise SettingError("num_classes", num_classes, "an integer of at least 2")
        if pooling not in POOLINGS:
            raise SettingError("pooling", pooling, f"one of {POOLINGS}")
        self.config, self.num_classes, self.pooling = config, num_classes, pooling
        policy = self.dtype_policy
        self.embedding = TokenEmbedding(
            config.source_vocab_size, config.d_model, dtype=policy, name="embedding"
        )
        self.embedding_dropout = Dropout(config.dropout, dtype=policy)
        self.encoder_layers = [
            EncoderLayer(config, dtype=policy, name=f"encoder_{i}")
            for i in range(config.num_layers)
        ]
        # Pre-norm stacks end with a layer norm; post-norm layers already end with one.
        self.encoder_norm = (
            LayerNormalization(dtype=policy, name="encoder_norm")
            if config.norm_first
            else keras.layers.Identity(dtype=policy, name="encoder_norm")
        )
        self.head_dropout = Dropout(config.dropout, dtype=policy)
        self.head = Dense(1 if num_classes == 2 else num_classes, dtype=policy, name="head")

    def call(self, token_ids: tf.Tensor, training: bool = False) -> tf.Tensor:
        """``(batch, length)`` ids -> float32 logits ``(batch, 1)`` (two classes) or
        ``(batch, num_classes)``."""
        mask = padding_mask(token_ids, self.config.pad_id)  # (batch, 1, 1, length)
        x = self.embedding_dropout(self.embedding(token_ids), training=training)
        for layer in self.encoder_layers:
            x = layer(x, padding_mask=mask, training=training)
        x = self.encoder_norm(x)  # (batch, length, d_model)
        if self.pooling == "first":
            pooled = x[:, 0, :]
        else:
            real = tf.cast(mask[:, 0, 0, :, tf.newaxis], x.dtype)  # (batch, length, 1)
            pooled = tf.reduce_sum(x * real, axis=1) / tf.maximum(tf.reduce_sum(real, 1), 1.0)
        return tf.cast(self.head(self.head_dropout(pooled, training=training)), tf.float32)

    def get_config(self) -> dict:
        return {
            **super().get_config(),
            "config": dataclasses.asdict(self.config),
            "num_classes": self.num_classes,
            "pooling": self.pooling,
        }

    @classmethod
    def from_config(cls, config: dict) -> TextClassifier:
        settings = TransformerConfig(**config.pop("config"))
        return cls(settings, **config)
