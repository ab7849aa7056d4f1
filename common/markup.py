"""Inline markup (HTML tags) carried from a text into its translation by word alignments, as
the browser translators do (bergamot).

The text is read as HTML (:mod:`html.parser`): the tags are set aside and the text between
them, entities decoded, is what is translated (sentence by sentence, :mod:`common.documents`).
Then each tag goes back into the translation:

* a pair (``<b>…</b>``) inside one sentence wraps the translation's words aligned to the words
  it wrapped, from the first of them to the last (with none aligned, the words at the same
  relative place);
* a tag at a sentence's edge or between sentences stays where it was in the text around the
  translations (``<p>`` before a paragraph, ``</b>`` after a whole bold sentence);
* a lone tag (``<br>``, ``<img>``, a comment) inside a sentence goes before the word aligned to
  the word after it.

Pairs nest as in the text: a pair's place is clipped to its enclosing pair's, and pairs side
by side that overlap in the translation are cut where the earlier one ends, so the output is
well-formed whenever the text is (an end tag the text leaves out is written). The translated
text is escaped (``&``, ``<``, ``>``): the output is HTML.

Imports no TensorFlow.

Example:
    >>> markup = Markup.parse("Ein <b>großer</b> Hund.")
    >>> markup.plain
    'Ein großer Hund.'
    >>> document = Document(["Ein großer Hund."], ["", ""])
    >>> place_markup(markup, document, ["A big dog."], {0: [(0, 0), (1, 1), (2, 2)]})
    'A <b>big</b> dog.'
"""

from __future__ import annotations

import dataclasses
import html
import re
from collections.abc import Mapping, Sequence
from html.parser import HTMLParser
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:  # common.documents imports this module
    from common.documents import Document

# Elements without an end tag in HTML.
VOID_ELEMENTS = frozenset(
    re.findall(r"\w+", "area base br col embed hr img input link meta source track wbr")
)
# Elements that break lines: each of their tags reads as a line break, which ends a sentence
# (and is the tag again in the output).
LINE_BREAKING = frozenset(
    re.findall(
        r"\w+",
        "address article aside blockquote br dd div dl dt figcaption figure footer h1 h2 h3 h4 "
        "h5 h6 header hr li main nav ol p pre section table td th tr ul",
    )
)
_WORD = re.compile(r"\S+")
# What ends a translated word without belonging to a tagged word: ".", "," and the like.
_FINAL_PUNCTUATION = ".,;:!?…)]}\"'»”’"
# A place in the output: (segment, offset). Segment 2g is the text before sentence g (the
# document's layout[g]; offset: a character of it), segment 2s + 1 is sentence s's
# translation (offset: a word boundary, 0 before its first word).
Place = tuple[int, int]


@dataclasses.dataclass
class Element:
    """A tag pair of the text (or a lone tag: no ``end_tag``) and the tags inside it.

    ``start`` and ``end``: where its content begins and ends in the plain text (equal for a
    lone tag); ``breaks``: its tags read as line breaks (``LINE_BREAKING``), the plain text's
    character before ``start`` and after ``end`` (before ``start`` for a lone tag);
    ``ends_in_word``: its content ends with a letter or digit (its end tag goes before the
    punctuation a translated word ends with: ``<b>Hund</b>.`` gives ``<b>dog</b>.``);
    ``opening`` and ``closing``: the places its tags get in the translation."""

    name: str
    start_tag: str
    start: int
    end_tag: str = ""
    end: int = -1
    breaks: bool = False
    ends_in_word: bool = False
    children: list[Element] = dataclasses.field(default_factory=list)
    opening: Place = (0, 0)
    closing: Place = (0, 0)


