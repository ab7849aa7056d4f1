"""Markup carried into translations: read as HTML, each tag placed by the word alignment, the
output well-formed whatever the alignment."""

import html
import random
import re

import pytest

from common.documents import Document, split_document
from common.markup import Markup, place_markup

TAG = re.compile(r"<[^>]*>")


def _one_sentence(text: str, translation: str, links) -> str:
    markup = Markup.parse(text)
    document = Document([markup.plain], ["", ""])
    return place_markup(markup, document, [translation], {0: links})


def _well_formed_tags(output: str) -> list[str]:
    """The tags of ``output`` in order; fails unless every end tag closes the last open one."""
    tags, open_names = TAG.findall(output), []
    for tag in tags:
        name = re.match(r"</?(\w+)", tag)
        if tag.startswith("</"):
            assert open_names and open_names.pop() == name.group(1), (output, tag)
        elif name and name.group(1) not in ("br", "img") and not tag.endswith("/>"):
            open_names.append(name.group(1))
    assert not open_names, output
    return tags


def test_reading_keeps_the_text_decodes_entities_and_closes_what_the_text_leaves_open():
    markup = Markup.parse('<a href="x">Fish &amp; <b>chips<img src="y"/></b> <i>hot</a> <u>end')
    assert markup.plain == "Fish & chips hot end"
    (link, underline) = markup.root.children
    assert (link.start_tag, link.end_tag) == ('<a href="x">', "</a>")
    bold, italic = link.children
    assert (bold.start, bold.end) == (7, 12) and bold.children[0].start_tag == '<img src="y"/>'
    assert (italic.end_tag, italic.end) == ("</i>", 16)  # closed where <a> closes
    assert (underline.end_tag, underline.end) == ("</u>", 20)  # closed at the end
    assert Markup.parse("a </b> b").root.children[0].start_tag == "</b>"  # a stray end tag
    # Block elements' tags and <br> read as line breaks: they end sentences.
    assert Markup.parse("<p>Hund</p><ul><li>Katze<br>Maus</li></ul>").plain == (
        "\nHund\n\n\nKatze\nMaus\n\n"
    )


def test_a_pair_wraps_the_words_aligned_to_its_words_even_when_they_move():
    assert _one_sentence("Ein <b>großer</b> Hund.", "A big dog.", [(0, 0), (1, 1), (2, 2)]) == (
        "A <b>big</b> dog."
    )
    # Reordered: "gestern ging er" -> "he went yesterday".
    links = [(0, 2), (1, 1), (2, 0)]
    assert _one_sentence("<b>Gestern</b> ging <i>er</i>.", "He went yesterday.", links) == (
        "<i>He</i> went <b>yesterday</b>."
    )
    # Words split into two aligned apart: the pair spans from the first to the last.
    links = [(0, 0), (1, 1), (1, 3), (2, 2)]
    assert _one_sentence("Er <b>rief</b> sie an.", "He called her up.", links) == (
        "He <b>called her up</b>."
    )


def test_overlapping_and_unaligned_pairs_stay_well_formed():
    # Both pairs aligned to the same word: the later is cut where the earlier ends.
    output = _one_sentence("<b>ein</b> <i>Hund</i>", "dog", [(0, 0), (1, 0)])
    assert output == "<b>dog</b><i></i>"
    # A pair inside another moves with its words, inside it.
    output = _one_sentence("<b>Ein <i>Hund</i></b> rennt.", "A dog runs.", [(0, 0), (1, 2)])
    assert output == "<b>A dog <i>runs</i></b>."  # both end in a word: before the "."
    # Nothing aligned: the words at the same relative place.
    assert _one_sentence("Ein <b>Hund</b> rennt.", "A dog runs.", []) == "A <b>dog</b> runs."


def test_tags_between_sentences_stay_in_the_layout_and_text_is_escaped():
    text = "<p>Ein Hund. <b>Er bellt.</b></p>\n<p>Ja &lt; nein<br>Ende</p>"
    markup = Markup.parse(text)
    document = split_document(markup.plain, "de")
    assert document.sentences == ["Ein Hund.", "Er bellt.", "Ja < nein", "Ende"]
    translations = ["A dog.", "He barks.", "Yes < no", "End"]
    assert markup.sentences_with_tags(document) == []  # every tag at an edge
    assert place_markup(markup, document, translations, {}) == (
        "<p>A dog. <b>He barks.</b></p>\n<p>Yes &lt; no<br>End</p>"
    )


@pytest.mark.parametrize("seed", range(30))
def test_any_alignment_gives_well_formed_output_with_every_tag_and_the_translation(seed):
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(rng.randint(3, 9))]
    tagged, open_names = [], []
    for word in words:  # random nested pairs, lone tags and stray end tags around words
        for _ in range(rng.choice([0, 0, 1, 2])):
            choice = rng.random()
            if choice < 0.4:
                name = rng.choice("bius")
                tagged.append(f"<{name}>")
                open_names.append(name)
            elif choice < 0.7 and open_names:
                tagged.append(f"</{open_names.pop()}>")
            else:
                tagged.append("<br>")
        tagged.append(word + " ")
    text = "".join(tagged).strip()
    targets = [f"t{j}" for j in range(rng.randint(1, 9))]
    links = [(i, j) for i in range(len(words)) for j in range(len(targets)) if rng.random() < 0.2]
    markup = Markup.parse(text)
    document = split_document(markup.plain, "en")
    translations = [" ".join(targets)] + [""] * (len(document.sentences) - 1)
    output = place_markup(markup, document, translations, {0: links})
    tags = _well_formed_tags(output)
    expected = sorted(TAG.findall(text) + [f"</{name}>" for name in open_names])
    assert sorted(tags) == expected
    assert html.unescape(TAG.sub("", output)).split() == " ".join(translations).split()
