"""The encoder-decoder Transformer (Vaswani et al., 2017), with incremental decoding.

Read top to bottom: embeddings -> encoder stack -> decoder stack -> tied output projection.
``Transformer.encode`` / ``Transformer.decode`` run whole sequences (training, scoring);
``init_cache`` / ``decode_step`` run the decoder one position at a time with a key/value cache
(greedy and beam search), giving the same logits as ``decode``, vocabulary-major.
"""

from __future__ import annotations

import dataclasses

import keras
import tensorflow as tf

from transformer.building import SublayersBuildOnFirstCall
from transformer.dense import Dense
from transformer.dropout import Dropout
from transformer.embedding import TokenEmbedding
from transformer.layers import DecoderLayer, EncoderLayer
from transformer.masks import padding_mask
from transformer.normalization import LayerNormalization
from transformer.settings import TransformerConfig

# The incremental-decoding state: {"memory_mask": (batch, 1, 1, source_len),
#  "memory": [(key_heads, value_heads)] per layer, (batch, heads, source_len, depth) each,
#  "self": [(key_heads, value_heads)] per layer, (batch, heads, max_length, depth) each, or
#  (batch, heads, positions decoded so far, depth) for a growing cache}.
# Every tensor has the batch first, so beam search reorders a cache with one tf.gather per leaf.
DecodeCache = dict


