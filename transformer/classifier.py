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


def class_probabilities(logits: tf.Tensor) -> tf.Tensor:
    """A :class:`TextClassifier`'s logits -> ``(batch, num_classes)`` probabilities: a
    sigmoid's two (one logit) or a softmax's.

    Example:
        >>> class_probabilities(tf.constant([[0.0]])).numpy()
        array([[0.5, 0.5]], dtype=float32)
    """
    logits = tf.cast(logits, tf.float32)
    if logits.shape[-1] == 1:
        positive = tf.sigmoid(logits)
        return tf.concat([1.0 - positive, positive], axis=-1)
    return tf.nn.softmax(logits, axis=-1)


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

    def call(
        self, token_ids: tf.Tensor, return_attention_scores: bool = False, training: bool = False
    ) -> tf.Tensor | tuple[tf.Tensor, tf.Tensor]:
        """``(batch, length)`` ids -> float32 logits ``(batch, 1)`` (two classes) or
        ``(batch, num_classes)``; with ``return_attention_scores`` also the last encoder
        layer's self-attention weights ``(batch, heads, length, length)`` (for heat maps)."""
        mask = padding_mask(token_ids, self.config.pad_id)  # (batch, 1, 1, length)
        x = self.embedding_dropout(self.embedding(token_ids), training=training)
        for layer in self.encoder_layers[:-1]:
            x = layer(x, padding_mask=mask, training=training)
        x, weights = self.encoder_layers[-1](
            x, padding_mask=mask, return_attention_scores=True, training=training
        )
        x = self.encoder_norm(x)  # (batch, length, d_model)
        if self.pooling == "first":
            pooled = x[:, 0, :]
        else:
            real = tf.cast(mask[:, 0, 0, :, tf.newaxis], x.dtype)  # (batch, length, 1)
            pooled = tf.reduce_sum(x * real, axis=1) / tf.maximum(tf.reduce_sum(real, 1), 1.0)
        logits = tf.cast(self.head(self.head_dropout(pooled, training=training)), tf.float32)
        return (logits, tf.cast(weights, tf.float32)) if return_attention_scores else logits

    def pooled_attention(self, token_ids: tf.Tensor, weights: tf.Tensor) -> tf.Tensor:
        """What the pooled vector's last layer attended to: ``(batch, heads, length)`` weights of
        each head over the text's tokens (each row sums to 1), from :meth:`call`'s ``weights``
        ``(batch, heads, length, length)``: the first token's row (``"first"`` pooling) or the
        mean of the text's rows (``"mean"``). A heat map of a text draws these."""
        if self.pooling == "first":
            return weights[:, :, 0, :]
        real = tf.cast(token_ids != self.config.pad_id, weights.dtype)  # (batch, length)
        rows = real[:, tf.newaxis, :, tf.newaxis]  # (batch, 1, length, 1): the text's queries
        count = tf.maximum(tf.reduce_sum(real, axis=1), 1.0)[:, tf.newaxis, tf.newaxis]
        return tf.reduce_sum(weights * rows, axis=2) / count

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
