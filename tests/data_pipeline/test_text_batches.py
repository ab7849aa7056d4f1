"""Batches of labelled texts: BOS first, long texts cut (never dropped), the token budget, every
text once a pass, and a saved position that restores the same batches."""

from __future__ import annotations

import collections

import numpy as np
import pytest
import tensorflow as tf

import data_pipeline as dp
from data_pipeline.labelled_text import read_labelled_file
from data_pipeline.text_batches import make_text_batches, text_tokens

pytestmark = pytest.mark.slow  # trains a (small) SentencePiece model


@pytest.fixture(scope="module")
def toy(toy_labelled_file, tmp_path_factory):
    """The toy texts, their class ids (spam 1) and a tokenizer trained on them."""
    examples = read_labelled_file(toy_labelled_file)
    texts = [example.text for example in examples]
    # Texts of very different lengths: some repeated up to 20 times.
    texts = [" ".join([text] * (1 + i % 20)) for i, text in enumerate(texts)]
    labels = [int(example.label == "spam") for example in examples]
    path = dp.train_sentencepiece(texts, str(tmp_path_factory.mktemp("spm") / "toy"), 300)
    return texts, labels, dp.Tokenizer.from_file(path)


def _rows(batch) -> list[tuple[tuple[int, ...], int]]:
    tokens, labels = batch["tokens"].numpy(), batch["label"].numpy()
    return [
        (tuple(row[row != dp.PAD_ID]), int(label))
        for row, label in zip(tokens, labels, strict=True)
    ]


def test_each_text_is_bos_and_its_first_pieces_once_a_pass_within_the_budget(toy):
    texts, labels, tokenizer = toy
    batches = make_text_batches(
        texts, labels, tokenizer, max_length=40, tokens_per_batch=400, shuffle=False, seed=0
    )
    rows = []
    for batch in batches:
        assert batch["tokens"].dtype == tf.int32 and batch["label"].dtype == tf.int32
        assert np.prod(batch["tokens"].shape) <= 400
        rows += _rows(batch)
    pieces = tokenizer.tokenize(tf.constant(texts)).to_list()
    expected = [((dp.BOS_ID, *ids[:39]), label) for ids, label in zip(pieces, labels, strict=True)]
    assert collections.Counter(rows) == collections.Counter(expected)
    assert max(len(ids) for ids, _ in rows) == 40 and max(map(len, pieces)) > 100  # cut, kept
    assert text_tokens(tokenizer, tf.constant(texts[:2]), 40).to_list() == [
        list(ids) for ids, _ in expected[:2]
    ]


def test_a_saved_position_restores_the_same_shuffled_batches(toy, tmp_path):
    texts, labels, tokenizer = toy

    def batches():
        return iter(
            make_text_batches(
                texts,
                labels,
                tokenizer,
                max_length=40,
                tokens_per_batch=400,
                shuffle=True,
                seed=3,
                repeat=True,
            )
        )

    iterator = batches()
    for _ in range(7):
        next(iterator)
    path = tf.train.Checkpoint(iterator=iterator).write(str(tmp_path / "position"))
    expected = [_rows(next(iterator)) for _ in range(30)]  # past the end of the first pass
    restored = batches()
    tf.train.Checkpoint(iterator=restored).read(path).assert_consumed()
    assert [_rows(next(restored)) for _ in range(30)] == expected
    fresh = batches()
    assert [_rows(next(fresh)) for _ in range(3)] != expected[:3]


def test_bad_arguments_are_one_line_errors(toy):
    texts, labels, tokenizer = toy
    with pytest.raises(ValueError, match="as many labels as texts"):
        make_text_batches(
            texts,
            labels[:-1],
            tokenizer,
            max_length=40,
            tokens_per_batch=400,
            shuffle=False,
            seed=0,
        )
    with pytest.raises(ValueError, match="2 <= max_length <= tokens_per_batch"):
        make_text_batches(
            texts, labels, tokenizer, max_length=40, tokens_per_batch=20, shuffle=False, seed=0
        )
