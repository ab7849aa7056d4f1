"""What every translator offers (:class:`Translator`), what a translation is asked with
(:class:`TranslationRequest`), and the helpers they share, in Python only.

A work directory's ``decoding.translator.ModelTranslator`` (one model or an ensemble), an
exported SavedModel (``exports.saved_model.SavedModelTranslator``) and a CTranslate2 export
(``exports.ctranslate2.CTranslate2Translator``) are all Translators: scripts, evaluation and
training's validation take any. A translation's options travel as one value, the request, so an
option is added in one place and every runtime receives it the same way. This module imports no
TensorFlow, so the CTranslate2 runtime needs none.

Example:
    >>> translator.translate(["Ein Hund rennt."], TranslationRequest(target_lang="fr"))
    ['Un chien court.']
    >>> translator.hypotheses(["Ein Hund rennt."], TranslationRequest(n_best=2))[0]
    [Hypothesis(text='A dog runs.', score=-0.52, log_prob=-0.79, length=5), ...]
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from typing import Protocol, TypeVar

from tqdm import tqdm

from common.alignment import Alignment
from common.errors import UserError
from common.glossary import Glossary
from common.language_tags import check_language

T = TypeVar("T")


class RequestError(UserError, ValueError):
    """A translation option a model cannot honour (the message names it and the limit)."""


@dataclasses.dataclass(frozen=True)
class Sampling:
    """Random sampling in place of the search: each token drawn from the model's distribution.

    Args:
        top_k: draw among the ``top_k`` most likely tokens only; 0 for the whole vocabulary
            (1 is greedy search).
        top_p: draw among the smallest set of most likely tokens whose probability reaches
            ``top_p`` (nucleus sampling); 1.0 keeps every token.
        temperature: logits are divided by it before the cuts: below 1 sharper, above 1 flatter.
        seed: the same seed, sentence and model give the same translation.

    Example:
        >>> Sampling(top_k=10, seed=3).top_p
        1.0
    """

    top_k: int = 0
    top_p: float = 1.0
    temperature: float = 1.0
    seed: int = 0

    def __post_init__(self) -> None:
        if isinstance(self.top_k, bool) or not isinstance(self.top_k, int) or self.top_k < 0:
            raise RequestError(
                f"top_k must be 0 (the whole vocabulary) or a positive integer, got {self.top_k!r}."
            )
        if not 0.0 < self.top_p <= 1.0:
            raise RequestError(f"top_p must be in (0, 1], got {self.top_p!r}.")
        if not self.temperature > 0.0:
            raise RequestError(f"temperature must be positive, got {self.temperature!r}.")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int):
            raise RequestError(f"seed must be an integer, got {self.seed!r}.")


# The most required terms, and avoided phrases, one sentence may be given (each one widens the
# search: a candidate per term per hypothesis).
MAX_TERMS = 16
# What separates a sentence's phrases where they travel as one string (Terms.lines).
PHRASE_SEPARATOR = "\n"


def _phrases(value: object, name: str) -> tuple[str, ...]:
    """``value`` as a tuple of non-blank strings of at most :data:`MAX_TERMS` (a RequestError
    naming ``name`` otherwise)."""
    if isinstance(value, str) or not all(isinstance(phrase, str) for phrase in value):
        raise RequestError(f"{name} must be a list of strings, got {value!r}.")
    phrases = tuple(phrase.strip() for phrase in value)
    if not all(phrases):
        raise RequestError(f"{name} must not hold an empty phrase, got {value!r}.")
    if any(PHRASE_SEPARATOR in phrase or "\r" in phrase for phrase in phrases):
        raise RequestError(f"{name} must be phrases of one line, got {value!r}.")
    if len(phrases) > MAX_TERMS:
        raise RequestError(f"Give at most {MAX_TERMS} {name} a sentence, got {len(phrases)}.")
    return phrases


@dataclasses.dataclass(frozen=True)
class Terms:
    """One sentence's terminology: phrases its translation must hold, and phrases it must not
    (lexically constrained beam search, :mod:`decoding.constraints`).

    Args:
        required: target-language phrases the translation holds, each as written and as
            whole words (not "dog" in "dogs"), in any order.
        avoided: target-language phrases it never holds (tokenized as a translation is, so
            avoiding "dog" also avoids "dogs").

    Example:
        >>> Terms(required=["Schäferhund"], avoided=["Hund"]).required
        ('Schäferhund',)
    """

    required: Sequence[str] = ()
    avoided: Sequence[str] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "required", _phrases(self.required, "required terms"))
        object.__setattr__(self, "avoided", _phrases(self.avoided, "avoided phrases"))

    def __bool__(self) -> bool:
        return bool(self.required or self.avoided)

    def lines(self) -> tuple[str, str]:
        """The required and the avoided phrases, each as one string of a phrase a line (``""``:
        none): how a SavedModel's ``constrained`` signature takes them.

        Example:
            >>> Terms(["a hound", "meadow"]).lines()
            ('a hound\nmeadow', '')
        """
        return PHRASE_SEPARATOR.join(self.required), PHRASE_SEPARATOR.join(self.avoided)

    @classmethod
    def from_fields(cls, fields: object) -> Terms:
        """The terms of a JSON object's fields ``"terms"`` (required) and ``"avoid"``, as a
        server row and a line of ``translate.py --terms=FILE.jsonl`` give them; a RequestError
        for anything else.

        Example:
            >>> Terms.from_fields({"terms": ["hound"], "avoid": ["dog"]})
            Terms(required=('hound',), avoided=('dog',))
        """
        if not isinstance(fields, dict) or set(fields) - {"terms", "avoid"}:
            raise RequestError(
                'Terms are a JSON object with the fields "terms" (phrases the translation must '
                f'hold) and "avoid" (phrases it must not), got {fields!r}.'
            )
        for name in ("terms", "avoid"):
            if not isinstance(fields.get(name, []), list):
                raise RequestError(f'"{name}" must be a list of strings, got {fields[name]!r}.')
        return cls(fields.get("terms", ()), fields.get("avoid", ()))


@dataclasses.dataclass(frozen=True)
class TranslationRequest:
    """The options of one translation call, the same for every runtime.

    Args:
        target_lang: a multilingual model's target language (one of its ``languages``); None
            for a model of one target language.
        n_best: how many hypotheses :meth:`Translator.hypotheses` returns for each sentence,
            best first: 1 to the translator's beam size.
        sampling: translate by random sampling (:class:`Sampling`) in place of the search;
            translations only (no n-best lists or scores).
        target_prefix: each sentence's start of its translation, in the order of the
            sentences (``""``: none): the search writes it, then goes on from there (the
            translation includes it). Tokenized as the model tokenizes a translation, so a
            prefix ending inside a word may be continued into it.
        return_alternatives: :meth:`Translator.hypotheses` gives the ``n_best`` most likely
            tokens at the first position after the target prefix (the first position without
            one), each continued by the search (CTranslate2's ``return_alternatives``): the
            next words an interactive tool offers. ``n_best`` is then not limited by the beam.
        terms: each sentence's :class:`Terms` (or None: none), in the order of the sentences:
            the search places them (n-best lists with scores and prefixes go with them;
            sampling and alternatives do not).
        glossary: a :class:`~common.glossary.Glossary` whose target terms are required in each
            sentence where their source phrase occurs (besides its ``terms``).

    Example:
        >>> TranslationRequest(target_lang="fr").language(("de", "fr"))
        'fr'
    """

    target_lang: str | None = None
    n_best: int = 1
    sampling: Sampling | None = None
    target_prefix: Sequence[str] | None = None
    return_alternatives: bool = False
    terms: Sequence[Terms | None] | None = None
    glossary: Glossary | None = None

    def __post_init__(self) -> None:
        if isinstance(self.n_best, bool) or not isinstance(self.n_best, int) or self.n_best < 1:
            raise RequestError(f"n_best must be a positive integer, got {self.n_best!r}.")
        if self.sampling is not None and not isinstance(self.sampling, Sampling):
            raise RequestError(f"sampling must be a Sampling, got {self.sampling!r}.")
        if self.target_prefix is not None:
            if isinstance(self.target_prefix, str) or not all(
                isinstance(prefix, str) for prefix in self.target_prefix
            ):
                raise RequestError(
                    "target_prefix must be a list of strings, one for each sentence, got "
                    f"{self.target_prefix!r}."
                )
            object.__setattr__(self, "target_prefix", tuple(self.target_prefix))
        if self.terms is not None:
            if not all(terms is None or isinstance(terms, Terms) for terms in self.terms):
                raise RequestError(
                    f"terms must be a list of Terms (or None), one for each sentence, got "
                    f"{self.terms!r}."
                )
            object.__setattr__(self, "terms", tuple(self.terms))
        if self.glossary is not None and not isinstance(self.glossary, Glossary):
            raise RequestError(f"glossary must be a Glossary, got {self.glossary!r}.")
        constrained = self.glossary is not None or (self.terms is not None and any(self.terms))
        if constrained and (self.sampling is not None or self.return_alternatives):
            raise RequestError(
                "Terms are placed by the search: ask for terms or for "
                f"{'sampling' if self.sampling else 'alternatives'}, not both."
            )

    def prefixes(self, sentences: Sequence[str]) -> list[str] | None:
        """``target_prefix`` checked against ``sentences`` (a RequestError unless there is one
        prefix for each); None without prefixes (or when every one is empty).

        Example:
            >>> TranslationRequest(target_prefix=["A dog", ""]).prefixes(["Ein Hund.", "Ja."])
            ['A dog', '']
        """
        if self.target_prefix is None:
            return None
        if len(self.target_prefix) != len(sentences):
            raise RequestError(
                f"Give one target prefix for each sentence: got {len(self.target_prefix)} for "
                f"{len(sentences)} sentences."
            )
        return list(self.target_prefix) if any(self.target_prefix) else None

    def sentence_terms(self, sentences: Sequence[str]) -> list[Terms] | None:
        """Each sentence's :class:`Terms`: its ``terms`` (checked against ``sentences``: a
        RequestError unless there are terms, or None, for each) and the ``glossary``'s target
        terms whose source phrase it holds; None when no sentence has any.

        Example:
            >>> TranslationRequest(terms=[Terms(["a dog"]), None]).sentence_terms(["Hund.", "Ja."])
            [Terms(required=('a dog',), avoided=()), Terms(required=(), avoided=())]
        """
        terms = [Terms()] * len(sentences)
        if self.terms is not None:
            if len(self.terms) != len(sentences):
                raise RequestError(
                    f"Give terms (or None) for each sentence: got {len(self.terms)} for "
                    f"{len(sentences)} sentences."
                )
            terms = [given or Terms() for given in self.terms]
        if self.glossary is not None:
            terms = [
                Terms(
                    tuple(dict.fromkeys((*given.required, *self.glossary.targets_for(sentence)))),
                    given.avoided,
                )
                for given, sentence in zip(terms, sentences, strict=True)
            ]
        return terms if any(terms) else None

    def hypotheses_count(self, beam_size: int) -> int:
        """``n_best``, checked against a translator's ``beam_size`` (a search keeps no more);
        a RequestError with sampling, whose translations come without scores."""
        if self.sampling is not None:
            raise RequestError(
                "Sampled translations come without n-best lists or scores: ask for sampling or "
                "for those, not both."
            )
        if self.n_best > beam_size and not self.return_alternatives:
            raise RequestError(
                f"n_best ({self.n_best}) must not exceed the beam size ({beam_size}): a search "
                "keeps that many hypotheses; ask for fewer, or decode with a larger beam "
                "(--beam_size with --workdir)."
            )
        return self.n_best

    def language(self, languages: Sequence[str]) -> str | None:
        """The target language checked against a model's ``languages`` (() for a model of one
        target language), before any search: an ``UnknownLanguageError`` naming them."""
        return check_language(self.target_lang, languages)


@dataclasses.dataclass(frozen=True)
class Hypothesis:
    """One translation of a sentence with what the model thinks of it.

    Args:
        text: the translation.
        score: what the search ranks by: ``log_prob / lp(length)``, GNMT's length penalty
            ``lp(length) = ((5 + length) / 6) ** alpha`` with the translator's ``alpha``.
        log_prob: the sum of its tokens' log-probabilities (EOS included).
        length: its tokens, EOS included.
        token_log_probs: each token's log-probability (EOS included; they sum to
            ``log_prob``), as :meth:`Translator.hypotheses` and :meth:`Translator.score` give
            them; () when none are given.

    Example:
        >>> round(Hypothesis("A dog.", score=-0.5, log_prob=-0.8, length=4).confidence, 3)
        0.819
    """

    text: str
    score: float
    log_prob: float
    length: int
    token_log_probs: tuple[float, ...] = ()

    @property
    def confidence(self) -> float:
        """The geometric mean of its tokens' probabilities, ``exp(log_prob / length)``: in
        (0, 1], comparable across lengths and models."""
        return math.exp(self.log_prob / max(self.length, 1))

    def fields(self) -> dict[str, object]:
        """Its JSON fields, as every surface writes a hypothesis (``translate.py``'s and
        ``score.py``'s JSON lines, the server's rows).

        Example:
            >>> list(Hypothesis("A dog.", -0.5, -0.8, 2, (-0.3, -0.5)).fields())
            ['translation', 'score', 'log_prob', 'length', 'confidence', 'token_log_probs']
        """
        return {
            "translation": self.text,
            "score": self.score,
            "log_prob": self.log_prob,
            "length": self.length,
            "confidence": self.confidence,
            "token_log_probs": list(self.token_log_probs),
        }


class Translator(Protocol):
    """Anything that translates sentences: a model of a work directory or an export.

    Example:
        >>> def translate_file(translator: Translator, lines: list[str]) -> list[str]:
        ...     for warning in truncation_warnings(translator, lines):
        ...         print(warning)
        ...     return translator.translate(lines)
    """

    @property
    def beam_size(self) -> int:
        """The beam size of its search (1: greedy)."""
        ...

    @property
    def languages(self) -> tuple[str, ...]:
        """A multilingual model's target languages, sorted; () for one target language."""
        ...

    @property
    def max_source_length(self) -> int:
        """The tokens (EOS included) of a source the model reads; the rest is truncated."""
        ...

    def translate(
        self,
        sentences: Sequence[str],
        request: TranslationRequest = TranslationRequest(),
        batch_size: int = 64,
        progress: bool = True,
    ) -> list[str]:
        """Translations of ``sentences``, in their order, as ``request`` asks (an
        UnknownLanguageError for a target language not in ``languages``)."""
        ...

    def hypotheses(
        self,
        sentences: Sequence[str],
        request: TranslationRequest = TranslationRequest(),
        batch_size: int = 64,
        progress: bool = True,
    ) -> list[list[Hypothesis]]:
        """Each sentence's ``request.n_best`` best translations with their scores, best first
        (the first is :meth:`translate`'s); a RequestError for more than ``beam_size``."""
        ...

    def score(
        self,
        sources: Sequence[str],
        targets: Sequence[str],
        request: TranslationRequest = TranslationRequest(),
        batch_size: int = 64,
        progress: bool = True,
    ) -> list[Hypothesis]:
        """Forced decoding: each target scored as a translation of its source (a
        :class:`Hypothesis` of the target, with ``token_log_probs``), in their order."""
        ...

    def align(
        self,
        sources: Sequence[str],
        targets: Sequence[str],
        request: TranslationRequest = TranslationRequest(),
        batch_size: int = 64,
        progress: bool = True,
    ) -> list[Alignment]:
        """Each target's word alignment with its source (:class:`common.alignment.Alignment`:
        Pharaoh links and the soft alignment), read off the model's attention as it writes the
        target: any translation, the model's own (:meth:`translate`'s) or given."""
        ...

    def source_lengths(
        self, sentences: Sequence[str], request: TranslationRequest = TranslationRequest()
    ) -> list[int]:
        """Each sentence's token count (without EOS) as the model reads it for ``request`` (a
        multilingual model's with its tag); over ``max_source_length - 1``, it is truncated."""
        ...


