"""The encoder-decoder Transformer (Vaswani et al., 2017), with incremental decoding.

Read top to bottom: embeddings -> encoder stack -> decoder stack -> tied output projection.
``Transformer.encode`` / ``Transformer.decode`` run whole sequences (training, scoring);
``init_cache`` / ``decode_step`` run the decoder one position at a time with a key/value cache
(greedy and beam search), giving the same logits as ``decode``, vocabulary-major.
"""

from __future__ import annotations

import keras
import tensorflow as tf

from transformer.building import SublayersBuildOnFirstCall
from transformer.dense import Dense
from transformer.dropout import Dropout, sublayer_dropout_rates
from transformer.embedding import TokenEmbedding
from transformer.layers import DecoderLayer, EncoderLayer
from transformer.masks import padding_mask
from transformer.normalization import LayerNormalization

# The incremental-decoding state: {"memory_mask": (batch, 1, 1, source_len),
#  "memory": [(key_heads, value_heads)] per layer, (batch, heads, source_len, depth) each,
#  "self": [(key_heads, value_heads)] per layer, (batch, heads, max_length, depth) each, or
#  (batch, heads, positions decoded so far, depth) for a growing cache}.
# Every tensor has the batch first, so beam search reorders a cache with one tf.gather per leaf.
DecodeCache = dict

SHARED_EMBEDDINGS = ("all", "target", "none")


