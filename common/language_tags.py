"""Target-language tags: how one model is told which language to translate into.

A multilingual model (Johnson et al., 2017) reads its source with a tag naming the target
language in front: ``"<2fr> Ein Hund rennt."`` is translated into French. Each tag is one piece
of the joint SentencePiece vocabulary (a user-defined symbol, ``data_pipeline.tokenizer``), so
the tagged source goes through every search, the ensemble and CTranslate2 unchanged; searches
never write a tag (``decoding.options.SearchOptions.forbidden_ids``).

The tag is followed by a space, so the sentence's first word is segmented as it is without the
tag. A tag written in the text itself (``"… <2de> …"``) is read as plain characters, not as a
tag: :func:`defused` puts a space after its ``<`` (also in-graph: ``TAG_IN_TEXT`` and
``DEFUSED_TAG`` are an RE2 pattern and rewrite), so the model reads exactly one tag.

A model's languages are read from its vocabulary (:func:`languages_in_pieces`), so every
artifact that carries the SentencePiece model (a work directory, a SavedModel, a CTranslate2
export) knows them. This module imports nothing but the standard library.

Example:
    >>> tagged("Ein Hund rennt.", "fr")
    '<2fr> Ein Hund rennt.'
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from common.errors import UserError

TAG_IN_TEXT, DEFUSED_TAG = r"<2([a-z]{2,3})>", r"< 2\1>"
_TAG = re.compile(TAG_IN_TEXT)
# A tagged source is TAG_START + language + TAG_END + text (also built in-graph from these).
TAG_START, TAG_END = "<2", "> "


class UnknownLanguageError(UserError, ValueError):
    """A target language the model does not translate into (or none where one is needed)."""


def tag(language: str) -> str:
    """The tag piece of a target language.

    Example:
        >>> tag("de")
        '<2de>'
    """
    if not _TAG.fullmatch(f"<2{language}>"):
        raise UnknownLanguageError(
            f"{language!r} is not a language code: use two or three lower-case letters "
            "(ISO 639), e.g. 'de'."
        )
    return f"<2{language}>"


def defused(text: str) -> str:
    """``text`` with every tag in it made plain characters (a space after its ``<``).

    Example:
        >>> defused("Say <2de> twice.")
        'Say < 2de> twice.'
    """
    return _TAG.sub(DEFUSED_TAG, text)


def tagged(text: str, language: str) -> str:
    """``text`` (:func:`defused`) with the tag of ``language`` in front (and a space after it).

    Example:
        >>> tagged("A dog.", "cs")
        '<2cs> A dog.'
    """
    tag(language)  # checks the code
    return f"{TAG_START}{language}{TAG_END}{defused(text)}"


def languages_in_pieces(pieces: Iterable[str]) -> tuple[str, ...]:
    """The languages whose tags are among a vocabulary's ``pieces``, sorted; () for a model of
    one target language.

    Example:
        >>> languages_in_pieces(["<pad>", "<2fr>", "<2de>", "▁Hund"])
        ('de', 'fr')
    """
    return tuple(sorted(m.group(1) for piece in pieces if (m := _TAG.fullmatch(piece))))


def check_language(target_lang: str | None, languages: Sequence[str]) -> str | None:
    """``target_lang`` if the model (of ``languages``; () when it has one target language)
    translates into it, else an :class:`UnknownLanguageError` listing the model's languages.
    A multilingual model needs a language; a model of one target language takes none.

    Example:
        >>> check_language("fr", ("de", "fr"))
        'fr'
    """
    if not languages:
        if target_lang is None:
            return None
        raise UnknownLanguageError(
            f"This model translates into one language only; it takes no target language "
            f"(got {target_lang!r})."
        )
    if target_lang is None:
        raise UnknownLanguageError(
            f"This model translates into {len(languages)} languages ({', '.join(languages)}): "
            "choose one as the target language."
        )
    if target_lang not in languages:
        raise UnknownLanguageError(unknown_language_message(target_lang, languages))
    return target_lang


def unknown_language_message(target_lang: str, languages: Sequence[str]) -> str:
    """The words for a target language the model lacks (also built in-graph around the code).

    Example:
        >>> unknown_language_message("xx", ("de", "fr"))
        "Unknown target language 'xx': this model translates into de, fr."
    """
    listed = ", ".join(languages)
    return f"Unknown target language '{target_lang}': this model translates into {listed}."


def sources_as_read(
    sentences: Sequence[str], target_langs: Sequence[str | None] | None, languages: Sequence[str]
) -> list[str]:
    """The sources as a model of ``languages`` reads them, each row into its own target
    language (None: every row without one): a multilingual model's tagged (:func:`tagged`),
    each language checked first (:func:`check_language`); another model's as they are. For
    runtimes that tokenize in Python (CTranslate2, LiteRT).

    Example:
        >>> sources_as_read(["Ein Hund."], ["fr"], ("de", "fr"))
        ['<2fr> Ein Hund.']
    """
    if target_langs is None:
        target_langs = [None] * len(sentences)
    if len(target_langs) != len(sentences):
        raise UnknownLanguageError(
            f"Give one target language for each sentence: got {len(target_langs)} for "
            f"{len(sentences)}."
        )
    checked = [check_language(language, languages) for language in target_langs]
    return [
        text if language is None else tagged(text, language)
        for text, language in zip(sentences, checked, strict=True)
    ]
