"""Several trained models that decode as one: each step uses the mean of their probabilities.

Independently trained models make different errors, so their averaged next-token distribution
translates better than any one of them (fairseq's ``--path a.pt:b.pt``, OpenNMT's ``-model a b``).
:class:`Ensemble` has the three methods the searches call (``encode``, ``init_cache``,
``decode_step``), so greedy and beam search, the
:class:`~decoding.translator.ModelTranslator` and the SavedModel export run on it unchanged.
Each member keeps its own key/value cache; a step costs the sum of the members' steps.

The members must share the target vocabulary (train them with the same tokenizer settings on the
same data: the SentencePiece model comes out the same) and the padding id; their shapes (layers,
width, heads) may differ.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import tensorflow as tf

from transformer.model import DecodeCache, Transformer


class Ensemble(tf.Module):
    """Decodes with ``models`` together: ``log(mean_i p_i(token | prefix, source))`` per step.

    Args:
        models: one or more built :class:`~transformer.model.Transformer` models with the same
            ``target_vocab_size`` and ``pad_id``.

    Example:
        >>> ensemble = Ensemble([model_a, model_b])
        >>> ids, scores = beam_search(ensemble, tf.constant([[5, 6, 7, 0]]), SearchOptions())
    """

    def __init__(self, models: Sequence[Transformer]) -> None:
        super().__init__(name="ensemble")
        models = list(models)
        if not models:
            raise ValueError("An ensemble needs at least one model.")
        for attribute in ("target_vocab_size", "pad_id"):
            values = [getattr(model.config, attribute) for model in models]
            if len(set(values)) > 1:
                raise ValueError(
                    f"The ensemble's models must share {attribute}, got {values}: train them "
                    "with the same tokenizer on the same data."
                )
        self.models = models

    def encode(self, source_ids: tf.Tensor) -> tuple[list[tf.Tensor], list[tf.Tensor]]:
        """Each member's ``(memory, memory_mask)``, as two lists in member order."""
        encoded = [model.encode(source_ids) for model in self.models]
        return [memory for memory, _ in encoded], [mask for _, mask in encoded]

    def init_cache(
        self,
        memory: list[tf.Tensor],
        memory_mask: list[tf.Tensor],
        max_length: int | tf.Tensor | None,
    ) -> DecodeCache:
        """The members' caches: their ``"self"`` buffers under ``"self"`` (the part a search
        reorders and updates every step), the rest under ``"members"``."""
        caches = [
            model.init_cache(member_memory, member_mask, max_length)
            for model, member_memory, member_mask in zip(
                self.models, memory, memory_mask, strict=True
            )
        ]
        return {
            "members": [{k: v for k, v in cache.items() if k != "self"} for cache in caches],
            "self": [cache["self"] for cache in caches],
        }

    def decode_step(
        self,
        token_ids: tf.Tensor,
        index: tf.Tensor,
        cache: DecodeCache,
        growing: bool = False,
        output_ids: tf.Tensor | None = None,
    ) -> tuple[tf.Tensor, DecodeCache]:
        """As ``Transformer.decode_step``, returning the mean distribution's float32
        log-probabilities in place of logits, vocabulary-major: ``(target_vocab_size, batch)``
        (with ``output_ids``, over those ids alone)."""
        log_probs, self_caches = [], []
        for model, member, self_cache in zip(
            self.models, cache["members"], cache["self"], strict=True
        ):
            logits, next_cache = model.decode_step(
                token_ids, index, {**member, "self": self_cache}, growing, output_ids
            )
            log_probs.append(logits - tf.reduce_logsumexp(logits, axis=0))  # (V, batch)
            self_caches.append(next_cache["self"])
        mean_log_probs = tf.reduce_logsumexp(tf.stack(log_probs), axis=0) - math.log(
            len(self.models)
        )  # (V, batch): log of the mean probability
        return mean_log_probs, {**cache, "self": self_caches}