def hypotheses_rows(
    texts: Sequence[Sequence[bytes | str]],
    scores: Sequence[Sequence[float]],
    log_probs: Sequence[Sequence[float]],
    lengths: Sequence[Sequence[int]],
    token_log_probs: Sequence[Sequence[Sequence[float]]],
    n_best: int,
) -> list[list[Hypothesis]]:
    """A runtime's ``(batch, n)`` columns (strings as bytes or str) and ``(batch, n, out_len)``
    token log-probabilities (padded) as each row's first ``n_best``
    :class:`Hypothesis` values; those a search never finished (length 0: fewer hypotheses ended
    than asked for) are left out.

    Example:
        >>> hypotheses_rows([[b"A dog."]], [[-0.5]], [[-0.8]], [[2]], [[[-0.3, -0.5, 0]]], 1)
        [[Hypothesis(text='A dog.', score=-0.5, log_prob=-0.8, length=2,
                     token_log_probs=(-0.3, -0.5))]]
    """
    rows = []
    for row in zip(texts, scores, log_probs, lengths, token_log_probs, strict=True):
        rows.append(
            [
                Hypothesis(
                    text.decode("utf-8", errors="replace") if isinstance(text, bytes) else text,
                    float(score),
                    float(log_prob),
                    int(length),
                    tuple(float(value) for value in tokens[:length]),
                )
                for text, score, log_prob, length, tokens in list(zip(*row, strict=True))[:n_best]
                if length > 0
            ]
        )
    return rows


