"""Word alignments from attention: pieces to words, Pharaoh links, EOS and tags left out."""

import pytest

from common.alignment import Alignment, word_indices


def test_words_start_at_each_marked_piece_and_a_tag_is_no_word():
    assert word_indices(["▁Ein", "▁Hun", "d", ".", "▁Ja"]) == [0, 1, 1, 1, 2]
    assert word_indices(["<2fr>", "▁Un", "▁chien"]) == [None, 0, 1]
    assert word_indices(["▁", "<2fr>", "▁Un", "▁", "2"]) == [None, None, 0, 1, 1]
    assert word_indices(["Hund", "e"]) == [0, 0]  # the first piece starts a word, marked or not


def test_links_lift_each_piece_to_its_word_and_leave_out_eos_and_padding():
    alignment = Alignment(
        ["<2en>", "▁Ein", "▁Hun", "d", "</s>", ""],
        ["▁A", "▁do", "g", "</s>", ""],
        [
            [0.9, 0.05, 0.0, 0.0, 0.05, 0.0],  # "▁A": the tag most, which is no word: "Ein"
            [0.0, 0.1, 0.2, 0.6, 0.1, 0.0],  # "▁do" -> "d" (word 1)
            [0.0, 0.7, 0.1, 0.1, 0.1, 0.0],  # "g" -> "▁Ein" (word 0)
            [0.0, 0.0, 0.0, 0.0, 1.0, 0.0],  # EOS: left out
            [0.0] * 6,
        ],
    )
    assert alignment.source_pieces == ("<2en>", "▁Ein", "▁Hun", "d")
    assert alignment.target_pieces == ("▁A", "▁do", "g")
    assert alignment.attention[1] == pytest.approx((0.0, 0.1, 0.2, 0.6))
    assert alignment.links() == [(0, 0), (0, 1), (1, 1)]
    assert alignment.pharaoh() == "0-0 0-1 1-1"
    assert alignment.fields()["target_pieces"] == ["▁A", "▁do", "g"]


def test_an_empty_translation_has_no_links():
    assert Alignment(["▁Ja", "</s>"], ["</s>"], [[0.5, 0.5]]).pharaoh() == ""
    assert Alignment(["</s>"], ["▁Yes", "</s>"], [[1.0], [1.0]]).links() == []
