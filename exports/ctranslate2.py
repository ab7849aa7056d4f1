"""Translating with a CTranslate2 export (``inference.ctranslate2_export``): a Translator.

It tokenizes as our models do (the export's own SentencePiece model, sources truncated to the
work directory's length, ``</s>`` appended by CTranslate2), never generates ``<pad>`` or ``<s>``
(as our searches), and gives every sentence the output length limit of ours
(``SearchOptions.output_length_limit``). CTranslate2 takes one limit per batch, so a batch is
decoded with its largest limit and the sentences whose output passed their own limit are decoded
again with theirs, those of one limit together (an untrained model's outputs all run to the limit:
one search per sentence made choosing its length penalty take minutes).

Length penalties differ: CTranslate2 divides a hypothesis' log-probability by
``length ** length_penalty``, GNMT (our beam search) by ``((5 + length) / 6) ** alpha``. Only
0 means the same in both; otherwise ``inference.ctranslate2_export`` picks CTranslate2's value on
the validation split when it exports.

A multilingual export (its SentencePiece model holds target-language tags) translates into
the request's language (``TranslationRequest.target_lang``, or one per row in
:meth:`CTranslate2Translator.translate_batch`): the tag goes in front of each source as in
training (in ``_sources`` alone), and no tag is ever generated.

N-best lists (:meth:`CTranslate2Translator.hypotheses`) are CTranslate2's ``num_hypotheses``
best, in its order (its length penalty), each scored as our runtimes score it: CTranslate2's own
beam scores normalise each step over the tokens it may write (``<pad>`` and ``<s>`` suppressed),
ours over the whole vocabulary (they differ by up to ~1e-3), so the hypotheses are scored again
with ``score_batch`` (which equals our forced scores within 1e-4) and divided by GNMT's length
penalty with the work directory's alpha.

Imports no TensorFlow: running an export needs ctranslate2 and sentencepiece only.

Example:
    >>> translator = CTranslate2Translator("runs/multi30k_de_en/ct2")
    >>> translator.translate(["Ein Hund rennt."])
    ['A dog is running.']
"""

from __future__ import annotations

import collections
import copy
import dataclasses
import functools
import os
from collections.abc import Callable, Sequence
from typing import TypeVar

import ctranslate2
import sentencepiece

from common.alignment import Alignment
from common.errors import ConfigError
from common.language_tags import defused, languages_in_pieces, sources_as_read, tag
from common.translation import (
    Hypothesis,
    RequestError,
    Sampling,
    Terms,
    TranslationRequest,
    check_pairs,
    pairs_in_batches,
    translate_in_batches,
)
from exports.contract import (
    CTRANSLATE2_VMAP_FILE,
    QUANTIZATIONS,
    TOKENIZER_FILE,
    DecodingSettings,
    ExportError,
)

# What our searches never generate (decoding.common.forbid_tokens): padding and BOS (and a
# multilingual model's tags).
_NEVER_GENERATED = [["<pad>"], ["<s>"]]
COMPUTE_TYPES = ("default", *QUANTIZATIONS)
T = TypeVar("T")


@dataclasses.dataclass(frozen=True)
class CrossAttention:
    """A translation with its pieces and one head's attention ``[output piece][source piece]``."""

    translation: str
    source_pieces: list[str]
    target_pieces: list[str]
    attention: list[list[float]]


