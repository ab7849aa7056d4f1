"""Scaled dot-product attention and multi-head attention, from scratch.

Attention(Q, K, V) = softmax(Q K^T / sqrt(d_k)) V, with d_k the depth of *one head* (the paper's
d_k = d_model / h), never the total projection width. Masks follow :mod:`transformer.masks`:
boolean, ``True`` = may attend.
"""

from __future__ import annotations

from collections.abc import Callable

import keras
import tensorflow as tf

from transformer.dense import Dense
from transformer.dropout import Dropout
from transformer.settings import check_rate


def masked_softmax(logits: tf.Tensor, mask: tf.Tensor | None = None) -> tf.Tensor:
    """Softmax over the last axis that ignores positions where ``mask`` is ``False``.

    Computed in float32 whatever the input dtype, and returned in the input dtype: masked logits
    are replaced (not offset by ``-1e9``, which overflows float16), the maximum is subtracted, and
    masked terms are zeroed after ``exp``. A fully masked row gives all-zero weights, never NaN.

    Example:
        >>> masked_softmax(tf.constant([[1.0, 2.0, 3.0]]), tf.constant([[True, True, False]]))
        <tf.Tensor: ... numpy=array([[0.26894143, 0.7310586 , 0.        ]], dtype=float32)>
    """
    scores = tf.cast(logits, tf.float32)
    if mask is None:
        return tf.cast(tf.nn.softmax(scores, axis=-1), logits.dtype)
    scores = tf.where(mask, scores, tf.float32.min)
    scores -= tf.reduce_max(scores, axis=-1, keepdims=True)
    unnormalised = tf.exp(scores) * tf.cast(mask, tf.float32)
    total = tf.reduce_sum(unnormalised, axis=-1, keepdims=True)
    return tf.cast(tf.math.divide_no_nan(unnormalised, total), logits.dtype)


def scaled_dot_product_attention(
    queries: tf.Tensor,
    keys: tf.Tensor,
    values: tf.Tensor,
    mask: tf.Tensor | None = None,
    weights_dropout: Callable[[tf.Tensor], tf.Tensor] | None = None,
) -> tuple[tf.Tensor, tf.Tensor]:
    """Returns ``(output, weights)`` of softmax(Q K^T / sqrt(d_k)) V.

    Args:
        queries: ``(..., query_len, d_k)``.
        keys: ``(..., key_len, d_k)``.
        values: ``(..., key_len, d_v)``; ``d_v`` may differ from ``d_k``.
        mask: booleans broadcastable to ``(..., query_len, key_len)``, ``True`` = may attend.
        weights_dropout: applied to the attention weights before they weigh the values
            (the returned weights are the ones before dropout).

    Returns:
        ``output`` ``(..., query_len, d_v)`` and ``weights`` ``(..., query_len, key_len)``.

    Example:
        >>> q, k, v = tf.ones([2, 5, 64]), tf.ones([2, 7, 64]), tf.ones([2, 7, 32])
        >>> out, w = scaled_dot_product_attention(q, k, v)
        >>> out.shape, w.shape
        (TensorShape([2, 5, 32]), TensorShape([2, 5, 7]))
    """
    key_depth = queries.shape[-1]
    if key_depth is None or keys.shape[-1] != key_depth:
        raise ValueError(
            f"queries and keys need the same, known last dimension (d_k); got queries "
            f"{queries.shape} and keys {keys.shape}."
        )
    # Scaling the queries (query_len x d_k) is cheaper than scaling the scores and keeps the
    # float16 product in range.
    queries = queries * tf.cast(key_depth**-0.5, queries.dtype)
    scores = tf.matmul(queries, keys, transpose_b=True)  # (..., query_len, key_len)
    weights = masked_softmax(scores, mask)
    dropped = weights_dropout(weights) if weights_dropout is not None else weights
    return tf.matmul(dropped, values), weights


def _check_positive_int(name: str, value: object) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise ValueError(f"{name} must be a positive integer, got {value!r}.")


