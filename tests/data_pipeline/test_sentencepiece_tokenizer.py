"""SentencePiece training, in-graph tokenization, the lossless round trip and special ids."""

from __future__ import annotations

import errno
import os

import numpy as np
import pytest
import tensorflow as tf

import data_pipeline as dp
from common.errors import ConfigError
from data_pipeline import tokenizer as tokenizer_lib


def _round_trip(tok: dp.Tokenizer, sentences: list[str]) -> list[str]:
    ids = tok.tokenize(tf.constant(sentences))
    return [s.decode("utf-8") for s in tok.detokenize(ids).numpy()]


def test_special_ids():
    assert (dp.PAD_ID, dp.UNK_ID, dp.BOS_ID, dp.EOS_ID) == (0, 1, 2, 3)


def test_model_file_and_vocabulary(tokenizer):
    assert tokenizer.vocab_size == 2000
    assert tokenizer.model_type == "unigram"
    pieces = tokenizer.id_to_piece(tf.constant([0, 1, 2, 3])).numpy().tolist()
    assert pieces == [b"<pad>", b"<unk>", b"<s>", b"</s>"]


@pytest.mark.parametrize("side", [0, 1], ids=["de", "en"])
def test_lossless_round_trip_on_validation(side, tokenizer, de_en_pairs):
    sentences = [pair[side] for pair in de_en_pairs["validation"]]
    assert len(sentences) == 1014
    decoded = _round_trip(tokenizer, sentences)
    mismatches = [
        (s, d) for s, d in zip(sentences, decoded, strict=True) if d != dp.normalize_text(s)
    ]
    assert not mismatches
    assert any(s != s.lower() for s in decoded)  # Case is kept.


def test_ids_inside_vocabulary_without_specials(tokenizer, de_en_pairs):
    sentences = tf.constant([s for pair in de_en_pairs["validation"] for s in pair])
    ids = tokenizer.tokenize(sentences)
    assert isinstance(ids, tf.RaggedTensor) and ids.dtype == tf.int32
    flat = ids.flat_values.numpy()
    assert flat.min() > dp.EOS_ID and flat.max() < tokenizer.vocab_size
    assert (flat != dp.UNK_ID).all()


def test_unseen_characters_use_byte_fallback(tokenizer):
    sentences = ["Ein Schneemann ☃ und 日本語!", "tab\there", "x\u00a0y"]
    assert _round_trip(tokenizer, sentences) == sentences


def test_normalisation_is_whitespace_only(tokenizer):
    assert _round_trip(tokenizer, ["  Ein  Hund   läuft. "]) == ["Ein Hund läuft."]
    assert dp.normalize_text("  Ein  Hund   läuft. ") == "Ein Hund läuft."


def test_detokenize_strips_special_ids(tokenizer):
    ids = tokenizer.tokenize(tf.constant(["Ein Hund läuft.", "A dog."]))
    a, b = (row.numpy().tolist() for row in ids)
    bos, eos, pad = dp.BOS_ID, dp.EOS_ID, dp.PAD_ID
    dense = tf.constant(
        [[bos, *a, eos, 17, 99, pad], [bos, *b, eos] + [pad] * (len(a) + 3 - len(b))]
    )
    expected = [b"Ein Hund l\xc3\xa4uft.", b"A dog."]
    assert tokenizer.detokenize(dense).numpy().tolist() == expected
    ragged = tf.ragged.constant([[bos, *a, eos, 5], [*b, eos]])
    assert tokenizer.detokenize(ragged).numpy().tolist() == expected
    assert tokenizer.detokenize(tf.constant([*a, eos, 9, 9])).numpy() == expected[0]
    assert tokenizer.detokenize(np.array([a], np.int64)).numpy().tolist() == expected[:1]


def test_usable_in_tf_function_and_tf_data(tokenizer):
    @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
    def round_trip(strings):
        return tokenizer.detokenize(tokenizer.tokenize(strings))

    assert round_trip(tf.constant(["Zwei Hunde."])).numpy().tolist() == [b"Zwei Hunde."]
    ds = tf.data.Dataset.from_tensor_slices(["Ein Hund.", "Eine Katze."]).batch(2)
    ds = ds.map(tokenizer.tokenize, num_parallel_calls=tf.data.AUTOTUNE)
    ids = next(iter(ds))
    assert tokenizer.detokenize(ids).numpy().tolist() == [b"Ein Hund.", b"Eine Katze."]


