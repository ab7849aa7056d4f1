"""Strings in, strings out: tokenization, search and detokenization in one TensorFlow graph.

:class:`ModelTranslator` is the :class:`~common.translation.Translator` built from a model and
its tokenizer. Its ``translate_batch`` graph serves validation during training, ``translate.py``,
``evaluate.py`` and the exported SavedModel (``inference.export``), so they all give the same
translations. Every graph function takes ``(text, target_lang)`` (``[None]`` strings; a model of
one target language ignores ``target_lang``), and ``_tagged`` is the one place a tag is added.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Sequence
from typing import NamedTuple, TypeVar

import tensorflow as tf

from common.alignment import Alignment, alignments_of
from common.language_tags import unknown_language_message
from common.special_tokens import EOS_ID, PAD_ID
from common.translation import (
    PHRASE_SEPARATOR,
    Hypothesis,
    Sampling,
    Terms,
    TranslationRequest,
    hypotheses_rows,
    pairs_in_batches,
    scored_targets,
    sentence_seeds,
    translate_in_batches,
)
from data_pipeline.tagging import defuse_in_graph, tag_in_graph
from decoding.alignment import alignment_attention, cross_attention_weights
from decoding.alternatives import alternatives_search
from decoding.beam import Hypotheses, n_best_search
from decoding.constraints import Constraints
from decoding.ensemble import Ensemble
from decoding.options import SearchOptions
from decoding.sampling import sample_search
from decoding.scoring import force_score
from decoding.search import decode
from decoding.shortlist import Candidates, SearchSpace, Shortlist

# Batches of up to this many sentences run the XLA search, larger ones the graph search (the
# crossover measured in docs/PERFORMANCE.md: XLA is faster at 4 and 8, the graph at 16 and up).
XLA_MAX_BATCH_SIZE = 8
# The inputs of every graph function: the sentences and each one's target language.
INPUT_SIGNATURE = (tf.TensorSpec([None], tf.string), tf.TensorSpec([None], tf.string))
# Forced scoring's: the same and each sentence's given translation; a prefixed search's: the
# same and each translation's start ("": none).
SCORING_SIGNATURE = PREFIX_SIGNATURE = (*INPUT_SIGNATURE, tf.TensorSpec([None], tf.string))
# A constrained search's: a prefixed search's and each sentence's required terms and avoided
# phrases, each a string of phrases a line ("": none).
CONSTRAINED_SIGNATURE = (*PREFIX_SIGNATURE, *[tf.TensorSpec([None], tf.string)] * 2)


class CrossAttention(NamedTuple):
    """What ``ModelTranslator.cross_attention`` returns (tensors; padding: ``""`` and 0).

    translation: ``(batch,)`` strings.
    source_pieces: ``(batch, source_len)``: the pieces read, EOS included (a multilingual
        model's begin with the tag).
    target_pieces: ``(batch, target_len)``: the pieces written, EOS included.
    attention: ``(batch, heads, target_len, source_len)`` float32 weights of the last decoder
        layer: row t is where output piece t looked.
    """

    translation: tf.Tensor
    source_pieces: tf.Tensor
    target_pieces: tf.Tensor
    attention: tf.Tensor


class TargetAlignment(NamedTuple):
    """What ``ModelTranslator.align_targets`` returns (tensors; padding: ``""`` and 0).

    source_pieces: ``(batch, source_len)``: the pieces read, EOS included.
    target_pieces: ``(batch, target_len)``: the given target's pieces, EOS included.
    attention: ``(batch, target_len, source_len)`` float32: the alignment's attention
        (:func:`decoding.alignment.alignment_attention`).
    """

    source_pieces: tf.Tensor
    target_pieces: tf.Tensor
    attention: tf.Tensor


class ScoredTranslations(NamedTuple):
    """What ``ModelTranslator.scored_batch`` and ``n_best_batch`` return, each ``(batch, n)``,
    best first: ``translation`` strings, ``score`` and ``log_prob`` float32 (as
    :class:`common.translation.Hypothesis` defines them), ``length`` int32 (tokens, EOS
    included), and ``token_log_probs`` float32 ``(batch, n, out_len)`` (0 past a hypothesis'
    end). A hypothesis the search never finished has score -inf."""

    translation: tf.Tensor
    score: tf.Tensor
    log_prob: tf.Tensor
    length: tf.Tensor
    token_log_probs: tf.Tensor


class TargetScores(NamedTuple):
    """What ``ModelTranslator.score_targets`` returns: ``score``, ``log_prob`` float32 and
    ``length`` int32 ``(batch,)`` (as :class:`common.translation.Hypothesis` defines them) and
    ``token_log_probs`` float32 ``(batch, target_len)`` (0 past a target's end, EOS included)."""

    score: tf.Tensor
    log_prob: tf.Tensor
    length: tf.Tensor
    token_log_probs: tf.Tensor


F = TypeVar("F", bound=Callable)


def kept(make_function: F) -> F:
    """A :class:`ModelTranslator` method making a graph function for an option (``n_best``,
    a :class:`~common.translation.Sampling`), made once per value and kept for later calls (a
    translation of a file in windows traces it once). Kept outside what the module tracks: an
    export saves the module's own functions only."""

    @functools.wraps(make_function)
    def made(translator: ModelTranslator, option):
        functions = translator._graph_functions
        key = (make_function.__name__, option)
        if key not in functions:
            functions[key] = make_function(translator, option)
        return functions[key]

    return made


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


def pad_ids(ids: tf.Tensor, rows: tf.Tensor, multiples: Sequence[int]) -> tf.Tensor:
    """``(batch, ...)`` ids padded with PAD to ``rows`` rows and each later axis to a multiple
    of its ``multiples``: a prefix's or the terms', beside :func:`pad_to_buckets`'s sources
    (few shapes, so few XLA compilations).

    Example:
        >>> pad_ids(tf.constant([[5, 6, 7]]), 2, [4]).numpy().tolist()
        [[5, 6, 7, 0], [0, 0, 0, 0]]
    """
    shape = tf.shape(ids)
    padding = [[0, rows - shape[0]]] + [
        [0, -(-shape[axis] // multiple) * multiple - shape[axis]]
        for axis, multiple in enumerate(multiples, start=1)
    ]
    return tf.pad(ids, padding, constant_values=PAD_ID)


# Terms under XLA: their count padded to a multiple of 2, their tokens to a multiple of 4 (the
# search's buffers grow by count * tokens).
PHRASE_PADDING = (2, 4)


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
        shortlist: a vocabulary :class:`~decoding.shortlist.Shortlist`: the searches score the
            candidates of each batch alone, their log-probabilities normalized over them
            (sampling, alternatives and forced scoring the whole vocabulary); None: the whole
            vocabulary everywhere.

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
        shortlist: Shortlist | None = None,
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
        # Variables (attributes of their own: tracked), so that an export holds the shortlist.
        self.shortlist_variables = [
            tf.Variable(tensor, trainable=False, dtype=tf.int32) for tensor in shortlist or ()
        ]
        # A plain dict (tf.Module would track a dict set by assignment): see `kept`.
        object.__setattr__(self, "_graph_functions", {})
        # autograph=False everywhere here: the searches loop with tf.while_loop and branch with
        # tf.cond, so converting their Python source would only cost tracing time.
        self._compiled_search = tf.function(self._search, jit_compile=True, autograph=False)
        if not isinstance(model, Ensemble):  # a tf.function attribute: exported with the module
            self.cross_attention = tf.function(
                self._cross_attention, input_signature=INPUT_SIGNATURE, autograph=False
            )

    @property
    def languages(self) -> tuple[str, ...]:
        """The target languages of a multilingual model (its tags; `common.language_tags`),
        sorted; () for a model of one target language."""
        return self.tokenizer.languages

    @property
    def shortlist(self) -> Shortlist | None:
        """The vocabulary shortlist the searches run over, or None."""
        return Shortlist(*self.shortlist_variables) if self.shortlist_variables else None

    @property
    def precision(self) -> str:
        """The precision of the model's matrix products: ``"bfloat16"`` or ``"float32"``."""
        members = self.model.models if isinstance(self.model, Ensemble) else [self.model]
        return "bfloat16" if members[0].compute_dtype == "bfloat16" else "float32"

    @property
    def beam_size(self) -> int:
        return self.options.beam_size

    @tf.function(input_signature=INPUT_SIGNATURE, autograph=False)
    def source_token_counts(self, text: tf.Tensor, target_lang: tf.Tensor) -> tf.Tensor:
        """``(batch,)`` strings -> ``(batch,)`` int64 token counts, without EOS, of the sources
        as the model reads them (a multilingual model's with their tags)."""
        return self.tokenizer.tokenize(self._tagged(text, target_lang)).row_lengths()

    def source_lengths(
        self, sentences: Sequence[str], request: TranslationRequest = TranslationRequest()
    ) -> list[int]:
        """Each sentence's token count (without EOS) as the model reads it (tag included)."""
        language = request.language(self.languages)
        if not sentences:
            return []
        return self.source_token_counts(*request_columns(sentences, language)).numpy().tolist()

    @tf.function(input_signature=INPUT_SIGNATURE, autograph=False)
    def translate_batch(self, text: tf.Tensor, target_lang: tf.Tensor) -> tf.Tensor:
        """``(batch,)`` tf.string sentences, each into its ``(batch,)`` target language ->
        ``(batch,)`` tf.string translations."""
        source_ids = self._source_ids(text, target_lang)
        return self.tokenizer.detokenize(self._output_ids(source_ids))

    @tf.function(input_signature=PREFIX_SIGNATURE, autograph=False)
    def prefixed_batch(
        self, text: tf.Tensor, target_lang: tf.Tensor, target_prefix: tf.Tensor
    ) -> tf.Tensor:
        """:meth:`translate_batch` with each translation starting with its ``(batch,)``
        ``target_prefix`` (``""``: none; a multilingual model's with tags made plain), the
        search going on from there, in the graph (not under XLA)."""
        source_ids = self._source_ids(text, target_lang)
        prefix_ids = self._target_ids(target_prefix)
        return self.tokenizer.detokenize(self._prefixed_search(source_ids, prefix_ids))

    @tf.function(input_signature=INPUT_SIGNATURE, autograph=False)
    def scored_batch(self, text: tf.Tensor, target_lang: tf.Tensor) -> ScoredTranslations:
        """:meth:`translate_batch`'s translations (the same search), each with its score by
        forced decoding (:func:`~decoding.scoring.force_score`): ``n`` is 1."""
        source_ids = self._source_ids(text, target_lang)
        return self._forced(source_ids, self._output_ids(source_ids))

    @tf.function(input_signature=INPUT_SIGNATURE, autograph=False)
    def n_best_batch(self, text: tf.Tensor, target_lang: tf.Tensor) -> ScoredTranslations:
        """Every sentence's ``beam_size`` best hypotheses with their scores and their tokens'
        log-probabilities, best first (:func:`~decoding.beam.n_best_search`, in the graph: done
        sentences leave the batch)."""
        return self._n_best(self._source_ids(text, target_lang))

    @kept
    def prefixed_hypotheses(self, n_best: int) -> Callable[..., ScoredTranslations]:
        """A graph function ``(text, target_lang, target_prefix) -> ScoredTranslations``:
        :meth:`scored_batch` (``n_best`` 1) or :meth:`n_best_batch` with each sentence's
        ``(batch,)`` prefix (``""``: none), as :meth:`prefixed_batch` takes it (:func:`kept`)."""

        def hypotheses(
            text: tf.Tensor, target_lang: tf.Tensor, target_prefix: tf.Tensor
        ) -> ScoredTranslations:
            source_ids = self._source_ids(text, target_lang)
            prefix_ids = self._target_ids(target_prefix)
            if n_best > 1:
                return self._n_best(source_ids, prefix_ids)
            return self._forced(source_ids, self._prefixed_search(source_ids, prefix_ids))

        return tf.function(hypotheses, input_signature=PREFIX_SIGNATURE, autograph=False)

    @kept
    def alternatives(self, n_best: int) -> Callable[..., ScoredTranslations]:
        """A graph function ``(text, target_lang, target_prefix) -> ScoredTranslations``: each
        sentence's ``n_best`` alternatives at the first position after its prefix
        (:func:`~decoding.alternatives.alternatives_search`; :func:`kept`)."""

        def alternatives(
            text: tf.Tensor, target_lang: tf.Tensor, target_prefix: tf.Tensor
        ) -> ScoredTranslations:
            source_ids = self._source_ids(text, target_lang)
            prefix_ids = self._target_ids(target_prefix)
            return self._scored(
                alternatives_search(self.model, source_ids, self.options, n_best, prefix_ids)
            )

        return tf.function(alternatives, input_signature=PREFIX_SIGNATURE, autograph=False)

    @kept
    def constrained(self, n_best: int) -> Callable[..., ScoredTranslations]:
        """A graph function ``(text, target_lang, target_prefix, terms, avoided) ->
        ScoredTranslations``: each sentence's ``n_best`` best hypotheses holding every one of
        its ``terms`` and none of its ``avoided`` phrases (``(batch,)`` strings: phrases written
        in the target language, one a line; ``""``: none), from its prefix (``""``: none), by
        constrained beam search (:mod:`decoding.constraints`; :func:`kept`). With
        ``jit_compile``, batches of up to ``xla_max_batch_size`` sentences search under XLA,
        padded as :func:`pad_to_buckets` pads them (terms too), as :meth:`translate_batch`."""

        def constrained(
            text: tf.Tensor,
            target_lang: tf.Tensor,
            target_prefix: tf.Tensor,
            terms: tf.Tensor,
            avoided: tf.Tensor,
        ) -> ScoredTranslations:
            inputs = (
                self._source_ids(text, target_lang),
                self._target_ids(target_prefix),
                self._phrase_ids(terms),
                self._phrase_ids(avoided),
            )
            if not self.jit_compile:
                return self._scored(self._graph_constrained_search(inputs, n_best))
            batch = tf.shape(inputs[0])[0]

            def compiled() -> Hypotheses:
                source_ids = pad_to_buckets(inputs[0], self.length_bucket)
                rows = tf.shape(source_ids)[0]
                prefix = pad_ids(inputs[1], rows, [self.length_bucket])
                padded = (
                    source_ids,
                    prefix,
                    *(pad_ids(ids, rows, PHRASE_PADDING) for ids in inputs[2:]),
                )
                candidates = self._candidates(*padded, compiled=True)
                found = self._compiled_constrained(n_best)(padded, candidates)
                return Hypotheses(*(field[:batch] for field in found))

            hypotheses = tf.cond(
                batch <= self.xla_max_batch_size,
                compiled,
                lambda: self._graph_constrained_search(inputs, n_best),
            )
            return self._scored(hypotheses)

        return tf.function(constrained, input_signature=CONSTRAINED_SIGNATURE, autograph=False)

    @kept
    def _compiled_constrained(self, n_best: int) -> Callable[..., Hypotheses]:
        """:meth:`_constrained_search` compiled by XLA (static shapes; :func:`kept`)."""

        def search(inputs: tuple[tf.Tensor, ...], candidates: Candidates | None) -> Hypotheses:
            return self._constrained_search(inputs, n_best, candidates, dynamic_shapes=False)

        return tf.function(search, jit_compile=True, autograph=False)

    def _graph_constrained_search(
        self, inputs: tuple[tf.Tensor, tf.Tensor, tf.Tensor, tf.Tensor], n_best: int
    ) -> Hypotheses:
        """:meth:`_constrained_search` in the graph (dynamic shapes), over the inputs' own
        candidates."""
        return self._constrained_search(inputs, n_best, self._candidates(*inputs))

    def _constrained_search(
        self,
        inputs: tuple[tf.Tensor, tf.Tensor, tf.Tensor, tf.Tensor],
        n_best: int,
        candidates: Candidates | None,
        dynamic_shapes: bool = True,
    ) -> Hypotheses:
        """The ``n_best`` hypotheses of a constrained search of ``(source_ids, prefix_ids,
        term_ids, avoided_ids)`` (phrases ``(batch, count, width)``, a term never glued to more
        of its word: ``Tokenizer.continues_word``), over ``candidates`` (shapes known when run:
        the shortlist's candidates of the inputs, when there is one)."""
        source_ids, prefix_ids, term_ids, avoided_ids = inputs
        space = SearchSpace.of(self.model, self.options, candidates, self.tokenizer.vocab_size)
        continues_word = space.of_each_token(tf.constant(self.tokenizer.continues_word))
        term_ids, avoided_ids = space.positions(term_ids), space.positions(avoided_ids)
        constraints = Constraints.of(term_ids, avoided_ids, PAD_ID, continues_word)
        hypotheses = n_best_search(
            space.model,
            source_ids,
            space.options,
            n_best,
            dynamic_shapes=dynamic_shapes,
            with_token_log_probs=True,
            target_prefix=space.positions(prefix_ids),
            constraints=constraints,
        )
        return hypotheses._replace(ids=space.token_ids(hypotheses.ids))

    def _forced(self, source_ids: tf.Tensor, output_ids: tf.Tensor) -> ScoredTranslations:
        """``(batch, out_len)`` outputs of a search, each scored by forced decoding."""
        forced = force_score(self.model, source_ids, output_ids, self.options)
        return self._scored(
            Hypotheses(
                output_ids[:, tf.newaxis],
                forced.scores[:, tf.newaxis],
                forced.log_probs[:, tf.newaxis],
                forced.token_log_probs[:, tf.newaxis],
            )
        )

    def _n_best(
        self, source_ids: tf.Tensor, prefix_ids: tf.Tensor | None = None
    ) -> ScoredTranslations:
        space = self._search_space(source_ids, *([] if prefix_ids is None else [prefix_ids]))
        hypotheses = n_best_search(
            space.model,
            source_ids,
            space.options,
            self.beam_size,
            dynamic_shapes=True,
            with_token_log_probs=True,
            target_prefix=space.positions(prefix_ids),
        )
        return self._scored(hypotheses._replace(ids=space.token_ids(hypotheses.ids)))

    @tf.function(input_signature=SCORING_SIGNATURE, autograph=False)
    def score_targets(
        self, text: tf.Tensor, target_lang: tf.Tensor, target: tf.Tensor
    ) -> TargetScores:
        """Forced decoding: how likely the model finds each given ``target`` as the translation
        of ``text`` (into ``target_lang``), scored as its search scores a hypothesis
        (:func:`~decoding.scoring.force_score`). Targets are read whole, with EOS; a
        multilingual model's as in training (tags written in them made plain)."""
        source_ids = self._source_ids(text, target_lang)
        target_ids = self._target_ids(target, with_eos=True)
        forced = force_score(self.model, source_ids, target_ids, self.options)
        length = tf.reduce_sum(tf.cast(target_ids != PAD_ID, tf.int32), axis=1)
        return TargetScores(forced.scores, forced.log_probs, length, forced.token_log_probs)

    @tf.function(input_signature=SCORING_SIGNATURE, autograph=False)
    def align_targets(
        self, text: tf.Tensor, target_lang: tf.Tensor, target: tf.Tensor
    ) -> TargetAlignment:
        """Forced alignment: where the model looks in ``text`` as it writes each piece of the
        given ``target`` (read as :meth:`score_targets` reads it), from the alignment's
        attention (:mod:`decoding.alignment`)."""
        source_ids = self._source_ids(text, target_lang)
        target_ids = self._target_ids(target, with_eos=True)
        return TargetAlignment(
            self._pieces(source_ids, source_ids != PAD_ID),
            self._pieces(target_ids, target_ids != PAD_ID),
            alignment_attention(self.model, source_ids, target_ids),
        )

    @kept
    def sampler(self, sampling: Sampling) -> Callable[..., tf.Tensor]:
        """A graph function ``(text, target_lang, target_prefix, seeds) -> translations``:
        ``(batch,)`` strings, each row sampled (:func:`~decoding.sampling.sample_search`) from
        its prefix (``""``: none) with its ``(batch,)`` int32 seed (:func:`kept`)."""

        def sample(
            text: tf.Tensor, target_lang: tf.Tensor, target_prefix: tf.Tensor, seeds: tf.Tensor
        ) -> tf.Tensor:
            source_ids = self._source_ids(text, target_lang)
            prefix_ids = self._target_ids(target_prefix)
            output_ids = sample_search(
                self.model, source_ids, self.options, sampling, seeds, True, prefix_ids
            )
            return self.tokenizer.detokenize(output_ids)

        signature = (*PREFIX_SIGNATURE, tf.TensorSpec([None], tf.int32))
        return tf.function(sample, input_signature=signature, autograph=False)

    def _scored(self, hypotheses: Hypotheses) -> ScoredTranslations:
        """Hypotheses (``(batch, n, out_len)`` ids, their scores and token log-probabilities),
        detokenized."""
        ids = hypotheses.ids
        batch, n = tf.shape(ids)[0], tf.shape(ids)[1]
        texts = self.tokenizer.detokenize(tf.reshape(ids, [batch * n, -1]))  # (batch * n,)
        length = tf.reduce_sum(tf.cast(ids != PAD_ID, tf.int32), axis=2)
        return ScoredTranslations(
            tf.reshape(texts, [batch, n]),
            hypotheses.scores,
            hypotheses.log_probs,
            length,
            hypotheses.token_log_probs,
        )

    def _cross_attention(self, text: tf.Tensor, target_lang: tf.Tensor) -> CrossAttention:
        """Translations with the last decoder layer's encoder-decoder attention: the tf.function
        ``cross_attention`` of a translator of one model (an ensemble has no one attention).

        Example:
            >>> outputs = translator.cross_attention(*request_columns(["Ein Hund rennt."], None))
            >>> outputs.attention.shape   # (1 sentence, heads, output pieces, source pieces)
            TensorShape([1, 4, 6, 5])
        """
        source_ids = self._source_ids(text, target_lang)
        output_ids = self._output_ids(source_ids)
        return CrossAttention(
            translation=self.tokenizer.detokenize(output_ids),
            source_pieces=self._pieces(source_ids, source_ids != PAD_ID),
            target_pieces=self._pieces(output_ids, output_ids != PAD_ID),
            attention=cross_attention_weights(self.model, source_ids, output_ids)[-1],
        )

    def _source_ids(self, text: tf.Tensor, target_lang: tf.Tensor) -> tf.Tensor:
        tagged = self._tagged(text, target_lang)
        return encode_sources(self.tokenizer, tagged, self.max_source_length)

    def _target_ids(self, target: tf.Tensor, with_eos: bool = False) -> tf.Tensor:
        """``(batch,)`` strings written in the target language (translations, prefixes) ->
        ``(batch, length)`` int32 ids padded with PAD (EOS appended ``with_eos``); a
        multilingual model's with tags written in them made plain, as in training."""
        if self.languages:
            target = defuse_in_graph(target)
        pieces = self.tokenizer.tokenize(target)
        if with_eos:
            eos = tf.fill([pieces.nrows(), 1], tf.constant(EOS_ID, pieces.dtype))
            pieces = tf.concat([pieces, eos], axis=1)
        return tf.cast(pieces.to_tensor(PAD_ID), tf.int32)

    def _phrase_ids(self, lines: tf.Tensor) -> tf.Tensor:
        """``(batch,)`` strings of phrases written in the target language, one a line (``""``:
        none) -> ``(batch, count, width)`` int32 ids padded with PAD, tokenized as translations
        are (an empty phrase has no ids)."""
        phrases = tf.strings.split(lines, PHRASE_SEPARATOR).to_tensor("")  # (batch, count)
        ids = self._target_ids(tf.reshape(phrases, [-1]))  # (batch * count, width)
        shape = tf.concat([tf.shape(phrases), tf.shape(ids)[1:]], axis=0)
        return tf.reshape(ids, shape)

    def _tagged(self, text: tf.Tensor, target_lang: tf.Tensor) -> tf.Tensor:
        """The sources as the model reads them: a multilingual model's each with its target
        language's tag (an unknown language is an InvalidArgumentError naming the model's, for
        callers of the graph; Python callers check first); the text of any other model."""
        if not self.languages:
            return text
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
            return self._search(source_ids, self._candidates(source_ids), dynamic_shapes=True)
        batch = tf.shape(source_ids)[0]

        def compiled() -> tf.Tensor:
            padded = pad_to_buckets(source_ids, self.length_bucket)
            return self._compiled_search(padded, self._candidates(padded, compiled=True))[:batch]

        return tf.cond(
            batch <= self.xla_max_batch_size,
            compiled,
            lambda: self._search(source_ids, self._candidates(source_ids), dynamic_shapes=True),
        )

    def _search(
        self,
        source_ids: tf.Tensor,
        candidates: Candidates | None = None,
        dynamic_shapes: bool = False,
    ) -> tf.Tensor:
        space = SearchSpace.of(self.model, self.options, candidates, self.tokenizer.vocab_size)
        return space.token_ids(decode(space.model, source_ids, space.options, dynamic_shapes))

    def _prefixed_search(self, source_ids: tf.Tensor, prefix_ids: tf.Tensor) -> tf.Tensor:
        """The graph search's output ids, each starting with its prefix."""
        space = self._search_space(source_ids, prefix_ids)
        prefix = space.positions(prefix_ids)
        return space.token_ids(decode(space.model, source_ids, space.options, True, prefix))

    def _candidates(
        self, source_ids: tf.Tensor, *target_ids: tf.Tensor, compiled: bool = False
    ) -> Candidates | None:
        """The shortlist's candidates for a batch (and the ids of its prefixes or terms), or
        None without a shortlist; for a ``compiled`` (XLA) search, as many as the inputs'
        shapes allow (:meth:`Candidates.of`'s ``size_of_shapes``)."""
        if self.shortlist is None:
            return None
        never_written = self.options.never_written
        vocab_size = self.tokenizer.vocab_size
        return Candidates.of(
            self.shortlist,
            source_ids,
            vocab_size,
            never_written,
            *target_ids,
            size_of_shapes=compiled,
        )

    def _search_space(self, source_ids: tf.Tensor, *target_ids: tf.Tensor) -> SearchSpace:
        """What a search of ``source_ids`` runs over (the shortlist's candidates, with
        ``target_ids``, when there is one)."""
        candidates = self._candidates(source_ids, *target_ids)
        return SearchSpace.of(self.model, self.options, candidates, self.tokenizer.vocab_size)

    def translate(
        self,
        sentences: Sequence[str],
        request: TranslationRequest = TranslationRequest(),
        batch_size: int = 64,
        progress: bool = True,
    ) -> list[str]:
        """Translates ``sentences`` in batches of similar length, keeping their order, as
        ``request`` asks (a multilingual model into its ``target_lang``; sampled with
        ``request.sampling``, each sentence with its own seed: :func:`sentence_seeds`)."""
        language = request.language(self.languages)
        prefixes = request.prefixes(sentences)
        if request.sentence_terms(sentences) is not None:
            return [
                rows[0].text for rows in self.hypotheses(sentences, request, batch_size, progress)
            ]
        if request.sampling is not None:
            sample = self.sampler(request.sampling)

            def translate_rows(rows: list[int]) -> list[str]:
                batch = [sentences[row] for row in rows]
                seeds = tf.constant(sentence_seeds(request.sampling.seed, rows), tf.int32)
                prefix = prefix_column(prefixes, rows)
                return decoded(sample(*request_columns(batch, language), prefix, seeds))

            return translate_in_batches(translate_rows, sentences, batch_size, progress)

        def translate_rows(rows: list[int]) -> list[str]:
            inputs = request_columns([sentences[row] for row in rows], language)
            if prefixes is None:
                return decoded(self.translate_batch(*inputs))
            return decoded(self.prefixed_batch(*inputs, prefix_column(prefixes, rows)))

        return translate_in_batches(translate_rows, sentences, batch_size, progress)

    def hypotheses(
        self,
        sentences: Sequence[str],
        request: TranslationRequest = TranslationRequest(),
        batch_size: int = 64,
        progress: bool = True,
    ) -> list[list[Hypothesis]]:
        """Each sentence's ``request.n_best`` best translations with their scores, best first:
        for one, :meth:`translate`'s translation scored (:meth:`scored_batch`); for more, the
        beam's best (:meth:`n_best_batch`, which searches until every kept hypothesis is sure:
        slower than one); with ``request.return_alternatives``, :meth:`alternatives`."""
        language = request.language(self.languages)
        n_best = request.hypotheses_count(self.beam_size)
        prefixes = request.prefixes(sentences)
        terms = request.sentence_terms(sentences)
        batch_function = self.scored_batch if n_best == 1 else self.n_best_batch
        prefixed = prefixes is not None or request.return_alternatives or terms is not None
        if request.return_alternatives:
            batch_function = self.alternatives(n_best)
        elif terms is not None:
            batch_function = self.constrained(n_best)
        elif prefixes is not None:
            batch_function = self.prefixed_hypotheses(n_best)

        def translate_rows(rows: list[int]) -> list[list[Hypothesis]]:
            inputs = request_columns([sentences[row] for row in rows], language)
            if prefixed:
                inputs = (*inputs, prefix_column(prefixes, rows))
            if terms is not None:
                inputs = (*inputs, *terms_columns([terms[row] for row in rows]))
            columns = [tensor.numpy().tolist() for tensor in batch_function(*inputs)]
            return hypotheses_rows(*columns, n_best=n_best)

        return translate_in_batches(translate_rows, sentences, batch_size, progress)

    def score(
        self,
        sources: Sequence[str],
        targets: Sequence[str],
        request: TranslationRequest = TranslationRequest(),
        batch_size: int = 64,
        progress: bool = True,
    ) -> list[Hypothesis]:
        """Each ``(source, target)`` pair's target scored as a translation of its source
        (:meth:`score_targets`), with its tokens' log-probabilities."""
        language = request.language(self.languages)

        def score_batch(batch_sources: list[str], batch_targets: list[str]) -> list[Hypothesis]:
            result = self.score_targets(*pair_columns(batch_sources, batch_targets, language))
            return scored_targets(batch_targets, *(tensor.numpy().tolist() for tensor in result))

        return pairs_in_batches(score_batch, sources, targets, batch_size, progress, "score")

    def align(
        self,
        sources: Sequence[str],
        targets: Sequence[str],
        request: TranslationRequest = TranslationRequest(),
        batch_size: int = 64,
        progress: bool = True,
    ) -> list[Alignment]:
        """Each ``(source, target)`` pair's word alignment (:meth:`align_targets`)."""
        language = request.language(self.languages)

        def align_batch(batch_sources: list[str], batch_targets: list[str]) -> list[Alignment]:
            result = self.align_targets(*pair_columns(batch_sources, batch_targets, language))
            return alignments_of(*(tensor.numpy().tolist() for tensor in result))

        return pairs_in_batches(align_batch, sources, targets, batch_size, progress, "align")


def pair_columns(
    sources: Sequence[str], targets: Sequence[str], language: str | None
) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
    """The ``(text, target_lang, target)`` inputs of the forced graph functions."""
    target = tf.constant(list(targets), tf.string, shape=[len(targets)])
    return (*request_columns(sources, language), target)


def request_columns(sentences: Sequence[str], language: str | None) -> tuple[tf.Tensor, tf.Tensor]:
    """The ``(text, target_lang)`` inputs of the graph functions for ``sentences`` all into
    ``language`` (``""`` for a model of one target language, which ignores it)."""
    text = tf.constant(list(sentences), tf.string, shape=[len(sentences)])
    return text, tf.fill([len(sentences)], language or "")


def prefix_column(prefixes: Sequence[str] | None, rows: Sequence[int]) -> tf.Tensor:
    """The ``(batch,)`` ``target_prefix`` input of the prefixed graph functions for ``rows`` of
    a request's ``prefixes`` (None: ``""``, none, for every row)."""
    values = [""] * len(rows) if prefixes is None else [prefixes[row] for row in rows]
    return tf.constant(values, tf.string, shape=[len(rows)])


def terms_columns(terms: Sequence[Terms]) -> tuple[tf.Tensor, tf.Tensor]:
    """The ``(batch,)`` ``terms`` and ``avoided`` inputs of a constrained graph function for
    each row's :class:`~common.translation.Terms` (:meth:`~common.translation.Terms.lines`)."""
    required, avoided = zip(*(row.lines() for row in terms), strict=True) if terms else ((), ())
    return (
        tf.constant(list(required), tf.string, shape=[len(terms)]),
        tf.constant(list(avoided), tf.string, shape=[len(terms)]),
    )


def decoded(strings: tf.Tensor) -> list[str]:
    """A ``(batch,)`` tf.string tensor as Python strings (bad UTF-8 replaced)."""
    return [value.decode("utf-8", errors="replace") for value in strings.numpy()]