def sentence_seeds(seed: int, rows: Sequence[int]) -> list[int]:
    """The sampling seed of each sentence of a request of ``seed``, by its position in the
    request (``rows``): different sentences draw differently, and a sentence draws the same in
    any batch. Non-negative int32 values.

    Example:
        >>> sentence_seeds(0, [0, 1]), sentence_seeds(1, [0])
        ([0, 1], [1640531527])
    """
    return [(seed * 0x9E3779B1 + row) & 0x7FFFFFFF for row in rows]


def check_pairs(sources: Sequence[str], targets: Sequence[str]) -> None:
    """A RequestError unless there is one target for each source."""
    if len(sources) != len(targets):
        raise RequestError(
            f"Give one target for each source: got {len(targets)} targets for {len(sources)} "
            "sources."
        )


def pairs_in_batches(
    run_batch: Callable[[list[str], list[str]], list[T]],
    sources: Sequence[str],
    targets: Sequence[str],
    batch_size: int,
    progress: bool,
    description: str,
) -> list[T]:
    """``run_batch(batch_sources, batch_targets)`` over batches of ``(source, target)`` pairs
    of similar length (a RequestError unless there is one target for each source), with a
    progress bar; the results come back in the pairs' order.

    Example:
        >>> pairs_in_batches(lambda s, t: [len(a + b) for a, b in zip(s, t)], ["a"], ["bc"], 64,
        ...                  False, "score")
        [3]
    """
    check_pairs(sources, targets)

    def run_rows(rows: list[int]) -> list[T]:
        return run_batch([sources[row] for row in rows], [targets[row] for row in rows])

    return translate_in_batches(run_rows, sources, batch_size, progress, description)