class _Reader(HTMLParser):
    """Reads HTML into the plain text and the tree of its tags (:class:`Element`)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.plain: list[str] = []
        self.length = 0
        self.root = Element("", "", 0)
        self.open = [self.root]

    def handle_data(self, data: str) -> None:
        self.plain.append(data)
        self.length += len(data)

    def handle_starttag(self, tag: str, attrs) -> None:
        self.start(tag, self.get_starttag_text() or f"<{tag}>", lone=tag in VOID_ELEMENTS)

    def handle_startendtag(self, tag: str, attrs) -> None:
        self.start(tag, self.get_starttag_text() or f"<{tag}/>", lone=True)

    def start(self, tag: str, text: str, lone: bool) -> None:
        breaks = tag in LINE_BREAKING
        if breaks:
            self.handle_data("\n")
        element = Element(tag, text, self.length, breaks=breaks)
        self.open[-1].children.append(element)
        if lone:
            element.end = self.length
        else:
            self.open.append(element)

    def handle_endtag(self, tag: str) -> None:
        names = [element.name for element in self.open[1:]]
        if tag not in names:  # a stray end tag: kept as a lone tag
            self.lone(f"</{tag}>")
            return
        while self.open[-1].name != tag:  # elements the text leaves unclosed end here
            self.end_element(self.open.pop())
        self.end_element(self.open.pop())

    def handle_comment(self, data: str) -> None:
        self.lone(f"<!--{data}-->")

    def handle_decl(self, decl: str) -> None:
        self.lone(f"<!{decl}>")

    def lone(self, text: str) -> None:
        self.open[-1].children.append(Element("", text, self.length, end=self.length))

    def end_element(self, element: Element) -> None:
        element.end_tag, element.end = f"</{element.name}>", self.length
        element.ends_in_word = bool(self.plain) and self.plain[-1][-1:].isalnum()
        if element.breaks:
            self.handle_data("\n")


@dataclasses.dataclass(frozen=True)
class Markup:
    """A text read as HTML: ``plain``, its text without tags (entities decoded), and ``root``,
    an element holding every tag of the text."""

    plain: str
    root: Element

    @classmethod
    def parse(cls, text: str) -> Markup:
        """``text`` read as HTML (tags the text leaves open are closed at its end)."""
        reader = _Reader()
        reader.feed(text)
        reader.close()
        while len(reader.open) > 1:
            reader.end_element(reader.open.pop())
        reader.root.end = reader.length
        return cls("".join(reader.plain), reader.root)

    @property
    def has_tags(self) -> bool:
        return bool(self.root.children)

    def sentences_with_tags(self, document: Document) -> list[int]:
        """The sentences of ``document`` (split from :attr:`plain`) with a tag strictly inside
        them: those whose word alignment places tags."""
        spans = _sentence_spans(document)
        inside = set()
        for element in _elements(self.root):
            for offset in (element.start, element.end):
                inside |= {s for s, (start, end) in enumerate(spans) if start < offset < end}
        return sorted(inside)


def _elements(element: Element) -> list[Element]:
    """Every element under ``element``, in the text's order."""
    found = []
    for child in element.children:
        found += [child, *_elements(child)]
    return found


def _sentence_spans(document: Document) -> list[tuple[int, int]]:
    """Each sentence's ``(start, end)`` in the plain text the document was split from."""
    spans, offset = [], 0
    for gap, sentence in zip(document.layout, document.sentences, strict=False):
        offset += len(gap)
        spans.append((offset, offset + len(sentence)))
        offset += len(sentence)
    return spans


class _Placer:
    """Where tags of the plain text go in the translation (:data:`Place`)."""

    def __init__(
        self,
        document: Document,
        translations: Sequence[str],
        links: Mapping[int, Sequence[tuple[int, int]]],
    ) -> None:
        self.spans = _sentence_spans(document)
        self.layout = document.layout
        self.source_words = [
            [(start + match.start(), start + match.end()) for match in _WORD.finditer(sentence)]
            for sentence, (start, _) in zip(document.sentences, self.spans, strict=True)
        ]
        self.target_counts = [len(translation.split()) for translation in translations]
        self.links = links

    def sentence_of(self, offset: int) -> int | None:
        """The sentence ``offset`` lies strictly inside, or None (an edge or a gap)."""
        for index, (start, end) in enumerate(self.spans):
            if start < offset < end:
                return index
        return None

    def holding(self, element: Element) -> int | None:
        """The sentence a pair lies within, when it is not the whole sentence (a pair around
        whole sentences stays in the layout); None otherwise."""
        for index, (start, end) in enumerate(self.spans):
            inside = start <= element.start and element.end <= end
            if inside and element.start < end and (element.start, element.end) != (start, end):
                return index
        return None

    def gap_place(self, offset: int) -> Place:
        """The place of ``offset`` in the layout: a gap's character (a sentence's start is
        the end of the gap before it, its end the start of the gap after)."""
        gap_start = 0
        for index, (start, end) in enumerate(self.spans):
            if offset <= start:
                return 2 * index, offset - gap_start
            gap_start = end
        return 2 * len(self.spans), offset - gap_start

    def targets(self, sentence: int, words: range) -> list[int]:
        """The target words aligned to the source ``words`` of ``sentence``."""
        return sorted({j for i, j in self.links.get(sentence, ()) if i in words})

    def relative(self, sentence: int, word: int) -> int:
        """The target word boundary at the relative place of the source's ``word`` boundary."""
        sources = max(len(self.source_words[sentence]), 1)
        return round(word * self.target_counts[sentence] / sources)

    def point(self, offset: int, opening: bool) -> Place:
        """The place of one end of an element: in the layout, or before (``opening``) or
        after the target words aligned to the source word at ``offset``."""
        sentence = self.sentence_of(offset)
        if sentence is None:
            return self.gap_place(offset)
        words = self.source_words[sentence]
        if opening:  # the word starting at or containing offset (or the next one)
            word = next(i for i, (_, end) in enumerate(words) if end > offset)
            targets = self.targets(sentence, range(word, word + 1))
            return 2 * sentence + 1, targets[0] if targets else self.relative(sentence, word)
        word = max(i for i, (start, _) in enumerate(words) if start < offset)
        targets = self.targets(sentence, range(word, word + 1))
        return 2 * sentence + 1, targets[-1] + 1 if targets else self.relative(sentence, word + 1)

    def interval(self, element: Element) -> tuple[Place, Place]:
        """Where ``element``'s tags go, before its clipping to its parent and siblings."""
        if element.breaks:  # at the line breaks its tags read as
            return self.gap_place(element.start - 1), self.gap_place(element.end)
        sentence = self.holding(element) if element.end_tag else None
        if sentence is None:
            opening = self.point(element.start, opening=True)
            return opening, self.point(element.end, opening=False) if element.end_tag else opening
        covered = [
            i
            for i, (start, end) in enumerate(self.source_words[sentence])
            if start < element.end and end > element.start
        ]
        if not covered:  # an empty element inside a sentence
            opening = self.point(element.start, opening=True)
            return opening, opening
        targets = self.targets(sentence, range(covered[0], covered[-1] + 1))
        segment = 2 * sentence + 1
        if targets:
            return (segment, targets[0]), (segment, targets[-1] + 1)
        first, last = self.relative(sentence, covered[0]), self.relative(sentence, covered[-1] + 1)
        return (segment, first), (segment, max(first, last))

    def place(self, element: Element, low: Place, high: Place) -> None:
        """Places ``element``'s children within ``[low, high]``: each clipped to it, in the
        order of where they open, and cut where the previous one closes."""
        for child in element.children:
            child.opening, child.closing = self.interval(child)
        element.children.sort(key=lambda child: child.opening)  # stable: the text's order
        previous = low
        for child in element.children:
            child.opening = min(max(child.opening, previous), high)
            child.closing = min(max(child.closing, child.opening), high)
            previous = child.closing
            self.place(child, child.opening, child.closing)


