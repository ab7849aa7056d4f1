import pytest

from common.documents import Document, split_document, split_long, translate_document
from common.translation import TranslationRequest

TEXTS = [
    "Ein Hund rennt.",
    "  Ein Hund rennt.  Zwei Männer spielen, z.B. Fußball!\n\nDr. Müller kommt um 3 Uhr.\n",
    "Titel\nErste Zeile ohne Punkt\r\nZweite Zeile.\t Dritte?\n\n\n  Eingerückt.  \n",
    "",
    "\n\n   \n",
]


@pytest.mark.parametrize("text", TEXTS)
def test_a_document_is_its_sentences_and_the_text_around_them(text):
    document = split_document(text, "de")
    assert len(document.layout) == len(document.sentences) + 1
    assert document.joined(document.sentences) == text  # every character in its place
    for sentence in document.sentences:
        assert sentence == sentence.strip() and sentence


def test_sentences_end_at_sentence_ends_and_line_breaks_not_at_abbreviations():
    document = split_document(TEXTS[1] + TEXTS[2], "de")
    assert document.sentences == [
        "Ein Hund rennt.",
        "Zwei Männer spielen, z.B. Fußball!",
        "Dr. Müller kommt um 3 Uhr.",
        "Titel",
        "Erste Zeile ohne Punkt",
        "Zweite Zeile.",
        "Dritte?",
        "Eingerückt.",
    ]
    assert document.layout[3:5] == ["\n", "\n"]  # after "Dr. ...", after the title


def test_a_long_sentence_is_cut_at_the_clause_end_nearest_its_middle():
    sentence = "Ein Mann, der einen Hut trägt, geht über die Straße; ein Hund folgt ihm langsam."
    document = split_long(Document([sentence], ["", "\n"]), lambda s: [len(x) > 60 for x in s])
    assert document.sentences == [  # the clause end at 30 of 81 characters, not at 52
        "Ein Mann, der einen Hut trägt,",
        "geht über die Straße; ein Hund folgt ihm langsam.",
    ]
    assert document.joined(document.sentences) == sentence + "\n"


def test_cuts_go_on_until_every_part_fits_and_stop_where_no_space_is_left():
    words = " ".join(f"Wort{i}" for i in range(40))
    document = split_long(
        Document([words, "x" * 80], ["", " ", ""]), lambda s: [len(x) > 30 for x in s]
    )
    assert all(len(part) <= 30 for part in document.sentences[:-1])
    assert document.sentences[-1] == "x" * 80  # no space: left whole (the runtime warns)
    assert document.joined(document.sentences) == words + " " + "x" * 80


def test_joined_needs_one_translation_a_sentence():
    with pytest.raises(ValueError, match="one translation for each sentence: got 1 for 2"):
        split_document("Ja. Nein.", "de").joined(["Yes."])


class UpperCaseTranslator:
    """A Translator stand-in: upper-cases; a sentence's length is its word count."""

    max_source_length = 8

    def __init__(self):
        self.batches = []

    def source_lengths(self, sentences, request=TranslationRequest()):
        return [len(sentence.split()) for sentence in sentences]

    def translate(self, sentences, request=TranslationRequest(), batch_size=64, progress=True):
        self.batches.append(list(sentences))
        return [sentence.upper() for sentence in sentences]


def test_a_document_is_translated_in_one_call_its_layout_kept_and_long_sentences_cut():
    translator = UpperCaseTranslator()
    text = "Ein Hund rennt.\n\n  Ein sehr langer Satz, mit zu vielen Wörtern für das Modell.\n"
    translated = translate_document(translator, text, language="de")
    assert (
        translated
        == "EIN HUND RENNT.\n\n  EIN SEHR LANGER SATZ, MIT ZU VIELEN WÖRTERN FÜR DAS MODELL.\n"
    )
    assert translator.batches == [
        ["Ein Hund rennt.", "Ein sehr langer Satz,", "mit zu vielen Wörtern für das Modell."]
    ]
