"""Documents translated sentence by sentence, their layout kept.

Our models are trained on single sentences (captions): a paragraph given as one input would be
read as one over-long sentence and truncated at the model's length. :func:`split_document` cuts a
document into the sentences to translate and the text between them (spaces, line breaks, blank
lines between paragraphs), kept as it is; :meth:`Document.joined` puts the translations back in
their places.

Sentences are found by ``sentencex`` (Wikimedia's segmenter: rules and abbreviation lists for
~300 languages, maintained, pure Python, no model to download; it keeps every character, so the
text between sentences is exact). A line break always ends a sentence (a heading, a list item,
an address line): lines are split first. A sentence longer than the model reads is cut at a safe
point, never truncated silently (:func:`split_long`).

Imports no TensorFlow: every runtime, the server included, can use it.

Example:
    >>> document = split_document("Ein Hund rennt. Er bellt.\\n\\nEnde", "de")
    >>> document.sentences
    ['Ein Hund rennt.', 'Er bellt.', 'Ende']
    >>> document.joined(["A dog runs.", "It barks.", "End"])
    'A dog runs. It barks.\\n\\nEnd'
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence

from common.markup import Markup, place_markup
from common.translation import TranslationRequest, Translator

# Where a sentence too long for the model is best cut: at the spaces after a clause's end or
# before a dash, else at any spaces; those nearest the middle.
_CLAUSE_END, _DASHES = ",;:)]", "–—-"
_SPACE = re.compile(r"\s+")
_PARTS = re.compile(r"^(\s*)(.*?)(\s*)$", re.S)


@dataclasses.dataclass(frozen=True)
class Document:
    """A document as its sentences and what surrounds them.

    ``layout`` holds the text between the sentences, one more than there are sentences:
    ``layout[0] + sentences[0] + layout[1] + ... + sentences[-1] + layout[-1]`` is the document.
    """

    sentences: list[str]
    layout: list[str]

    def joined(self, translations: Sequence[str]) -> str:
        """The document with each sentence replaced by its translation, in its place."""
        if len(translations) != len(self.sentences):
            raise ValueError(
                f"Give one translation for each sentence: got {len(translations)} for "
                f"{len(self.sentences)}."
            )
        pieces = [self.layout[0]]
        for translation, after in zip(translations, self.layout[1:], strict=True):
            pieces += [translation, after]
        return "".join(pieces)


def split_document(
    text: str,
    language: str = "en",
    too_long: Callable[[list[str]], list[bool]] | None = None,
) -> Document:
    """``text`` as its sentences (segmented by ``sentencex`` with the rules of ``language``,
    the source's ISO 639 code; a line break always ends one) and the text around them.

    ``too_long``: which of a list of sentences the model would truncate; those are cut at safe
    points (:func:`split_long`) until none is (or no space is left to cut at).
    """
    from sentencex import segment

    sentences: list[str] = []
    layout = [""]
    for line in text.splitlines(keepends=True):
        for segment_text in segment(language, line):
            before, sentence, after = _PARTS.match(segment_text).groups()
            layout[-1] += before
            if sentence:
                sentences.append(sentence)
                layout.append(after)
            else:
                layout[-1] += after
    if too_long is not None:
        return split_long(Document(sentences, layout), too_long)
    return Document(sentences, layout)


def split_long(document: Document, too_long: Callable[[list[str]], list[bool]]) -> Document:
    """``document`` with each sentence that ``too_long`` flags cut in two at the safe point
    nearest its middle (after a comma, semicolon, colon or closing bracket, around a dash; else
    at a space), again until none is flagged or a flagged one has no space left to cut at."""
    sentences, layout = list(document.sentences), list(document.layout)
    while sentences:
        flags = too_long(sentences)
        cuts = [(i, _cut_point(sentence)) for i, sentence in enumerate(sentences) if flags[i]]
        cuts = [(i, cut) for i, cut in cuts if cut is not None]
        if not cuts:
            break
        for index, (start, end) in reversed(cuts):  # later ones first: indices stay valid
            sentence = sentences[index]
            head, gap, tail = sentence[:start], sentence[start:end], sentence[end:]
            sentences[index : index + 1] = [head, tail]
            layout.insert(index + 1, gap)
    return Document(sentences, layout)


def _cut_point(sentence: str) -> tuple[int, int] | None:
    """``(start, end)`` of the spaces to cut ``sentence`` at, nearest its middle: spaces after
    a clause's end (``,;:)]``) or before a dash if there are any, else any; None without one."""
    spaces = [
        match.span()
        for match in _SPACE.finditer(sentence)
        if match.start() > 0 and match.end() < len(sentence)
    ]
    clause_ends = [
        (start, end)
        for start, end in spaces
        if sentence[start - 1] in _CLAUSE_END or sentence[end] in _DASHES
    ]
    middle = len(sentence) / 2
    return min(clause_ends or spaces, key=lambda span: abs(span[0] - middle), default=None)


def translate_document(
    translator: Translator,
    text: str,
    request: TranslationRequest = TranslationRequest(),
    language: str = "en",
    batch_size: int = 64,
    progress: bool = False,
    markup: bool = False,
) -> str:
    """``text`` translated sentence by sentence by ``translator`` (all its sentences in
    batches), each translation in its sentence's place; sentences the model would truncate are
    cut first (:func:`split_long`). ``language``: the source's, for sentence splitting.
    ``markup``: ``text`` is HTML; its tags are placed in the translation by word alignments
    (:mod:`common.markup`), which is HTML too.

    Example:
        >>> translate_document(translator, "Ein Hund rennt. Er bellt.\\n", language="de")
        'A dog is running. He barks.\\n'
    """
    limit = translator.max_source_length - 1

    def too_long(sentences: list[str]) -> list[bool]:
        return [length > limit for length in translator.source_lengths(sentences, request)]

    read = Markup.parse(text) if markup else None
    document = split_document(text if read is None else read.plain, language, too_long)
    translations = translator.translate(document.sentences, request, batch_size, progress)
    if read is None:
        return document.joined(translations)
    tagged = read.sentences_with_tags(document)
    alignments = translator.align(
        [document.sentences[row] for row in tagged],
        [translations[row] for row in tagged],
        request,
        batch_size,
        progress,
    )
    links = {row: alignment.links() for row, alignment in zip(tagged, alignments, strict=True)}
    return place_markup(read, document, translations, links)
