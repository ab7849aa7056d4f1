"""Encoder and decoder layers: attention and feed-forward sublayers with residuals and layer norm.

Each sublayer is wrapped as in the paper (post-norm, ``LayerNorm(x + Dropout(f(x)))``) or, with
``norm_first=True``, as in most later work (pre-norm, ``x + Dropout(f(LayerNorm(x)))``), which
trains more stably without a long warm-up. Pre-norm stacks add a final layer norm
(:class:`transformer.model.Transformer` does it).
"""

from __future__ import annotations

import dataclasses

import keras
import tensorflow as tf

from transformer.attention import MultiHeadAttention
from transformer.building import SublayersBuildOnFirstCall
from transformer.dense import Dense
from transformer.dropout import Dropout
from transformer.masks import causal_mask
from transformer.normalization import LayerNormalization
from transformer.settings import TransformerConfig, check_rate

# Self-attention cache of one decoder layer: (key_heads, value_heads), each
# (batch, num_heads, length, key_dim): a buffer of max_length positions with those decoded so far
# filled in, or (a growing cache) exactly the positions decoded so far.
LayerCache = tuple[tf.Tensor, tf.Tensor]


class FeedForward(SublayersBuildOnFirstCall, keras.layers.Layer):
    """Position-wise feed-forward network: ``Dense(d_model)(relu(Dense(d_ff)(x)))``.

    Example:
        >>> FeedForward(d_model=512, d_ff=2048)(tf.ones([2, 5, 512])).shape
        TensorShape([2, 5, 512])
    """

    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.0, **kwargs) -> None:
        super().__init__(**kwargs)
        check_rate("dropout", dropout)
        self.d_model, self.d_ff, self.dropout = d_model, d_ff, dropout
        self.hidden = Dense(d_ff, activation="relu", name="hidden", dtype=self.dtype_policy)
        self.hidden_dropout = Dropout(dropout, dtype=self.dtype_policy)
        self.output_projection = Dense(d_model, name="output", dtype=self.dtype_policy)

    def call(self, x: tf.Tensor, training: bool = False) -> tf.Tensor:
        return self.output_projection(self.hidden_dropout(self.hidden(x), training=training))

    def get_config(self) -> dict:
        config = super().get_config()
        config.update(d_model=self.d_model, d_ff=self.d_ff, dropout=self.dropout)
        return config


class _TransformerLayer(SublayersBuildOnFirstCall, keras.layers.Layer):
    """What encoder and decoder layers share: self-attention and feed-forward blocks, residuals.

    Args:
        config: the model's settings; a layer reads ``d_model``, ``num_heads``, ``d_ff``, the
            three dropout rates and ``norm_first``.
    """

    def __init__(self, config: TransformerConfig, **kwargs) -> None:
        super().__init__(**kwargs)
        self.config = config
        self.residual_dropout = Dropout(config.dropout, dtype=self.dtype_policy)
        self.self_attention = self._attention("self_attention")
        self.self_attention_norm = self._norm("self_attention_norm")
        self.feed_forward = FeedForward(
            config.d_model,
            config.d_ff,
            config.activation_dropout,
            name="feed_forward",
            dtype=self.dtype_policy,
        )
        self.feed_forward_norm = self._norm("feed_forward_norm")

    def _attention(self, name: str) -> MultiHeadAttention:
        return MultiHeadAttention(
            self.config.num_heads,
            self.config.d_model // self.config.num_heads,
            dropout=self.config.attention_dropout,
            name=name,
            dtype=self.dtype_policy,
        )

    def _norm(self, name: str) -> LayerNormalization:
        return LayerNormalization(name=name, dtype=self.dtype_policy)

    def _sublayer_input(self, x: tf.Tensor, norm: LayerNormalization) -> tf.Tensor:
        """What a sublayer reads: ``LayerNorm(x)`` in pre-norm, ``x`` in post-norm."""
        return norm(x) if self.config.norm_first else x

    def _add_residual(
        self,
        x: tf.Tensor,
        sublayer_output: tf.Tensor,
        norm: LayerNormalization,
        training: bool,
    ) -> tf.Tensor:
        """``x + Dropout(f)`` in pre-norm, ``LayerNorm(x + Dropout(f))`` in post-norm."""
        x = x + self.residual_dropout(sublayer_output, training=training)
        return x if self.config.norm_first else norm(x)

    def _self_attention_block(
        self,
        x: tf.Tensor,
        mask: tf.Tensor | None,
        training: bool,
        return_attention_scores: bool = False,
    ) -> tf.Tensor | tuple[tf.Tensor, tf.Tensor]:
        y = self._sublayer_input(x, self.self_attention_norm)
        y = self.self_attention(
            y,
            y,
            y,
            attention_mask=mask,
            return_attention_scores=return_attention_scores,
            training=training,
        )
        if return_attention_scores:
            y, weights = y
            return self._add_residual(x, y, self.self_attention_norm, training), weights
        return self._add_residual(x, y, self.self_attention_norm, training)

    def _feed_forward_block(self, x: tf.Tensor, training: bool) -> tf.Tensor:
        y = self.feed_forward(self._sublayer_input(x, self.feed_forward_norm), training=training)
        return self._add_residual(x, y, self.feed_forward_norm, training)

    def get_config(self) -> dict:
        return {**super().get_config(), "config": dataclasses.asdict(self.config)}

    @classmethod
    def from_config(cls, config: dict) -> _TransformerLayer:
        settings = TransformerConfig(**config.pop("config"))
        return cls(settings, **config)


