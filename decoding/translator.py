"""Strings in, strings out: tokenization, search and detokenization in one TensorFlow graph.

:class:`ModelTranslator` is the :class:`~decoding.protocol.Translator` built from a model and
its tokenizer. Its
``translate_batch`` graph serves validation during training, ``translate.py``, ``evaluate.py``
and the exported SavedModel (``inference.export.SavedModelTranslator``), so they all give the
same translations.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

import tensorflow as tf

from common.language_tags import tag_sentences, unknown_language_message
from common.special_tokens import BOS_ID, EOS_ID, PAD_ID
from data_pipeline.multilingual import tag_in_graph
from decoding.ensemble import Ensemble
from decoding.options import SearchOptions
from decoding.protocol import translate_in_batches, truncation_warnings
from decoding.search import decode

# Batches of up to this many sentences run the XLA search, larger ones the graph search (the
# crossover measured in docs/PERFORMANCE.md: XLA is faster at 4 and 8, the graph at 16 and up).
XLA_MAX_BATCH_SIZE = 8
_TEXT = tf.TensorSpec([None], tf.string, name="text")
_LANGS = tf.TensorSpec([None], tf.string, name="target_lang")


def encode_sources(tokenizer, text: tf.Tensor, max_source_length: int) -> tf.Tensor:
    """``(batch,)`` strings -> ``(batch, length)`` int32 source ids as in training: the pieces,
    truncated to ``max_source_length - 1``, then EOS, padded with PAD."""
    pieces = tokenizer.tokenize(text)[:, : max_source_length - 1]
    eos = tf.fill([pieces.nrows(), 1], tf.constant(EOS_ID, pieces.dtype))
    return tf.cast(tf.concat([pieces, eos], axis=1).to_tensor(PAD_ID), tf.int32)


def pad_to_buckets(source_ids: tf.Tensor, length_bucket: int) -> tf.Tensor:
    """Pads ``(batch, length)`` ids with PAD to ``(2^k >= batch, multiple of length_bucket)``.

    Padding rows hold a lone EOS (an empty sentence: it finishes at once). Bounds the number of
    distinct shapes, hence of XLA compilations.

    Example:
        >>> pad_to_buckets(tf.constant([[5, 6, 3]]), length_bucket=4).numpy().tolist()
        [[5, 6, 3, 0]]
    """
    batch, length = tf.shape(source_ids)[0], tf.shape(source_ids)[1]
    powers_of_two = 2 ** tf.range(31)
    padded_batch = powers_of_two[tf.argmax(tf.cast(powers_of_two >= batch, tf.int32))]
    padded_length = -(-length // length_bucket) * length_bucket
    ids = tf.pad(source_ids, [[0, 0], [0, padded_length - length]], constant_values=PAD_ID)
    empty = tf.one_hot(tf.zeros([padded_batch - batch], tf.int32), padded_length, EOS_ID, PAD_ID)
    return tf.concat([ids, tf.cast(empty, ids.dtype)], axis=0)


class ModelTranslator(tf.Module):
    """Translates sentences with a trained model (or ensemble) and its tokenizer.

    Args:
        model: a :class:`transformer.Transformer` or a :class:`decoding.ensemble.Ensemble`.
        tokenizer: a :class:`data_pipeline.Tokenizer` (tokenize / detokenize in-graph).
        options: the search's :class:`~decoding.options.SearchOptions` (beam size, length
            penalty, output length limits).
        max_source_length: longer inputs are truncated to this many tokens.
        jit_compile: run the search (not the string ops) of batches of up to
            ``xla_max_batch_size`` sentences compiled by XLA, and larger batches' in the graph,
            where done sentences leave the batch (XLA keeps computing them until the longest
            output ends, and wins only for small batches). XLA compiles once per input shape, so
            the batch is padded to a power of two and the source length to a multiple of
            ``length_bucket``: at most ``(log2(xla_max_batch_size) + 1) * max_source_length /
            length_bucket`` compilations, each a few seconds the first time it is met. Both give
            the same translations; padding never changes one (see :mod:`decoding.common`).
        length_bucket: source padding multiple under ``jit_compile``.
        xla_max_batch_size: the largest batch that runs under XLA with ``jit_compile``.

    Example:
        >>> translator = ModelTranslator(model, tokenizer, SearchOptions(beam_size=4))
        >>> translator.translate(["Ein Hund rennt."])
        ['A dog is running.']
    """

    def __init__(
        self,
        model,
        tokenizer,
        options: SearchOptions = SearchOptions(),
        max_source_length: int = 256,
        jit_compile: bool = False,
        length_bucket: int = 16,
        xla_max_batch_size: int = XLA_MAX_BATCH_SIZE,
    ) -> None:
        super().__init__()
        if length_bucket < 1:
            raise ValueError(f"length_bucket must be a positive integer, got {length_bucket}.")
        # A multilingual model's target-language tags are never written.
        forbidden = tuple(i for i in tokenizer.tag_ids if i not in options.forbidden_ids)
        options = dataclasses.replace(options, forbidden_ids=options.forbidden_ids + forbidden)
        self.model, self.tokenizer, self.options = model, tokenizer, options
        self.max_source_length = max_source_length
        self.jit_compile, self.length_bucket = jit_compile, length_bucket
        self.xla_max_batch_size = xla_max_batch_size
        # autograph=False everywhere here: the searches loop with tf.while_loop and branch with
        # tf.cond, so converting their Python source would only cost tracing time.
        self._compiled_search = tf.function(self._search, jit_compile=True, autograph=False)
        if not isinstance(model, Ensemble):  # a tf.function attribute: exported with the module
            self.cross_attention = tf.function(
                self._cross_attention,
                input_signature=[tf.TensorSpec([None], tf.string)],
                autograph=False,
            )
        if self.languages:  # a multilingual model: text and target language in
            self.translate_to = tf.function(
                self._translate_to, input_signature=[_TEXT, _LANGS], autograph=False
            )
            if not isinstance(model, Ensemble):
                self.cross_attention_to = tf.function(
                    self._cross_attention_to, input_signature=[_TEXT, _LANGS], autograph=False
                )

    @property
    def languages(self) -> tuple[str, ...]:
        """The target languages of a multilingual model (its tags; `common.language_tags`),
        sorted; () for a model of one target language."""
        return self.tokenizer.languages

    @property
    def beam_size(self) -> int:
        return self.options.beam_size

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string)], autograph=False)
    def source_lengths(self, text: tf.Tensor) -> tf.Tensor:
        """``(batch,)`` strings -> ``(batch,)`` int64 token counts without EOS."""
        return self.tokenizer.tokenize(text).row_lengths()

    def truncation_warnings(self, sentences: Sequence[str]) -> list[str]:
        if not sentences:
            return []
        lengths = self.source_lengths(tf.constant(list(sentences))).numpy().tolist()
        return truncation_warnings(lengths, self.max_source_length)

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string)], autograph=False)
    def translate_batch(self, text: tf.Tensor) -> tf.Tensor:
        """``(batch,)`` tf.string sentences -> ``(batch,)`` tf.string translations."""
        source_ids = encode_sources(self.tokenizer, text, self.max_source_length)
        return self.tokenizer.detokenize(self._output_ids(source_ids))

    def _cross_attention(self, text: tf.Tensor) -> dict[str, tf.Tensor]:
        """Translations with the last decoder layer's encoder-decoder attention: the tf.function
        ``cross_attention`` of a translator of one model (an ensemble has no one attention).

        Returns ``translation`` ``(batch,)``, ``source_pieces`` ``(batch, source_len)`` (the
        pieces read, EOS included), ``target_pieces`` ``(batch, target_len)`` (the pieces
        written, EOS included) and ``attention`` ``(batch, heads, target_len, source_len)``
        float32: row t is where output piece t looked. Pieces are ``""`` and weights 0 past a
        sentence's end (padding).

        Example:
            >>> outputs = translator.cross_attention(tf.constant(["Ein Hund rennt."]))
            >>> outputs["attention"].shape   # (1 sentence, heads, output pieces, source pieces)
            TensorShape([1, 4, 6, 5])
        """
        source_ids = encode_sources(self.tokenizer, text, self.max_source_length)
        output_ids = self._output_ids(source_ids)
        bos = tf.fill([tf.shape(output_ids)[0], 1], tf.constant(BOS_ID, output_ids.dtype))
        memory, memory_mask = self.model.encode(source_ids)
        _, weights = self.model.decode(
            tf.concat([bos, output_ids[:, :-1]], axis=1),
            memory,
            memory_mask,
            return_attention_scores=True,
        )
        source_real, target_real = source_ids != PAD_ID, output_ids != PAD_ID
        visible = target_real[:, None, :, None] & source_real[:, None, None, :]
        return {
            "translation": self.tokenizer.detokenize(output_ids),
            "source_pieces": self._pieces(source_ids, source_real),
            "target_pieces": self._pieces(output_ids, target_real),
            "attention": tf.where(visible, tf.cast(weights[-1], tf.float32), 0.0),
        }

    def _translate_to(self, text: tf.Tensor, target_lang: tf.Tensor) -> tf.Tensor:
        """A multilingual model's ``translate_batch``: ``(batch,)`` sentences, each into its
        ``(batch,)`` target language (an unknown one is an InvalidArgumentError naming the
        model's languages)."""
        return self.translate_batch(self._tagged(text, target_lang))

    def _cross_attention_to(self, text: tf.Tensor, target_lang: tf.Tensor) -> dict:
        """A multilingual model's ``cross_attention``; the source pieces begin with the tag."""
        return self.cross_attention(self._tagged(text, target_lang))

    def _tagged(self, text: tf.Tensor, target_lang: tf.Tensor) -> tf.Tensor:
        """The sources as the model reads them: each with its target language's tag."""
        languages = tf.constant(self.languages)
        known = tf.reduce_any(target_lang[:, None] == languages[None, :], axis=1)  # (batch,)
        first_unknown = tf.concat([tf.boolean_mask(target_lang, ~known), [""]], axis=0)[0]
        before, after = unknown_language_message("\0", self.languages).split("\0")
        unknown_message = tf.strings.join([before, first_unknown, after])
        same_size = tf.equal(tf.size(text), tf.size(target_lang))
        checks = [
            tf.debugging.Assert(tf.reduce_all(known), [unknown_message]),
            tf.debugging.Assert(same_size, ["Give one target_lang for each text."]),
        ]
        with tf.control_dependencies(checks):
            return tag_in_graph(text, target_lang)

    def _pieces(self, ids: tf.Tensor, real: tf.Tensor) -> tf.Tensor:
        return tf.where(real, self.tokenizer.id_to_piece(ids), "")

    def _output_ids(self, source_ids: tf.Tensor) -> tf.Tensor:
        # The graph search has dynamic shapes: done sentences leave the beam search's batch.
        if not self.jit_compile:
            return self._search(source_ids, dynamic_shapes=True)
        batch = tf.shape(source_ids)[0]
        return tf.cond(
            batch <= self.xla_max_batch_size,
            lambda: self._compiled_search(pad_to_buckets(source_ids, self.length_bucket))[:batch],
            lambda: self._search(source_ids, dynamic_shapes=True),
        )

    def _search(self, source_ids: tf.Tensor, dynamic_shapes: bool = False) -> tf.Tensor:
        return decode(self.model, source_ids, self.options, dynamic_shapes)

    def translate(
        self,
        sentences: Sequence[str],
        batch_size: int = 64,
        progress: bool = True,
        target_lang: str | None = None,
    ) -> list[str]:
        """Translates ``sentences`` in batches of similar length, keeping their order; a
        multilingual model into ``target_lang`` (one of :attr:`languages`)."""
        return translate_in_batches(
            string_batches(self.translate_batch),
            tag_sentences(sentences, target_lang, self.languages),
            batch_size,
            progress,
        )


def string_batches(translate_batch: Callable[[tf.Tensor], tf.Tensor]) -> Callable:
    """A ``(batch,)`` tf.string -> tf.string function as a ``list[str] -> list[str]`` one."""

    def translate(batch: list[str]) -> list[str]:
        outputs = translate_batch(tf.constant(batch)).numpy()
        return [output.decode("utf-8", errors="replace") for output in outputs]

    return translate