class Transformer(SublayersBuildOnFirstCall, keras.Model):
    """Encoder-decoder Transformer returning float32 vocabulary logits.

    Args:
        source_vocab_size: source vocabulary size.
        target_vocab_size: target vocabulary size; defaults to ``source_vocab_size``.
        num_layers: encoder layers (N in the paper), and decoder layers unless
            ``num_decoder_layers`` is given.
        num_decoder_layers: decoder layers; defaults to ``num_layers``. A deeper encoder with a
            shallower decoder (Kasai et al., 2021) decodes faster, since the encoder runs once per
            sentence and the decoder once per output token (on Multi30k, 4+2 against 3+3: 1.2-1.4x
            faster, 0.55 validation BLEU lower; see the README).
        d_model: model width.
        num_heads: attention heads; each has depth ``d_model // num_heads``.
        d_ff: inner width of the feed-forward sublayers.
        dropout: dropout rate on the embeddings and each sublayer's output (before the residual
            sum), and the default of the next two.
        attention_dropout: rate on the attention weights; ``None``: ``dropout``.
        activation_dropout: rate on the feed-forward hidden activations; ``None``: ``dropout``.
            fairseq's transformer configs keep these two at 0 and ``dropout`` at 0.1-0.3.
        shared_embeddings: ``"all"`` — one matrix embeds source and target tokens and projects the
            output (needs a joint vocabulary); ``"target"`` — the target embedding is the output
            projection; ``"none"`` — three separate matrices.
        norm_first: pre-norm layers (with a final layer norm per stack) instead of post-norm.
        pad_id: the padding token id; padded source and target keys are masked out.

    Example:
        >>> model = Transformer(source_vocab_size=8000, num_layers=2, d_model=128, num_heads=4,
        ...                     d_ff=512)
        >>> model((tf.constant([[5, 6, 7, 0]]), tf.constant([[2, 8, 9]]))).shape
        TensorShape([1, 3, 8000])
    """

    def __init__(
        self,
        source_vocab_size: int,
        target_vocab_size: int | None = None,
        num_layers: int = 6,
        num_decoder_layers: int | None = None,
        d_model: int = 512,
        num_heads: int = 8,
        d_ff: int = 2048,
        dropout: float = 0.1,
        shared_embeddings: str = "all",
        norm_first: bool = False,
        pad_id: int = 0,
        attention_dropout: float | None = None,
        activation_dropout: float | None = None,
        **kwargs,
    ) -> None:
        super().__init__(**kwargs)
        target_vocab_size = target_vocab_size or source_vocab_size
        num_decoder_layers = num_layers if num_decoder_layers is None else num_decoder_layers
        for name, value in [
            ("source_vocab_size", source_vocab_size),
            ("target_vocab_size", target_vocab_size),
            ("num_layers", num_layers),
            ("num_decoder_layers", num_decoder_layers),
            ("d_model", d_model),
            ("num_heads", num_heads),
            ("d_ff", d_ff),
        ]:
            if not isinstance(value, int) or value <= 0:
                raise ValueError(f"{name} must be a positive integer, got {value!r}.")
        if d_model % num_heads:
            raise ValueError(f"d_model ({d_model}) must be divisible by num_heads ({num_heads}).")
        if d_model % 2:
            raise ValueError(f"d_model must be even for the sinusoidal encoding, got {d_model}.")
        attention_dropout, activation_dropout = sublayer_dropout_rates(
            dropout, attention_dropout, activation_dropout
        )
        if shared_embeddings not in SHARED_EMBEDDINGS:
            raise ValueError(
                f"shared_embeddings must be one of {SHARED_EMBEDDINGS}, got {shared_embeddings!r}."
            )
        if shared_embeddings == "all" and source_vocab_size != target_vocab_size:
            raise ValueError(
                f"shared_embeddings='all' needs one joint vocabulary, but source_vocab_size="
                f"{source_vocab_size} != target_vocab_size={target_vocab_size}; use 'target' or "
                "'none' for separate vocabularies."
            )
        self.source_vocab_size, self.target_vocab_size = source_vocab_size, target_vocab_size
        self.num_layers, self.num_decoder_layers = num_layers, num_decoder_layers
        self.d_model, self.num_heads, self.d_ff = d_model, num_heads, d_ff
        self.dropout, self.shared_embeddings = dropout, shared_embeddings
        self.attention_dropout, self.activation_dropout = attention_dropout, activation_dropout
        self.norm_first, self.pad_id = norm_first, pad_id

        policy = self.dtype_policy
        self.target_embedding = TokenEmbedding(
            target_vocab_size, d_model, dtype=policy, name="target_embedding"
        )
        self.source_embedding = (
            self.target_embedding
            if shared_embeddings == "all"
            else TokenEmbedding(source_vocab_size, d_model, dtype=policy, name="source_embedding")
        )
        self.output_projection = (
            None
            if shared_embeddings != "none"
            else Dense(target_vocab_size, dtype=policy, name="output_projection")
        )
        self.embedding_dropout = Dropout(dropout, dtype=policy)
        layer_args = dict(
            d_model=d_model,
            num_heads=num_heads,
            d_ff=d_ff,
            dropout=dropout,
            attention_dropout=attention_dropout,
            activation_dropout=activation_dropout,
            norm_first=norm_first,
            dtype=policy,
        )
        self.encoder_layers = [
            EncoderLayer(**layer_args, name=f"encoder_{i}") for i in range(num_layers)
        ]
        self.decoder_layers = [
            DecoderLayer(**layer_args, name=f"decoder_{i}") for i in range(num_decoder_layers)
        ]
        # Pre-norm stacks end with a layer norm; post-norm layers already end with one.
        self.encoder_norm = self._final_norm("encoder_norm")
        self.decoder_norm = self._final_norm("decoder_norm")

    def _final_norm(self, name: str) -> keras.layers.Layer:
        if not self.norm_first:
            return keras.layers.Identity(dtype=self.dtype_policy, name=name)
        return LayerNormalization(epsilon=1e-6, dtype=self.dtype_policy, name=name)

    def _logits(self, states: tf.Tensor) -> tf.Tensor:
        if self.output_projection is None:
            return self.target_embedding.logits(states)
        return tf.cast(self.output_projection(states), tf.float32)

    def _vocab_major_logits(self, states: tf.Tensor) -> tf.Tensor:
        """``(rows, d_model)`` -> float32 ``(target_vocab_size, rows)``."""
        if self.output_projection is None:
            return self.target_embedding.vocab_major_logits(states)
        return tf.transpose(self._logits(states))

    def encode(self, source_ids: tf.Tensor, training: bool = False) -> tuple[tf.Tensor, tf.Tensor]:
        """``(batch, source_len)`` ids -> ``(memory, memory_mask)``.

        ``memory`` is ``(batch, source_len, d_model)``; ``memory_mask`` the
        ``(batch, 1, 1, source_len)`` source padding mask the decoder needs with it.
        """
        memory_mask = padding_mask(source_ids, self.pad_id)
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
        self_attention_mask = padding_mask(target_in_ids, self.pad_id)  # causal added per layer
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
        depth = self.d_model // self.num_heads
        length = 0 if max_length is None else max_length
        empty = tf.zeros([batch, self.num_heads, length, depth], memory.dtype)
        return {
            "memory_mask": memory_mask,
            "memory": [
                layer.cross_attention.project_keys_values(memory, memory)
                for layer in self.decoder_layers
            ],
            "self": [(empty, empty) for _ in self.decoder_layers],
        }

    def decode_step(
        self, token_ids: tf.Tensor, index: tf.Tensor, cache: DecodeCache, growing: bool = False
    ) -> tuple[tf.Tensor, DecodeCache]:
        """Decodes position ``index`` given the token there (BOS at index 0).

        Args:
            token_ids: ``(batch,)`` the target token at position ``index``.
            index: scalar int32 position, ``0 <= index < max_length``.
            cache: from :meth:`init_cache` or the previous ``decode_step``.
            growing: ``cache`` is a growing one (``init_cache(..., max_length=None)``): its
                self-attention keys/values hold exactly positions ``0 .. index - 1``.

        Returns:
            float32 logits for position ``index + 1``'s token, **vocabulary-major**:
            ``(target_vocab_size, batch)``, the layout the tied output projection gives without a
            transposition (``TokenEmbedding.vocab_major_logits``), and the updated cache.
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
        logits = self._vocab_major_logits(self.decoder_norm(x)[:, 0, :])  # (vocab, batch)
        return logits, {**cache, "self": new_self}

    def get_config(self) -> dict:
        config = super().get_config()
        config.update(
            source_vocab_size=self.source_vocab_size,
            target_vocab_size=self.target_vocab_size,
            num_layers=self.num_layers,
            num_decoder_layers=self.num_decoder_layers,
            d_model=self.d_model,
            num_heads=self.num_heads,
            d_ff=self.d_ff,
            dropout=self.dropout,
            shared_embeddings=self.shared_embeddings,
            norm_first=self.norm_first,
            pad_id=self.pad_id,
            attention_dropout=self.attention_dropout,
            activation_dropout=self.activation_dropout,
        )
        return config


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