class Transformer(SublayersBuildOnFirstCall, keras.Model):
    """Encoder-decoder Transformer returning float32 vocabulary logits.

    Args:
        config: its settings (:class:`transformer.settings.TransformerConfig`), which its layers
            read too.

    Example:
        >>> config = TransformerConfig(source_vocab_size=8000, num_layers=2, d_model=128,
        ...                            num_heads=4, d_ff=512)
        >>> model = Transformer(config)
        >>> model((tf.constant([[5, 6, 7, 0]]), tf.constant([[2, 8, 9]]))).shape
        TensorShape([1, 3, 8000])
    """

    def __init__(self, config: TransformerConfig, **kwargs) -> None:
        super().__init__(**kwargs)
        if not isinstance(config, TransformerConfig):
            raise TypeError(f"config must be a TransformerConfig, got {config!r}.")
        self.config = config
        policy = self.dtype_policy
        self.target_embedding = TokenEmbedding(
            config.target_vocab_size, config.d_model, dtype=policy, name="target_embedding"
        )
        self.source_embedding = (
            self.target_embedding
            if config.shared_embeddings == "all"
            else TokenEmbedding(
                config.source_vocab_size, config.d_model, dtype=policy, name="source_embedding"
            )
        )
        self.output_projection = (
            None
            if config.shared_embeddings != "none"
            else Dense(config.target_vocab_size, dtype=policy, name="output_projection")
        )
        self.embedding_dropout = Dropout(config.dropout, dtype=policy)
        self.encoder_layers = [
            EncoderLayer(config, dtype=policy, name=f"encoder_{i}")
            for i in range(config.num_layers)
        ]
        self.decoder_layers = [
            DecoderLayer(config, dtype=policy, name=f"decoder_{i}")
            for i in range(config.num_decoder_layers)
        ]
        # Pre-norm stacks end with a layer norm; post-norm layers already end with one.
        self.encoder_norm = self._final_norm("encoder_norm")
        self.decoder_norm = self._final_norm("decoder_norm")

    def _final_norm(self, name: str) -> keras.layers.Layer:
        if not self.config.norm_first:
            return keras.layers.Identity(dtype=self.dtype_policy, name=name)
        return LayerNormalization(dtype=self.dtype_policy, name=name)

    def _logits(self, states: tf.Tensor) -> tf.Tensor:
        if self.output_projection is None:
            return self.target_embedding.logits(states)
        return tf.cast(self.output_projection(states), tf.float32)

    def _vocab_major_logits(
        self, states: tf.Tensor, output_ids: tf.Tensor | None = None
    ) -> tf.Tensor:
        """``(rows, d_model)`` -> float32 ``(target_vocab_size, rows)``, or ``(n, rows)`` for
        ``(n,)`` ``output_ids`` alone."""
        if self.output_projection is None:
            return self.target_embedding.vocab_major_logits(states, output_ids)
        if output_ids is None:
            return tf.transpose(self._logits(states))
        kernel = tf.gather(self.output_projection.kernel, output_ids, axis=1)  # (d_model, n)
        bias = tf.gather(self.output_projection.bias, output_ids)  # (n,)
        logits = tf.matmul(
            tf.cast(kernel, states.dtype), states, transpose_a=True, transpose_b=True
        )
        return tf.cast(logits, tf.float32) + tf.cast(bias, tf.float32)[:, tf.newaxis]

    def encode(self, source_ids: tf.Tensor, training: bool = False) -> tuple[tf.Tensor, tf.Tensor]:
        """``(batch, source_len)`` ids -> ``(memory, memory_mask)``.

        ``memory`` is ``(batch, source_len, d_model)``; ``memory_mask`` the
        ``(batch, 1, 1, source_len)`` source padding mask the decoder needs with it.
        """
        memory_mask = padding_mask(source_ids, self.config.pad_id)
        x = self.embedding_dropout(self.source_embedding(source_ids), training=training)
        for layer in self.encoder_layers:
            x = layer(x, padding_mask=memory_mask, training=training)
        return self.encoder_norm(x), memory_mask

    def decode(
        self,
        target_in_ids: tf.Tensor,
        memory: tf.Tensor,
        memory_mask: tf.Tensor,
        training: bool = False,
        return_attention_scores: bool = False,
    ) -> tf.Tensor | tuple[tf.Tensor, list[tf.Tensor]]:
        """Teacher-forced decoding of ``(batch, target_len)`` ids -> float32 logits
        ``(batch, target_len, target_vocab_size)``; position t sees target tokens 0..t only.

        With ``return_attention_scores`` also returns each decoder layer's cross-attention weights,
        ``(batch, heads, target_len, source_len)``.
        """
        # The causal part is added in each layer.
        self_attention_mask = padding_mask(target_in_ids, self.config.pad_id)
        x = self.embedding_dropout(self.target_embedding(target_in_ids), training=training)
        cross_attention = []
        for layer in self.decoder_layers:
            x, weights = layer(
                x,
                memory,
                self_attention_mask,
                memory_mask,
                return_attention_scores=True,
                training=training,
            )
            cross_attention.append(weights)
        logits = self._logits(self.decoder_norm(x))
        return (logits, cross_attention) if return_attention_scores else logits

    def call(self, inputs: tuple[tf.Tensor, tf.Tensor], training: bool = False) -> tf.Tensor:
        """``(source_ids, target_in_ids)`` -> logits ``(batch, target_len, target_vocab_size)``."""
        source_ids, target_in_ids = inputs
        memory, memory_mask = self.encode(source_ids, training=training)
        return self.decode(target_in_ids, memory, memory_mask, training=training)

    def init_cache(
        self, memory: tf.Tensor, memory_mask: tf.Tensor, max_length: int | tf.Tensor | None
    ) -> DecodeCache:
        """Starts incremental decoding of up to ``max_length`` target positions.

        Projects the encoder output to each decoder layer's cross-attention keys and values once,
        and allocates empty self-attention key/value buffers of ``max_length`` positions (static
        shapes, as XLA needs); ``max_length=None`` starts a growing cache instead, with no
        position yet (``decode_step(..., growing=True)`` appends one per step).
        """
        batch = tf.shape(memory)[0]
        depth = self.config.d_model // self.config.num_heads
        length = 0 if max_length is None else max_length
        empty = tf.zeros([batch, self.config.num_heads, length, depth], memory.dtype)
        return {
            "memory_mask": memory_mask,
            "memory": [
                layer.cross_attention.project_keys_values(memory, memory)
                for layer in self.decoder_layers
            ],
            "self": [(empty, empty) for _ in self.decoder_layers],
        }

    def decode_step(
        self,
        token_ids: tf.Tensor,
        index: tf.Tensor,
        cache: DecodeCache,
        growing: bool = False,
        output_ids: tf.Tensor | None = None,
    ) -> tuple[tf.Tensor, DecodeCache]:
        """Decodes position ``index`` given the token there (BOS at index 0).

        Args:
            token_ids: ``(batch,)`` the target token at position ``index``.
            index: scalar int32 position, ``0 <= index < max_length``.
            cache: from :meth:`init_cache` or the previous ``decode_step``.
            growing: ``cache`` is a growing one (``init_cache(..., max_length=None)``): its
                self-attention keys/values hold exactly positions ``0 .. index - 1``.
            output_ids: ``(n,)`` int32 target ids to score alone (a vocabulary shortlist), or
                None for all.

        Returns:
            float32 logits for position ``index + 1``'s token, **vocabulary-major**:
            ``(target_vocab_size, batch)``, the layout the tied output projection gives without a
            transposition (``TokenEmbedding.vocab_major_logits``), or ``(n, batch)`` with
            ``output_ids`` (row i token ``output_ids[i]``'s), and the updated cache.
        """
        index = tf.convert_to_tensor(index, tf.int32)
        _check_cache_length(cache["self"][0][0].shape[2], tf.get_static_value(index), growing)
        x = self.target_embedding(token_ids[:, tf.newaxis], positions=index[tf.newaxis])
        new_self = []
        for layer, layer_cache, memory_heads in zip(
            self.decoder_layers, cache["self"], cache["memory"], strict=True
        ):
            x, layer_cache = layer.step(
                x, index, layer_cache, memory_heads, cache["memory_mask"], growing
            )
            new_self.append(layer_cache)
        logits = self._vocab_major_logits(self.decoder_norm(x)[:, 0, :], output_ids)  # (V, batch)
        return logits, {**cache, "self": new_self}

    def get_config(self) -> dict:
        return {**super().get_config(), "config": dataclasses.asdict(self.config)}

    @classmethod
    def from_config(cls, config: dict) -> Transformer:
        settings = TransformerConfig(**config.pop("config"))
        return cls(settings, **config)


def _check_cache_length(length: int | None, index: int | None, growing: bool) -> None:
    """A clear error when a step's cache is not the kind ``growing`` says (checked where both
    are known: eagerly, not inside a search's loop)."""
    if length is None or index is None:
        return
    if growing and length != index:
        raise ValueError(
            f"decode_step(growing=True) at index {index} needs a growing cache of exactly "
            f"{index} positions (init_cache(..., max_length=None)), got {length}."
        )
    if not growing and index >= length:
        raise ValueError(
            f"decode_step at index {index} needs a cache buffer of more than {index} positions "
            f"(init_cache(..., max_length)), got {length}; a growing cache needs growing=True."
        )
