import pytest

from common.language_tags import (
    UnknownLanguageError,
    check_language,
    defused,
    languages_in_pieces,
    sources_as_read,
    tag,
    tagged,
)

LANGUAGES = ("cs", "de", "en", "fr")


def test_a_tag_is_one_piece_and_a_space_separates_it_from_the_text():
    assert tag("fr") == "<2fr>"
    assert tagged("Ein Hund.", "fr") == "<2fr> Ein Hund."


def test_a_tag_written_in_the_text_is_made_plain_characters():
    assert defused("Say <2de> or <2fra>, not <2d> or <3de>.") == (
        "Say < 2de> or < 2fra>, not <2d> or <3de>."
    )
    assert tagged("Write <2de>.", "fr") == "<2fr> Write < 2de>."
    assert tagged("<2de>", "fr") == "<2fr> < 2de>"


@pytest.mark.parametrize("code", ["", "F", "fra-x", "<2fr>", "français"])
def test_a_code_that_is_not_a_language_code_is_refused(code):
    with pytest.raises(UnknownLanguageError, match="not a language code"):
        tag(code)


def test_the_languages_of_a_vocabulary_are_its_tags_sorted():
    pieces = ["<pad>", "<2fr>", "▁Hund", "<2de>", "2en", "<2en", "<0x41>"]
    assert languages_in_pieces(pieces) == ("de", "fr")
    assert languages_in_pieces(["<pad>", "▁Hund"]) == ()


def test_a_multilingual_model_needs_one_of_its_languages_and_the_error_lists_them():
    assert check_language("de", LANGUAGES) == "de"
    with pytest.raises(UnknownLanguageError, match="'es'.*cs, de, en, fr"):
        check_language("es", LANGUAGES)
    with pytest.raises(UnknownLanguageError, match=r"4 languages \(cs, de, en, fr\)"):
        check_language(None, LANGUAGES)


def test_a_model_of_one_target_language_takes_none():
    assert check_language(None, ()) is None
    with pytest.raises(UnknownLanguageError, match="one language only"):
        check_language("fr", ())


def test_sources_are_tagged_each_into_its_row_language_and_checked():
    languages = ("de", "fr")
    rows = sources_as_read(["Ein <2de> Hund.", "Ja"], ["fr", "de"], languages)
    assert rows == ["<2fr> Ein < 2de> Hund.", "<2de> Ja"]
    assert sources_as_read(["Ja <2de>"], None, ()) == ["Ja <2de>"]  # no tags: as it is
    with pytest.raises(UnknownLanguageError, match="Give one target language for each sentence"):
        sources_as_read(["Ja", "Nein"], ["fr"], languages)
    with pytest.raises(UnknownLanguageError, match="Unknown target language 'cs'"):
        sources_as_read(["Ja"], ["cs"], languages)