class _Event(NamedTuple):
    """A tag in the output: its place, its text, whether it ends an element, and whether it
    stands for the layout's character at its place (a line break it reads as)."""

    place: Place
    tag: str
    closes: bool
    replaces: bool
    before_punctuation: bool = False


def _events(element: Element) -> list[_Event]:
    """``element``'s tags and its children's, in output order."""
    events = []
    for child in element.children:
        events.append(_Event(child.opening, child.start_tag, False, child.breaks))
        events += _events(child)
        if child.end_tag:
            closing = _Event(child.closing, child.end_tag, True, child.breaks, child.ends_in_word)
            events.append(closing)
    return events


def place_markup(
    markup: Markup,
    document: Document,
    translations: Sequence[str],
    links: Mapping[int, Sequence[tuple[int, int]]],
) -> str:
    """The translated document, as HTML, with ``markup``'s tags in their places.

    Args:
        markup: the text as read (:meth:`Markup.parse`).
        document: :attr:`Markup.plain` split into sentences (``common.documents.Document``).
        translations: each sentence's translation.
        links: for the sentences with tags inside (:meth:`Markup.sentences_with_tags`), the
            word alignment of sentence and translation: ``(source word, target word)`` links,
            words split at whitespace (``common.alignment.Alignment.links``).
    """
    placer = _Placer(document, translations, links)
    last = (2 * len(document.sentences), len(document.layout[-1]))
    placer.place(markup.root, (0, 0), last)
    events = _events(markup.root)
    pieces, position = [], 0
    for segment in range(2 * len(document.sentences) + 1):
        here = []
        while position < len(events) and events[position].place[0] == segment:
            here.append(events[position])
            position += 1
        if segment % 2 == 0:
            pieces.append(_gap_with_tags(document.layout[segment // 2], here))
        else:
            pieces.append(_sentence_with_tags(translations[segment // 2].split(), here))
    return "".join(pieces)


def _gap_with_tags(text: str, events: list[_Event]) -> str:
    """Text between sentences, escaped, with its tags at their characters (a tag read as a
    line break in place of it)."""
    pieces, offset = [], 0
    for event in events:
        at = event.place[1]
        pieces += [html.escape(text[offset:at], quote=False), event.tag]
        offset = at + event.replaces
    return "".join(pieces) + html.escape(text[offset:], quote=False)


def _sentence_with_tags(words: list[str], events: list[_Event]) -> str:
    """A translation's words, escaped, with its tags at their word boundaries: end tags
    against the word before (before its final punctuation for content that ended in a word),
    the others against the word after."""
    at_boundary: dict[int, list[_Event]] = {}
    for event in events:
        at_boundary.setdefault(event.place[1], []).append(event)
    pieces = []
    for boundary in range(len(words) + 1):
        tags = at_boundary.get(boundary, [])
        closing = 0
        while closing < len(tags) and tags[closing].closes:
            closing += 1
        if boundary > 0:  # the word before, and the end tags against it
            word = words[boundary - 1]
            stem = word.rstrip(_FINAL_PUNCTUATION)
            if not stem or not any(tag.before_punctuation for tag in tags[:closing]):
                stem = word
            pieces.append(html.escape(stem, quote=False))
            pieces += [tag.tag for tag in tags[:closing]]
            pieces.append(html.escape(word[len(stem) :], quote=False))
        else:
            pieces += [tag.tag for tag in tags[:closing]]
        if 0 < boundary < len(words):
            pieces.append(" ")
        pieces += [tag.tag for tag in tags[closing:]]
    return "".join(pieces)
