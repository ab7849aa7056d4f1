import pytest

from common.language_tags import UnknownLanguageError
from common.translation import TranslationRequest, translate_in_batches, truncation_warnings


def test_a_request_checks_its_language_against_the_models():
    assert TranslationRequest().language(()) is None
    assert TranslationRequest(target_lang="fr").language(("de", "fr")) == "fr"
    with pytest.raises(UnknownLanguageError, match="'xx'.*de, fr"):
        TranslationRequest(target_lang="xx").language(("de", "fr"))
    with pytest.raises(UnknownLanguageError, match="one language only"):
        TranslationRequest(target_lang="fr").language(())


def test_batches_hold_sentences_of_similar_length_and_translations_keep_the_input_order():
    sentences = ["a" * length for length in (5, 1, 9, 3, 7, 2, 8)]
    batches = []

    def translate_rows(rows: list[int]) -> list[str]:
        batches.append([len(sentences[row]) for row in rows])
        return [f"{row}:{sentences[row]}" for row in rows]

    translations = translate_in_batches(translate_rows, sentences, batch_size=3, progress=False)
    assert translations == [f"{row}:{sentence}" for row, sentence in enumerate(sentences)]
    assert batches == [[1, 2, 3], [5, 7, 8], [9]]
    assert translate_in_batches(translate_rows, [], progress=False) == []


class WordCounter:
    """A model that reads ``max_source_length`` tokens (EOS included), a word a token, and a
    tag before each sentence of a request with a target language."""

    max_source_length = 6

    def source_lengths(self, sentences, request=TranslationRequest()):
        return [len(s.split()) + (request.target_lang is not None) for s in sentences]


def test_truncation_warnings_name_the_sentences_over_the_limit_as_the_model_reads_them():
    sentences = ["a b c d e", "a b c d e f", "a b c d"]
    assert truncation_warnings(WordCounter(), sentences) == [
        "warning: sentence 2 has 6 tokens; only the first 5 are translated."
    ]
    assert truncation_warnings(WordCounter(), sentences, first_number=2001) == [
        "warning: sentence 2002 has 6 tokens; only the first 5 are translated."
    ]
    assert truncation_warnings(WordCounter(), sentences, TranslationRequest("de")) == [
        "warning: sentence 1 has 6 tokens; only the first 5 are translated.",
        "warning: sentence 2 has 7 tokens; only the first 5 are translated.",
    ]
