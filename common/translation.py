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
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Protocol

from tqdm import tqdm

from common.language_tags import check_language


@dataclasses.dataclass(frozen=True)
class TranslationRequest:
    """The options of one translation call, the same for every runtime.

    Args:
        target_lang: a multilingual model's target language (one of its ``languages``); None
            for a model of one target language.

    Example:
        >>> TranslationRequest(target_lang="fr").language(("de", "fr"))
        'fr'
    """

    target_lang: str | None = None

    def language(self, languages: Sequence[str]) -> str | None:
        """The target language checked against a model's ``languages`` (() for a model of one
        target language), before any search: an ``UnknownLanguageError`` naming them."""
        return check_language(self.target_lang, languages)


class Translator(Protocol):
    """Anything that translates sentences: a model of a work directory or an export.

    Example:
        >>> def translate_file(translator: Translator, lines: list[str]) -> list[str]:
        ...     for warning in translator.truncation_warnings(lines):
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

    def truncation_warnings(
        self, sentences: Sequence[str], request: TranslationRequest = TranslationRequest()
    ) -> list[str]:
        """One line for each sentence longer than the model reads (it is truncated), counted
        as the model reads it for ``request`` (a multilingual model's with its tag)."""
        ...


def truncation_warnings(source_lengths: Sequence[int], max_source_length: int) -> list[str]:
    """Warnings for the sentences whose token count (without EOS) exceeds what is translated.

    Example:
        >>> truncation_warnings([3, 70], max_source_length=64)
        ['warning: sentence 2 has 70 tokens; only the first 63 are translated.']
    """
    limit = max_source_length - 1
    return [
        f"warning: sentence {number} has {length} tokens; only the first {limit} are translated."
        for number, length in enumerate(source_lengths, 1)
        if length > limit
    ]


def translate_in_batches(
    translate_rows: Callable[[list[int]], list[str]],
    sentences: Sequence[str],
    batch_size: int = 64,
    progress: bool = True,
) -> list[str]:
    """Runs ``translate_rows`` over batches of the indices of ``sentences`` of similar length
    (so that a runtime can take each row's own options), with a progress bar; the translations
    come back in the order of ``sentences``.

    Example:
        >>> translate_in_batches(lambda rows: [sentences[i].upper() for i in rows], sentences)
    """
    order = sorted(range(len(sentences)), key=lambda i: len(sentences[i]))
    translations: list[str] = [""] * len(sentences)
    with tqdm(
        total=len(sentences),
        desc="translate",
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