class MultiHeadAttention(keras.layers.Layer):
    """Multi-head attention (Vaswani et al., 2017, section 3.2.2).

    ``W_q``, ``W_k``, ``W_v`` project the inputs to ``num_heads`` heads of depth ``key_dim``,
    ``key_dim`` and ``value_dim``; each head runs scaled dot-product attention; ``W_o`` maps the
    concatenated heads to ``output_dim``. Queries may have another length and another feature size
    than keys and values (encoder-decoder cross-attention).

    Args:
        num_heads: number of heads, the paper's h.
        key_dim: depth of one query/key head, the paper's d_k (d_model / h in the paper).
        value_dim: depth of one value head, the paper's d_v; defaults to ``key_dim``.
        output_dim: width of the output; defaults to the feature size of the queries (d_model).
        dropout: dropout rate on the attention weights (training only).
        use_bias: whether the four projections have a bias.

    Call arguments:
        queries: ``(batch, query_len, query_features)``.
        keys: ``(batch, key_len, key_features)``; defaults to ``queries`` (self-attention).
        values: ``(batch, key_len, value_features)``; defaults to ``keys``.
        attention_mask: booleans, ``True`` = may attend, broadcastable to
            ``(batch, num_heads, query_len, key_len)``; a rank-3 ``(batch, query_len, key_len)``
            mask (Keras' layout) is applied to every head.
        return_attention_scores: also return the ``(batch, num_heads, query_len, key_len)`` weights.
        training: enables dropout.

    Example:
        >>> mha = MultiHeadAttention(num_heads=8, key_dim=64)
        >>> mha(tf.ones([64, 5, 512]), tf.ones([64, 5, 512]), tf.ones([64, 5, 512])).shape
        TensorShape([64, 5, 512])
    """

    def __init__(
        self,
        num_heads: int,
        key_dim: int,
        value_dim: int | None = None,
        output_dim: int | None = None,
        dropout: float = 0.0,
        use_bias: bool = True,
        kernel_initializer: str = "glorot_uniform",
        **kwargs,
    ) -> None:
        super().__init__(**kwargs)
        value_dim = key_dim if value_dim is None else value_dim
        _check_positive_int("num_heads", num_heads)
        _check_positive_int("key_dim", key_dim)
        _check_positive_int("value_dim", value_dim)
        if output_dim is not None:
            _check_positive_int("output_dim", output_dim)
        check_rate("dropout", dropout)
        self.num_heads = num_heads
        self.key_dim = key_dim
        self.value_dim = value_dim
        self.output_dim = output_dim
        self.dropout = dropout
        self.use_bias = use_bias
        self.kernel_initializer = kernel_initializer
        self.W_q = self._projection(num_heads * key_dim, "W_q")
        self.W_k = self._projection(num_heads * key_dim, "W_k")
        self.W_v = self._projection(num_heads * value_dim, "W_v")
        self.W_o = None  # Created in build(): its width defaults to the queries' feature size.
        self.weights_dropout = Dropout(dropout, dtype=self.dtype_policy)

    def _projection(self, units: int, name: str) -> Dense:
        return Dense(
            units,
            name=name,
            use_bias=self.use_bias,
            kernel_initializer=self.kernel_initializer,
            dtype=self.dtype_policy,
        )

    def build(self, queries_shape: tuple) -> None:
        self.W_o = self._projection(self.output_dim or queries_shape[-1], "W_o")
        self.built = True

    def _split_heads(self, x: tf.Tensor, depth: int) -> tf.Tensor:
        batch, length = tf.shape(x)[0], tf.shape(x)[1]
        x = tf.reshape(x, [batch, length, self.num_heads, depth])  # (batch, len, heads, depth)
        return tf.transpose(x, [0, 2, 1, 3])  # (batch, heads, len, depth)

    def project_keys_values(
        self, keys: tf.Tensor, values: tf.Tensor
    ) -> tuple[tf.Tensor, tf.Tensor]:
        """Returns the key and value heads, ``(batch, heads, key_len, key_dim / value_dim)``.

        Incremental decoding computes these once (cross-attention) or once per new position
        (self-attention) and caches them.
        """
        return (
            self._split_heads(self.W_k(keys), self.key_dim),
            self._split_heads(self.W_v(values), self.value_dim),
        )

    def attend(
        self,
        queries: tf.Tensor,
        key_heads: tf.Tensor,
        value_heads: tf.Tensor,
        attention_mask: tf.Tensor | None = None,
        training: bool = False,
    ) -> tuple[tf.Tensor, tf.Tensor]:
        """Attends from ``queries`` to already projected heads; returns ``(output, weights)``."""
        if not self.built:  # Incremental decoding may call attend() before __call__().
            self.build(queries.shape)
        if attention_mask is not None:
            attention_mask = tf.convert_to_tensor(attention_mask, tf.bool)
            if attention_mask.shape.rank == 3:  # Keras layout: the same mask for every head.
                attention_mask = attention_mask[:, tf.newaxis]
            elif attention_mask.shape.rank != 4:
                raise ValueError(
                    "attention_mask must have rank 4 (batch, heads, query_len, key_len) or rank 3 "
                    f"(batch, query_len, key_len); got shape {attention_mask.shape}."
                )
        query_heads = self._split_heads(self.W_q(queries), self.key_dim)
        heads, weights = scaled_dot_product_attention(
            query_heads,
            key_heads,
            value_heads,
            attention_mask,
            weights_dropout=lambda w: self.weights_dropout(w, training=training),
        )
        # (batch, heads, query_len, value_dim) -> (batch, query_len, heads * value_dim)
        batch, query_len = tf.shape(queries)[0], tf.shape(queries)[1]
        heads = tf.transpose(heads, [0, 2, 1, 3])
        concatenated = tf.reshape(heads, [batch, query_len, self.num_heads * self.value_dim])
        return self.W_o(concatenated), weights

    def call(
        self,
        queries: tf.Tensor,
        keys: tf.Tensor | None = None,
        values: tf.Tensor | None = None,
        attention_mask: tf.Tensor | None = None,
        return_attention_scores: bool = False,
        training: bool = False,
    ) -> tf.Tensor | tuple[tf.Tensor, tf.Tensor]:
        keys = queries if keys is None else keys
        values = keys if values is None else values
        key_heads, value_heads = self.project_keys_values(keys, values)
        output, weights = self.attend(queries, key_heads, value_heads, attention_mask, training)
        return (output, weights) if return_attention_scores else output

    def get_config(self) -> dict:
        config = super().get_config()
        config.update(
            num_heads=self.num_heads,
            key_dim=self.key_dim,
            value_dim=self.value_dim,
            output_dim=self.output_dim,
            dropout=self.dropout,
            use_bias=self.use_bias,
            kernel_initializer=self.kernel_initializer,
        )
        return config


__all__ = [
    "MultiHeadAttention",
    "masked_softmax",
    "scaled_dot_product_attention",
]
