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


def test_truncation_warnings_name_the_sentences_over_the_limit():
    assert truncation_warnings([5, 6, 4], max_source_length=6) == [
        "warning: sentence 2 has 6 tokens; only the first 5 are translated."
    ]
    assert truncation_warnings([5, 6, 4], max_source_length=6, first_number=2001) == [
        "warning: sentence 2002 has 6 tokens; only the first 5 are translated."
    ]