class EncoderLayer(_TransformerLayer):
    """Self-attention then feed-forward, each with a residual connection and layer norm.

    Example:
        >>> config = TransformerConfig(source_vocab_size=8000, d_model=512, num_heads=8)
        >>> layer = EncoderLayer(config)
        >>> layer(tf.ones([2, 5, 512]), padding_mask=tf.ones([2, 1, 1, 5], tf.bool)).shape
        TensorShape([2, 5, 512])
    """

    def call(
        self,
        x: tf.Tensor,
        padding_mask: tf.Tensor | None = None,
        return_attention_scores: bool = False,
        training: bool = False,
    ) -> tf.Tensor | tuple[tf.Tensor, tf.Tensor]:
        """``(batch, length, d_model)`` -> the same shape; with ``return_attention_scores``
        also the self-attention weights ``(batch, heads, length, length)``."""
        if return_attention_scores:
            x, weights = self._self_attention_block(x, padding_mask, training, True)
            return self._feed_forward_block(x, training), weights
        x = self._self_attention_block(x, padding_mask, training)
        return self._feed_forward_block(x, training)


class DecoderLayer(_TransformerLayer):
    """Masked self-attention, encoder-decoder cross-attention, feed-forward.

    :meth:`call` runs all target positions at once (training); :meth:`step` runs one new position
    against a key/value cache (incremental decoding) and gives the same result.

    Example:
        >>> config = TransformerConfig(source_vocab_size=8000, d_model=512, num_heads=8)
        >>> layer = DecoderLayer(config)
        >>> layer(tf.ones([2, 4, 512]), tf.ones([2, 6, 512])).shape
        TensorShape([2, 4, 512])
    """

    def __init__(self, config: TransformerConfig, **kwargs) -> None:
        super().__init__(config, **kwargs)
        self.cross_attention = self._attention("cross_attention")
        self.cross_attention_norm = self._norm("cross_attention_norm")

    def _cross_attention_and_feed_forward(
        self,
        x: tf.Tensor,
        memory_heads: LayerCache,
        memory_mask: tf.Tensor | None,
        training: bool,
    ) -> tuple[tf.Tensor, tf.Tensor]:
        y = self._sublayer_input(x, self.cross_attention_norm)
        y, weights = self.cross_attention.attend(y, *memory_heads, memory_mask, training=training)
        x = self._add_residual(x, y, self.cross_attention_norm, training)
        return self._feed_forward_block(x, training), weights

    def call(
        self,
        x: tf.Tensor,
        memory: tf.Tensor,
        self_attention_mask: tf.Tensor | None = None,
        memory_mask: tf.Tensor | None = None,
        return_attention_scores: bool = False,
        training: bool = False,
    ) -> tf.Tensor | tuple[tf.Tensor, tf.Tensor]:
        """Args:
        x: ``(batch, target_len, d_model)`` embedded target prefix.
        memory: ``(batch, source_len, d_model)`` encoder output.
        self_attention_mask: e.g. causal AND target padding; a causal mask is applied anyway.
        memory_mask: ``(batch, 1, 1, source_len)`` source padding mask.
        return_attention_scores: also return the cross-attention weights
            ``(batch, heads, target_len, source_len)``.
        """
        causal = causal_mask(tf.shape(x)[1])
        mask = (
            causal if self_attention_mask is None else tf.logical_and(causal, self_attention_mask)
        )
        x = self._self_attention_block(x, mask, training)
        memory_heads = self.cross_attention.project_keys_values(memory, memory)
        x, weights = self._cross_attention_and_feed_forward(x, memory_heads, memory_mask, training)
        return (x, weights) if return_attention_scores else x

    def step(
        self,
        x: tf.Tensor,
        index: tf.Tensor,
        cache: LayerCache,
        memory_heads: LayerCache,
        memory_mask: tf.Tensor | None = None,
        growing: bool = False,
    ) -> tuple[tf.Tensor, LayerCache]:
        """Decodes the single position ``index`` (inference only, no dropout).

        Args:
            x: ``(batch, 1, d_model)`` embedding of the token at position ``index``.
            index: scalar int32, the position being decoded.
            cache: this layer's self-attention key/value heads for positions ``< index``: a
                buffer ``(batch, heads, max_length, depth)`` each, which the new position is
                written into, or with ``growing`` exactly ``(batch, heads, index, depth)``, which
                the new position is appended to (shapes change every step: not under XLA).
            memory_heads: cross-attention key/value heads of the encoder output, computed once per
                sentence with ``cross_attention.project_keys_values``.
            memory_mask: ``(batch, 1, 1, source_len)`` source padding mask.

        Returns:
            ``(batch, 1, d_model)`` output and the updated cache.
        """
        y = self._sublayer_input(x, self.self_attention_norm)
        key, value = self.self_attention.project_keys_values(y, y)  # (batch, heads, 1, depth)
        if growing:  # (batch, heads, index, depth) -> (batch, heads, index + 1, depth)
            keys = tf.concat([cache[0], key], axis=2)
            values = tf.concat([cache[1], value], axis=2)
            mask = None  # every cached key is at a position <= index
        else:
            max_length = tf.shape(cache[0])[2]
            is_index = (tf.range(max_length) == index)[:, tf.newaxis]  # (max_length, 1)
            keys = tf.where(is_index, key, cache[0])  # position `index` written into the cache
            values = tf.where(is_index, value, cache[1])
            mask = causal_mask(1, max_length, query_offset=index)  # keys 0..index only
        y, _ = self.self_attention.attend(y, keys, values, mask)
        x = self._add_residual(x, y, self.self_attention_norm, training=False)
        x, _ = self._cross_attention_and_feed_forward(x, memory_heads, memory_mask, training=False)
        return x, (keys, values)