class CTranslate2Translator:
    """A :class:`~common.translation.Translator` over a CTranslate2 export.

    Args:
        path: the export's directory.
        beam_size: default: the export's (``decoding.json``).
        length_penalty: CTranslate2's; default: the export's.
        compute_type: ``"default"`` computes in the type the weights were saved in.
        threads: CPU threads; 0: one per core this process may use.

    Example:
        >>> CTranslate2Translator("/tmp/run/ct2", beam_size=1).translate(["Ein Hund."])
        ['A dog.']
    """

    def __init__(
        self,
        path: str,
        beam_size: int | None = None,
        length_penalty: float | None = None,
        compute_type: str = "default",
        threads: int = 0,
    ) -> None:
        settings = DecodingSettings.read(path)
        if compute_type not in COMPUTE_TYPES:
            raise ConfigError(f"compute_type must be one of {COMPUTE_TYPES}, got {compute_type!r}.")
        try:
            self.options = settings.search_options(beam_size)
        except ValueError as error:
            raise ConfigError(f"Bad decoding option: {error}") from None
        self.length_penalty = settings.length_penalty if length_penalty is None else length_penalty
        if self.length_penalty < 0:
            raise ConfigError(
                f"The length penalty must not be negative, got {self.length_penalty}."
            )
        self.max_source_length = settings.max_source_length
        # The searches use the export's vocabulary shortlist, when it has one.
        self._use_vmap = os.path.exists(os.path.join(path, CTRANSLATE2_VMAP_FILE))
        try:
            self.tokenizer = sentencepiece.SentencePieceProcessor(
                model_file=os.path.join(path, TOKENIZER_FILE)
            )
            self._load = functools.partial(
                ctranslate2.Translator,
                path,
                device="cpu",
                compute_type=compute_type,
                intra_threads=threads or len(os.sched_getaffinity(0)),
                inter_threads=1,
            )
            self.translator = self._load()
        except (OSError, RuntimeError, ValueError) as error:
            raise ExportError(
                f"CTranslate2 cannot load the export in {path} ({error}); write it again with "
                "`python export.py --workdir=DIR --format=ctranslate2 --output=...`."
            ) from None
        pieces = map(self.tokenizer.id_to_piece, range(self.tokenizer.get_piece_size()))
        self.languages = languages_in_pieces(pieces)
        self._suppressed = _NEVER_GENERATED + [[tag(lang)] for lang in self.languages]

    @property
    def beam_size(self) -> int:
        return self.options.beam_size

    def source_lengths(
        self, sentences: Sequence[str], request: TranslationRequest = TranslationRequest()
    ) -> list[int]:
        """Each sentence's piece count (without EOS) as the model reads it (tag included)."""
        language = request.language(self.languages)
        return [len(p) for p in self._pieces(list(sentences), [language] * len(sentences))]

    def translate(
        self,
        sentences: Sequence[str],
        request: TranslationRequest = TranslationRequest(),
        batch_size: int = 64,
        progress: bool = True,
    ) -> list[str]:
        """Translates ``sentences`` in batches of similar length, keeping their order, as
        ``request`` asks (a multilingual export into its ``target_lang``; sampled with
        ``request.sampling``: see :meth:`sample`)."""
        language = request.language(self.languages)
        prefixes = request.prefixes(sentences)
        terms = _avoided_only(request, sentences)
        if request.sampling is not None:
            return self.sample(
                sentences, request.sampling, language, batch_size, progress, prefixes
            )

        def translate_rows(translator: CTranslate2Translator, rows: list[int]) -> list[str]:
            batch = [sentences[row] for row in rows]
            return translator.translate_batch(
                batch, [language] * len(rows), _rows_of(prefixes, rows)
            )

        return self._by_avoided(translate_rows, sentences, terms, batch_size, progress)

    def sample(
        self,
        sentences: Sequence[str],
        sampling: Sampling,
        language: str | None = None,
        batch_size: int = 64,
        progress: bool = True,
        target_prefixes: Sequence[str] | None = None,
    ) -> list[str]:
        """Sampled translations by CTranslate2's own sampler (``sampling_topk`` (0: the whole
        vocabulary), ``sampling_topp``, ``sampling_temperature``), each within its sentence's
        length limit.

        Reproducible for the same sentences and batch size, not in any batch as our search's:
        CTranslate2 seeds each worker thread's generator when a translator is created
        (``ctranslate2.set_random_seed`` from the calling thread alone does not repeat a draw),
        so each call loads the model again after seeding with ``sampling.seed``, and one
        generator runs through every batch.
        """
        ctranslate2.set_random_seed(sampling.seed)
        sampler = self._load()

        def sample_rows(rows: list[int]) -> list[str]:
            sources = self._sources([sentences[row] for row in rows], [language] * len(rows))
            limits = [self.options.output_length_limit(len(pieces) + 1) for pieces in sources]
            results = sampler.translate_batch(
                sources,
                target_prefix=self._prefix_pieces(_rows_of(target_prefixes, rows)),
                beam_size=1,
                sampling_topk=sampling.top_k,
                sampling_topp=sampling.top_p,
                sampling_temperature=sampling.temperature,
                max_decoding_length=max(limits),
                min_decoding_length=0,
                return_end_token=True,
                suppress_sequences=self._suppressed,
            )
            # Cut to its own limit: the tokens it drew before it, as if it had stopped there.
            return [
                self._detokenize(result.hypotheses[0][:limit])
                for result, limit in zip(results, limits, strict=True)
            ]

        return translate_in_batches(sample_rows, sentences, batch_size, progress)

    def translate_rows(
        self,
        sentences: Sequence[str],
        target_langs: Sequence[str | None],
        batch_size: int = 64,
        progress: bool = True,
    ) -> list[str]:
        """:meth:`translate` with each sentence's own target language, in batches of similar
        length."""

        def translate_rows(rows: list[int]) -> list[str]:
            batch = [sentences[row] for row in rows]
            return self.translate_batch(batch, [target_langs[row] for row in rows])

        return translate_in_batches(translate_rows, sentences, batch_size, progress)

    def translate_batch(
        self,
        sentences: list[str],
        target_langs: Sequence[str | None] | None = None,
        target_prefixes: Sequence[str] | None = None,
    ) -> list[str]:
        """Translations of one batch (CTranslate2 pads it itself); a multilingual export's rows
        each into its own target language (``target_langs``, checked before the search), each
        going on from its row's target prefix (``target_prefixes``, ``""`` for none)."""
        sources = self._sources(sentences, target_langs)
        prefixes = self._prefix_pieces(target_prefixes)
        return [self._detokenize(tokens) for tokens, _ in self._best(sources, prefixes)]

    def hypotheses(
        self,
        sentences: Sequence[str],
        request: TranslationRequest = TranslationRequest(),
        batch_size: int = 64,
        progress: bool = True,
    ) -> list[list[Hypothesis]]:
        """Each sentence's ``request.n_best`` best translations with our scores, best first."""
        language = request.language(self.languages)
        n_best = request.hypotheses_count(self.beam_size)
        prefixes = request.prefixes(sentences)
        terms = _avoided_only(request, sentences)

        def translate_rows(
            translator: CTranslate2Translator, rows: list[int]
        ) -> list[list[Hypothesis]]:
            batch = [sentences[row] for row in rows]
            return translator.hypotheses_batch(
                batch,
                [language] * len(batch),
                n_best,
                _rows_of(prefixes, rows),
                request.return_alternatives,
            )

        return self._by_avoided(translate_rows, sentences, terms, batch_size, progress)

    def avoiding(self, avoided: Sequence[str]) -> CTranslate2Translator:
        """This translator with the ``avoided`` phrases never written (CTranslate2's
        ``suppress_sequences``, which applies to a whole batch): a copy sharing the model."""
        if not avoided:
            return self
        copied = copy.copy(self)
        copied._suppressed = self._suppressed + self._target_pieces(list(avoided))
        return copied

    def _by_avoided(
        self,
        run_batch: Callable[[CTranslate2Translator, list[int]], list[T]],
        sentences: Sequence[str],
        terms: list[Terms] | None,
        batch_size: int,
        progress: bool,
    ) -> list[T]:
        """``run_batch(translator, rows)`` over batches of similar length, the rows of each set
        of avoided phrases (one set without ``terms``) by a translator :meth:`avoiding` them."""
        groups: dict[tuple[str, ...], list[int]] = {}
        for row in range(len(sentences)):
            groups.setdefault(terms[row].avoided if terms else (), []).append(row)
        results: list = [None] * len(sentences)
        for avoided, rows in groups.items():
            translator = self.avoiding(avoided)

            def run_rows(batch: list[int], rows=rows, translator=translator) -> list[T]:
                return run_batch(translator, [rows[index] for index in batch])

            group = [sentences[row] for row in rows]
            found = translate_in_batches(run_rows, group, batch_size, progress)
            for row, value in zip(rows, found, strict=True):
                results[row] = value
        return results

    def hypotheses_batch(
        self,
        sentences: list[str],
        target_langs: Sequence[str | None] | None,
        n_best: int,
        target_prefixes: Sequence[str] | None = None,
        return_alternatives: bool = False,
    ) -> list[list[Hypothesis]]:
        """:meth:`hypotheses` of one batch, each row into its own target language and from its
        own target prefix (``""``: none); with ``return_alternatives``, CTranslate2's."""
        sources = self._sources(sentences, target_langs)
        prefixes = self._prefix_pieces(target_prefixes)
        found = self._n_best_tokens(sources, n_best, prefixes, return_alternatives)
        pairs = [
            (source, tokens) for source, row in zip(sources, found, strict=True) for tokens in row
        ]
        scored = iter(self._token_log_probs(pairs))
        return [
            [self._hypothesis(self._detokenize(tokens), next(scored)) for tokens in row]
            for row in found
        ]

    def score(
        self,
        sources: Sequence[str],
        targets: Sequence[str],
        request: TranslationRequest = TranslationRequest(),
        batch_size: int = 64,
        progress: bool = True,
    ) -> list[Hypothesis]:
        """Forced decoding with ``score_batch``: each target (read whole, with ``</s>``; a
        multilingual export's with tags made plain, as in training) scored as a translation of
        its source, with its tokens' log-probabilities."""
        language = request.language(self.languages)

        def score_batch(batch_sources: list[str], batch_targets: list[str]) -> list[Hypothesis]:
            return self.score_batch(batch_sources, batch_targets, [language] * len(batch_sources))

        return pairs_in_batches(score_batch, sources, targets, batch_size, progress, "score")

    def score_batch(
        self,
        sources: list[str],
        targets: list[str],
        target_langs: Sequence[str | None] | None = None,
    ) -> list[Hypothesis]:
        """:meth:`score` of one batch, each row into its own target language."""
        check_pairs(sources, targets)
        pieces = self._target_pieces(targets)
        pairs = [
            (source, [*target, "</s>"])
            for source, target in zip(self._sources(sources, target_langs), pieces, strict=True)
        ]
        return [
            self._hypothesis(target, log_probs)
            for target, log_probs in zip(targets, self._token_log_probs(pairs), strict=True)
        ]

    def align(
        self,
        sources: Sequence[str],
        targets: Sequence[str],
        request: TranslationRequest = TranslationRequest(),
        batch_size: int = 64,
        progress: bool = True,
    ) -> list[Alignment]:
        """Word alignments from the attention CTranslate2 returns with each target forced as
        the target prefix (read as :meth:`score` reads it): the export's alignment heads, which
        ``inference.ctranslate2_export`` sets to ours (``decoding.alignment``; an export of an
        earlier version gives its last layer's first head)."""
        language = request.language(self.languages)

        def align_batch(batch_sources: list[str], batch_targets: list[str]) -> list[Alignment]:
            return self.align_batch(batch_sources, batch_targets, [language] * len(batch_sources))

        return pairs_in_batches(align_batch, sources, targets, batch_size, progress, "align")

    def align_batch(
        self,
        sources: list[str],
        targets: list[str],
        target_langs: Sequence[str | None] | None = None,
    ) -> list[Alignment]:
        """:meth:`align` of one batch, each row into its own target language."""
        check_pairs(sources, targets)
        source_pieces = self._sources(sources, target_langs)
        target_pieces = self._target_pieces(targets)
        if not sources:
            return []
        results = self.translator.translate_batch(
            source_pieces,
            target_prefix=target_pieces,
            beam_size=1,
            max_decoding_length=max(1, *map(len, target_pieces)),
            min_decoding_length=0,
            return_attention=True,
        )
        return [
            Alignment(source, target, result.attention[0][: len(target)])
            for source, target, result in zip(source_pieces, target_pieces, results, strict=True)
        ]

    def _token_log_probs(self, pairs: list[tuple[list[str], list[str]]]) -> list[list[float]]:
        """Each ``(source pieces, output pieces)`` pair's tokens' log-probabilities over the
        whole vocabulary, by ``score_batch``: EOS's included when the output ends with one (one
        that reached its length limit has none)."""
        if not pairs:
            return []
        results = self.translator.score_batch(
            [source for source, _ in pairs],
            [[token for token in tokens if token != "</s>"] for _, tokens in pairs],
        )
        return [
            result.log_probs if tokens[-1:] == ["</s>"] else result.log_probs[:-1]
            for (_, tokens), result in zip(pairs, results, strict=True)
        ]

    def _hypothesis(self, text: str, log_probs: list[float]) -> Hypothesis:
        """``text`` with its tokens' ``log_probs`` and its score: their sum over GNMT's length
        penalty with the work directory's alpha, as our searches score."""
        log_prob, length = float(sum(log_probs)), len(log_probs)
        score = log_prob / self.options.gnmt_penalty(length)
        return Hypothesis(text, score, log_prob, length, tuple(float(v) for v in log_probs))

    def cross_attention(
        self, sentences: list[str], target_langs: Sequence[str | None] | None = None
    ) -> list[CrossAttention]:
        """Translations of one batch with the attention CTranslate2 returns: the export's
        alignment heads (``decoding.alignment``'s: the heads' mean of the decoder layer before
        the last; an export of an earlier version: the last layer's first head), a row for each
        output piece
        (``</s>`` included) over the source pieces (CTranslate2 leaves out the source's ``</s>``,
        so a row sums to at most 1).

        Example:
            >>> result = translator.cross_attention(["Ein Hund."])[0]
            >>> len(result.attention), len(result.attention[0])  # (output pieces, source pieces)
            (4, 3)
        """
        sources = self._sources(sentences, target_langs)
        best = self._best(sources, None, return_attention=True)
        first_rows = self._first_attention_rows(sources)
        return [
            CrossAttention(self._detokenize(tokens), source, tokens, [first_row, *attention[1:]])
            for source, (tokens, attention), first_row in zip(
                sources, best, first_rows, strict=True
            )
        ]

    def _first_attention_rows(self, sources: list[list[str]]) -> list[list[float]]:
        """Each source's attention row for the first output piece, from one greedy step.

        CTranslate2's beam search (4.8.5, beam size > 1) returns for the first output piece of
        a sentence whose translation ends before another's in its batch that other sentence's
        attention row (cut to its length). Every hypothesis starts from ``<s>``, so the row does
        not depend on the search: one greedy step of the whole batch gives each sentence its
        own.
        """
        results = self.translator.translate_batch(
            sources,
            beam_size=1,
            max_decoding_length=1,
            min_decoding_length=0,
            return_end_token=True,
            return_attention=True,
        )
        return [result.attention[0][0] for result in results]

    def _sources(
        self, sentences: list[str], target_langs: Sequence[str | None] | None
    ) -> list[list[str]]:
        """The pieces the model reads: :meth:`_pieces` truncated to the export's length."""
        return [p[: self.max_source_length - 1] for p in self._pieces(sentences, target_langs)]

    def _pieces(
        self, sentences: list[str], target_langs: Sequence[str | None] | None
    ) -> list[list[str]]:
        """Each sentence's pieces: a multilingual export's with its row's target language's tag
        in front (the one place a tag is added here), each language checked first."""
        texts = sources_as_read(sentences, target_langs, self.languages)
        return self.tokenizer.encode(texts, out_type=str)

    def _prefix_pieces(self, prefixes: Sequence[str] | None) -> list[list[str]] | None:
        """Target prefixes as CTranslate2's ``target_prefix``: each one's pieces, tokenized as
        a translation (a multilingual export's with tags made plain); None without any."""
        if prefixes is None or not any(prefixes):
            return None
        return self._target_pieces(prefixes)

    def _target_pieces(self, texts: Sequence[str]) -> list[list[str]]:
        """Texts written in the target language (translations, prefixes) as their pieces; a
        multilingual export's with tags made plain, as in training."""
        texts = [defused(text) for text in texts] if self.languages else list(texts)
        return self.tokenizer.encode(texts, out_type=str)

    def _detokenize(self, tokens: list[str]) -> str:
        return self.tokenizer.decode([token for token in tokens if token != "</s>"])

    def _best(
        self,
        sources: list[list[str]],
        prefixes: list[list[str]] | None,
        return_attention: bool = False,
    ) -> list[tuple[list[str], list[list[float]] | None]]:
        """Each source's best hypothesis (``</s>`` included when it ended with one) and, with
        ``return_attention``, its attention, each within the source's own length limit."""
        return [row[0] for row in self._within_limits(sources, prefixes, 1, return_attention)]

    def _n_best_tokens(
        self,
        sources: list[list[str]],
        n_best: int,
        prefixes: list[list[str]] | None,
        return_alternatives: bool = False,
    ) -> list[list[list[str]]]:
        """Each source's ``n_best`` best hypotheses' pieces (or alternatives after its prefix),
        within its length limit."""
        rows = self._within_limits(sources, prefixes, n_best, False, return_alternatives)
        return [[tokens for tokens, _ in row] for row in rows]

    def _within_limits(
        self,
        sources: list[list[str]],
        prefixes: list[list[str]] | None,
        num_hypotheses: int,
        return_attention: bool,
        return_alternatives: bool = False,
    ) -> list[list[tuple[list[str], list[list[float]] | None]]]:
        """:meth:`_search` with each source's own output length limit (a longer target prefix
        is cut there, as ours): the batch searched with the largest, then the sentences with a
        hypothesis past their own searched again, those of one limit together."""
        limits = [self.options.output_length_limit(len(pieces) + 1) for pieces in sources]
        outputs = self._search(
            sources,
            prefixes,
            max(limits, default=1),
            num_hypotheses,
            return_attention,
            return_alternatives,
        )
        too_long = collections.defaultdict(list)  # limit -> the sentences that passed it
        for index, limit in enumerate(limits):
            if any(len(tokens) > limit for tokens, _ in outputs[index]):
                too_long[limit].append(index)
        for limit, indices in too_long.items():
            again = self._search(
                [sources[index] for index in indices],
                _rows_of(prefixes, indices),
                limit,
                num_hypotheses,
                return_attention,
                return_alternatives,
            )
            for index, output in zip(indices, again, strict=True):
                outputs[index] = output
        return outputs

    def _search(
        self,
        sources: list[list[str]],
        prefixes: list[list[str]] | None,
        max_length: int,
        num_hypotheses: int,
        return_attention: bool,
        return_alternatives: bool = False,
    ) -> list[list[tuple[list[str], list[list[float]] | None]]]:
        """Each source's ``num_hypotheses`` best hypotheses (and their attention), best first."""
        if not sources:
            return []
        results = self.translator.translate_batch(
            sources,
            target_prefix=prefixes,
            beam_size=self.options.beam_size,
            num_hypotheses=num_hypotheses,
            length_penalty=self.length_penalty,
            max_decoding_length=max_length,
            min_decoding_length=0,
            return_end_token=True,
            return_attention=return_attention,
            return_alternatives=return_alternatives,
            suppress_sequences=self._suppressed,
            use_vmap=self._use_vmap,
        )
        return [
            [
                (tokens, result.attention[rank] if return_attention else None)
                for rank, tokens in enumerate(result.hypotheses)
            ]
            for result in results
        ]


def _rows_of(values: Sequence[T] | None, rows: Sequence[int]) -> list[T] | None:
    """``values`` at ``rows`` (None: None), as a batch takes a request's per-sentence values."""
    return None if values is None else [values[row] for row in rows]


def _avoided_only(request: TranslationRequest, sentences: Sequence[str]) -> list[Terms] | None:
    """Each sentence's terms when they only avoid phrases (CTranslate2 suppresses those); a
    RequestError for required terms, which CTranslate2 cannot place."""
    terms = request.sentence_terms(sentences)
    if terms is not None and any(given.required for given in terms):
        raise RequestError(
            "CTranslate2 has no constrained search to place terms (it avoids phrases only): "
            "translate with the work directory (--workdir) or its SavedModel (--saved_model)."
        )
    return terms
