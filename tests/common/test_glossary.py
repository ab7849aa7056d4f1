"""Glossaries: read with one-line errors, applied where a source phrase stands as whole words."""

import pytest

from common.glossary import Glossary, GlossaryError
from common.translation import MAX_TERMS, RequestError, Terms, TranslationRequest


def test_a_glossary_file_skips_comments_and_blank_lines(tmp_path):
    path = tmp_path / "glossary.tsv"
    path.write_text("# source\ttarget\n\nHund\thound\n grüne Wiese \tmeadow\n", encoding="utf-8")
    assert Glossary.read(str(path)).entries == (("Hund", "hound"), ("grüne Wiese", "meadow"))
    path.write_text("Hund\thound\n", encoding="utf-8-sig")  # a byte-order mark first
    assert Glossary.read(str(path)).entries == (("Hund", "hound"),)


@pytest.mark.parametrize(
    "text, message",
    [
        ("Hund\thound\nKatze cat\n", "line 2: expected 'source phrase<TAB>target term'"),
        ("Hund\thound\textra\n", "line 1: expected"),
        ("Hund\t \n", "line 1: expected"),
        ("# only a comment\n", "holds no 'source phrase<TAB>target term' line"),
    ],
)
def test_a_bad_glossary_file_is_an_error_naming_its_line(tmp_path, text, message):
    path = tmp_path / "glossary.tsv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(GlossaryError, match=message):
        Glossary.read(str(path))
    with pytest.raises(GlossaryError, match="No such glossary file"):
        Glossary.read(str(tmp_path / "none.tsv"))


def test_a_source_phrase_matches_as_whole_words_in_any_case():
    glossary = Glossary((("Hund", "hound"), ("grüne Wiese", "meadow"), ("HUND", "hound")))
    assert glossary.targets_for("Der hund liegt auf der Grüne Wiese.") == ("hound", "meadow")
    assert glossary.targets_for("Hunde und ein Schäferhund.") == ()
    assert glossary.targets_for("(Hund)") == ("hound",)


def test_a_request_joins_a_sentences_terms_and_the_glossarys():
    request = TranslationRequest(
        terms=[Terms(["a dog"], ["cat"]), None, None],
        glossary=Glossary((("Wiese", "meadow"), ("Hund", "a dog"))),
    )
    assert request.sentence_terms(["Ein Hund.", "Eine Wiese.", "Ja."]) == [
        Terms(["a dog"], ["cat"]),
        Terms(["meadow"]),
        Terms(),
    ]
    assert TranslationRequest(terms=[None, Terms()]).sentence_terms(["a", "b"]) is None
    assert TranslationRequest().sentence_terms(["a"]) is None


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: Terms(["dog", " "]), "must not hold an empty phrase"),
        (lambda: Terms("dog"), "must be a list of strings"),
        (lambda: Terms([f"w{i}" for i in range(MAX_TERMS + 1)]), f"at most {MAX_TERMS}"),
        (lambda: Terms.from_fields({"terms": ["a"], "avoided": ["b"]}), '"avoid"'),
        (lambda: Terms.from_fields(["a"]), "a JSON object"),
        (lambda: Terms.from_fields({"avoid": "b"}), '"avoid" must be a list of strings'),
        (lambda: TranslationRequest(glossary={"Hund": "dog"}), "glossary must be a Glossary"),
    ],
)
def test_bad_terms_are_request_errors(make, message):
    with pytest.raises(RequestError, match=message):
        make()