def test_saved_model_tokenizes_without_python_model(tokenizer, tmp_path):
    module = tf.Module()
    module.tokenizer = tokenizer
    module.tokenize = tf.function(
        lambda s: tokenizer.tokenize(s).to_tensor(default_value=dp.PAD_ID),
        input_signature=[tf.TensorSpec([None], tf.string)],
    )
    module.detokenize = tf.function(
        tokenizer.detokenize, input_signature=[tf.TensorSpec([None, None], tf.int32)]
    )
    tf.saved_model.save(module, str(tmp_path / "export"))
    loaded = tf.saved_model.load(str(tmp_path / "export"))
    ids = loaded.tokenize(tf.constant(["Ein Hund läuft.", "A dog."]))
    expected = tokenizer.tokenize(tf.constant(["Ein Hund läuft.", "A dog."])).to_tensor()
    np.testing.assert_array_equal(ids.numpy(), expected.numpy())
    assert loaded.detokenize(ids).numpy().tolist() == [b"Ein Hund l\xc3\xa4uft.", b"A dog."]


def test_load_or_train_reuses_the_model(tokenizer, de_en, tmp_path, monkeypatch):
    workdir = tmp_path / "run"
    model = str(workdir / "spm.model")
    small = de_en["train"].take(3000)
    first = dp.load_or_train_tokenizer(model, small, vocab_size=500, model_type="bpe")
    assert os.listdir(workdir) == ["spm.model"]  # No temporary file left.
    assert first.model_type == "bpe" and first.vocab_size == 500

    def fail(*args, **kwargs):
        raise AssertionError("retrained")

    monkeypatch.setattr(tokenizer_lib, "train_sentencepiece", fail)
    again = dp.load_or_train_tokenizer(model, small, vocab_size=500, model_type="bpe")
    assert again.vocab_size == 500
    with pytest.raises(ConfigError, match="vocab_size=800 was asked for; delete the file"):
        dp.load_or_train_tokenizer(model, small, vocab_size=800, model_type="bpe")
    # A multilingual run's data in a work directory whose model has no tags, and the reverse.
    tags = ["<2en>", "<2de>"]
    with pytest.raises(ConfigError, match="tags of no language .* those of de, en; delete"):
        dp.load_or_train_tokenizer(model, small, 500, "bpe", user_defined_symbols=tags)
    monkeypatch.undo()
    tagged_model = str(tmp_path / "multilingual" / "spm.model")
    dp.load_or_train_tokenizer(tagged_model, small, 500, "bpe", user_defined_symbols=tags)
    with pytest.raises(ConfigError, match="tags of de, en, but .* of no language"):
        dp.load_or_train_tokenizer(tagged_model, small, vocab_size=500, model_type="bpe")
    # Fewer target languages than the vocabulary has tags for: the vocabulary serves.
    english = dp.load_or_train_tokenizer(
        tagged_model, small, 500, "bpe", user_defined_symbols=["<2en>"]
    )
    assert english.languages == ("de", "en")
    with pytest.raises(ConfigError, match="tags of de, en, but .* those of de, fr"):
        dp.load_or_train_tokenizer(
            tagged_model, small, 500, "bpe", user_defined_symbols=["<2de>", "<2fr>"]
        )


@pytest.mark.parametrize("size, pairs_used", [(1001, 501), (700, 350)])
def test_input_sentence_size_trains_on_the_first_pairs(
    de_en, tmp_path, monkeypatch, size, pairs_used
):
    """Both sides of the first size/2 pairs (rounded up)."""
    given = []

    def train(sentences, *args, **kwargs):
        given.extend(sentences)
        return tokenizer_lib_train(given, *args, **kwargs)

    tokenizer_lib_train = tokenizer_lib.train_sentencepiece
    monkeypatch.setattr(tokenizer_lib, "train_sentencepiece", train)
    pairs = de_en["train"].take(3000)
    model = str(tmp_path / "spm.model")
    dp.load_or_train_tokenizer(model, pairs, 400, "bpe", input_sentence_size=size)
    first = [(de.decode(), en.decode()) for de, en in pairs.take(pairs_used).as_numpy_iterator()]
    assert sorted(given) == sorted(sentence for pair in first for sentence in pair)
    assert os.listdir(tmp_path) == ["spm.model"]