def scored_targets(
    targets: Sequence[str],
    scores: Sequence[float],
    log_probs: Sequence[float],
    lengths: Sequence[int],
    token_log_probs: Sequence[Sequence[float]],
) -> list[Hypothesis]:
    """A runtime's ``(batch,)`` scores of given targets (and ``(batch, target_len)`` token
    log-probabilities, padded) as :class:`Hypothesis` values.

    Example:
        >>> scored_targets(["A dog."], [-0.5], [-0.8], [2], [[-0.3, -0.5, 0.0]])[0].token_log_probs
        (-0.3, -0.5)
    """
    return [
        Hypothesis(
            target,
            float(score),
            float(log_prob),
            int(length),
            tuple(float(value) for value in tokens[:length]),
        )
        for target, score, log_prob, length, tokens in zip(
            targets, scores, log_probs, lengths, token_log_probs, strict=True
        )
    ]


def truncation_warnings(
    translator: Translator,
    sentences: Sequence[str],
    request: TranslationRequest = TranslationRequest(),
    first_number: int = 1,
) -> list[str]:
    """One line for each of ``sentences`` longer than ``translator``'s model reads (the rest is
    truncated), its tokens counted as the model reads it for ``request`` (a multilingual
    model's with its tag: :meth:`Translator.source_lengths`); the sentences are numbered from
    ``first_number`` (their line in a larger file).

    Example:
        >>> truncation_warnings(translator, ["Ja.", "Hund " * 70])  # max_source_length 64
        ['warning: sentence 2 has 70 tokens; only the first 63 are translated.']
    """
    limit = translator.max_source_length - 1
    return [
        f"warning: sentence {number} has {length} tokens; only the first {limit} are translated."
        for number, length in enumerate(translator.source_lengths(sentences, request), first_number)
        if length > limit
    ]


def translate_in_batches(
    translate_rows: Callable[[list[int]], list[T]],
    sentences: Sequence[str],
    batch_size: int = 64,
    progress: bool = True,
    description: str = "translate",
) -> list[T]:
    """Runs ``translate_rows`` over batches of the indices of ``sentences`` of similar length
    (so that a runtime can take each row's own options), with a progress bar; the translations
    (or any result a row has) come back in the order of ``sentences``.

    Example:
        >>> translate_in_batches(lambda rows: [sentences[i].upper() for i in rows], sentences)
    """
    order = sorted(range(len(sentences)), key=lambda i: len(sentences[i]))
    translations: list[T | None] = [None] * len(sentences)
    with tqdm(
        total=len(sentences),
        desc=description,
        unit="sent",
        disable=not progress,
        dynamic_ncols=True,
    ) as bar:
        for start in range(0, len(order), batch_size):
            indices = order[start : start + batch_size]
            for index, output in zip(indices, translate_rows(indices), strict=True):
                translations[index] = output
            bar.update(len(indices))
    return translations