@pytest.mark.slow  # trains a tokenizer
def test_bpe_round_trip_french_and_czech(raw_lines, tmp_path):
    train = raw_lines("train", "fr") + raw_lines("train", "cs")
    path = dp.train_sentencepiece(train, str(tmp_path / "frcs"), 3000, model_type="bpe")
    tok = dp.Tokenizer.from_file(path)
    for lang in ("fr", "cs"):
        sentences = raw_lines("validation", lang)
        decoded = _round_trip(tok, sentences)
        assert decoded == [dp.normalize_text(s) for s in sentences], lang


@pytest.mark.slow  # trains a tokenizer
def test_a_full_disk_raises_its_os_error_and_leaves_no_file(tmp_path, monkeypatch):
    def full_disk(path, mode):
        with open(path, mode) as file:  # the part of the model that fitted
            file.write(b"\0" * 10)
        raise OSError(errno.ENOSPC, "No space left on device", path)

    monkeypatch.setattr(tokenizer_lib, "open", full_disk, raising=False)
    with pytest.raises(OSError) as raised:
        dp.train_sentencepiece(["Ein Hund.", "A dog."] * 100, str(tmp_path / "spm"), 271)
    assert raised.value.errno == errno.ENOSPC
    assert os.listdir(tmp_path) == []


@pytest.mark.slow  # trains a tokenizer
def test_too_large_vocabulary_is_a_clear_error(tmp_path):
    with pytest.raises(ConfigError, match=r"vocab_size=5000.*smaller vocab_size \(tokenizer"):
        dp.train_sentencepiece(["Ein Hund.", "A dog."] * 50, str(tmp_path / "m"), 5000)
    assert os.listdir(tmp_path) == []
    with pytest.raises(ValueError, match="model_type"):
        dp.train_sentencepiece(["a"], str(tmp_path / "m"), 1000, model_type="word-piece")
    with pytest.raises(ValueError, match="too small"):
        dp.train_sentencepiece(["a"], str(tmp_path / "m"), 100)


def test_survives_seed_resets(tokenizer):
    # tf.random.set_seed clears TensorFlow's eager kernel cache, which used to delete
    # tensorflow_text's kernel-owned SentencePiece resource.
    ds = tf.data.Dataset.from_tensor_slices(["Ein Hund."]).batch(1).map(tokenizer.tokenize)
    tf.random.set_seed(1)
    again = dp.Tokenizer(tokenizer.model_proto)
    tf.random.set_seed(2)
    expected = tokenizer.tokenize(["Ein Hund."]).to_list()
    assert next(iter(ds)).to_list() == expected
    assert again.tokenize(["Ein Hund."]).to_list() == expected


def test_sampling_varies_the_segmentation_not_the_text(tokenizer, de_en_pairs):
    sentences = [de for de, _ in de_en_pairs["validation"][:200]]
    sampler = tokenizer.sampling(0.3)
    assert (tokenizer.sampling_alpha, sampler.sampling_alpha) == (0.0, 0.3)
    best = tokenizer.tokenize(tf.constant(sentences)).to_list()
    first = sampler.tokenize(tf.constant(sentences)).to_list()
    second = sampler.tokenize(tf.constant(sentences)).to_list()
    # Each call samples anew: most sentences differ from the best and from the other sample.
    # (SentencePiece's generator is unseeded; ~75 % differ, so the bounds hold in practice.)
    assert sum(a != b for a, b in zip(first, best, strict=True)) > 100
    assert sum(a != b for a, b in zip(first, second, strict=True)) > 100
    # A sampled segmentation is finer on average, and every one spells the same text.
    assert sum(map(len, first)) > sum(map(len, best))
    assert _round_trip(sampler, sentences) == [dp.normalize_text(s) for s in sentences]
    assert tokenizer.tokenize(tf.constant(sentences)).to_list() == best  # best stays put


def test_sampling_needs_a_unigram_model_and_a_valid_alpha(tokenizer, tmp_path):
    path = dp.train_sentencepiece(
        ["Ein Hund.", "A dog."] * 50, str(tmp_path / "bpe"), 280, model_type="bpe"
    )
    with pytest.raises(ValueError, match="needs a unigram SentencePiece model, not 'bpe'"):
        dp.Tokenizer.from_file(path).sampling(0.3)
    with pytest.raises(ValueError, match=r"alpha must be a number >= 0 \(0: off\), got -0.1"):
        tokenizer.sampling(-0.1)
    with pytest.raises(ValueError, match="must be > 0"):
        tokenizer.sampling(0.0)
