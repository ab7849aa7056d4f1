"""Token-budget batches: budget, exactly-once epochs, teacher forcing, filtering counts."""

from __future__ import annotations

import collections
import logging
import threading

import numpy as np
import pytest
import tensorflow as tf

import data_pipeline as dp

PAD, BOS, EOS = dp.PAD_ID, dp.BOS_ID, dp.EOS_ID


def _rows(batch):
    """Yields (source, target_in, target_out) id tuples of one batch, padding removed."""
    for src, tin, tout in zip(
        batch["source"].numpy(),
        batch["target_in"].numpy(),
        batch["target_out"].numpy(),
        strict=True,
    ):
        yield tuple(src[src != PAD]), tuple(tin[tin != PAD]), tuple(tout[tout != PAD])


def _expected_examples(tokenizer, pairs, max_length):
    """Independently tokenized (source ids, target ids) of the examples that fit max_length."""
    src = tokenizer.tokenize(tf.constant([s for s, _ in pairs])).to_list()
    tgt = tokenizer.tokenize(tf.constant([t for _, t in pairs])).to_list()
    kept = [
        (tuple(s), tuple(t))
        for s, t in zip(src, tgt, strict=True)
        if len(s) + 1 <= max_length and len(t) + 1 <= max_length
    ]
    return kept, len(pairs) - len(kept)


def test_budget_and_every_example_exactly_once(tokenizer, de_en, de_en_pairs, caplog):
    max_length, budget = 24, 512
    caplog.set_level(logging.INFO, logger="absl")
    batches, stats = dp.make_batches_with_stats(
        de_en["train"],
        tokenizer,
        max_length=max_length,
        tokens_per_batch=budget,
        shuffle=True,
        seed=7,
    )
    expected, dropped = _expected_examples(tokenizer, de_en_pairs["train"], max_length)
    assert dropped > 0
    assert (stats.total, stats.kept, stats.dropped) == (29_000, len(expected), dropped)
    assert f"filtered {dropped} of 29000 examples longer than max_length=24" in caplog.text

    for epoch in range(2):
        seen = collections.Counter()
        sizes = []
        for batch in batches:
            b, s = batch["source"].shape
            t = batch["target_in"].shape[1]
            assert batch["target_out"].shape == (b, t)
            assert all(v.dtype == tf.int32 for v in batch.values())
            assert b * max(s, t) <= budget
            assert max(s, t) <= max_length
            sizes.append(b)
            for src, _, tout in _rows(batch):
                seen[src[:-1], tout[:-1]] += 1
        assert seen == collections.Counter(expected), f"epoch {epoch}"
        assert sum(sizes) == stats.kept
        assert max(sizes) > 20  # Short sentences share big batches.


def test_teacher_forcing_pairs(tokenizer, de_en):
    batches = dp.make_batches(
        de_en["validation"],
        tokenizer,
        max_length=64,
        tokens_per_batch=1024,
        shuffle=False,
        seed=0,
    )
    n = 0
    for batch in batches:
        for (src, tin, tout), raw_tin in zip(_rows(batch), batch["target_in"].numpy(), strict=True):
            n += 1
            assert src[-1] == EOS and EOS not in src[:-1] and BOS not in src
            assert tin[0] == BOS and BOS not in tin[1:] and EOS not in tin
            assert tout[-1] == EOS and EOS not in tout[:-1] and BOS not in tout
            assert tin[1:] == tout[:-1]
            assert len(tin) == len(tout)
            assert (raw_tin[len(tin) :] == PAD).all()  # Padding only at the end.
    assert n == 1014


def test_target_tokens_decode_back(tokenizer, de_en, de_en_pairs):
    batch = next(
        iter(
            dp.make_batches(
                de_en["validation"],
                tokenizer,
                max_length=64,
                tokens_per_batch=1024,
                shuffle=True,
                seed=3,
            )
        )
    )
    english = {dp.normalize_text(t) for _, t in de_en_pairs["validation"]}
    german = {dp.normalize_text(s) for s, _ in de_en_pairs["validation"]}
    for text in tokenizer.detokenize(batch["target_out"]).numpy():
        assert text.decode() in english
    for text in tokenizer.detokenize(batch["target_in"]).numpy():
        assert text.decode() in english
    for text in tokenizer.detokenize(batch["source"]).numpy():
        assert text.decode() in german


def _first_batches(pairs, tokenizer, seed, n=5, **kwargs):
    ds = dp.make_batches(
        pairs, tokenizer, max_length=64, tokens_per_batch=1024, shuffle=True, seed=seed, **kwargs
    )
    return [b["target_out"].numpy().tolist() for b in ds.take(n)]


def test_shuffling_is_seeded(tokenizer, de_en):
    pairs = de_en["validation"]
    assert _first_batches(pairs, tokenizer, 1) == _first_batches(pairs, tokenizer, 1)
    assert _first_batches(pairs, tokenizer, 1) != _first_batches(pairs, tokenizer, 2)


@pytest.mark.parametrize("shuffle_buffer", [1014, 100])  # whole, pair by pair; 100 in blocks
def test_every_epoch_holds_every_pair_once_in_a_new_order(tokenizer, de_en, shuffle_buffer):
    ds = dp.make_batches(
        de_en["validation"],
        tokenizer,
        max_length=64,
        tokens_per_batch=1024,
        shuffle=True,
        seed=0,
        shuffle_buffer=shuffle_buffer,
    )
    epochs = [[row for batch in ds for row in batch["source"].numpy().tolist()] for _ in "ab"]
    assert sorted(epochs[0]) == sorted(epochs[1]) and len(epochs[0]) == 1014
    assert epochs[0] != epochs[1]


def test_repeat_keeps_going(tokenizer, de_en):
    ds = dp.make_batches(
        de_en["validation"],
        tokenizer,
        max_length=64,
        tokens_per_batch=1024,
        shuffle=True,
        seed=0,
        repeat=True,
    )
    examples = 0
    for batch in ds.take(200):
        examples += batch["source"].shape[0]
    assert examples > 2 * 1014


class _CountingTokenizer:
    """Wraps a tokenizer and counts the strings it tokenizes (at run time, not trace time)."""

    def __init__(self, tokenizer):
        self.tokenizer = tokenizer
        self.sampling_alpha = tokenizer.sampling_alpha
        self.count = 0
        self._lock = threading.Lock()

    def _count(self, strings):
        with self._lock:
            self.count += len(strings)
        return strings

    def tokenize(self, strings):
        counted = tf.numpy_function(self._count, [strings], tf.string, stateful=True)
        counted.set_shape(strings.shape)
        return self.tokenizer.tokenize(counted)


@pytest.mark.parametrize(
    "shuffle, cache, alpha, passes",
    [(False, True, 0.0, 2), (False, False, 0.0, 3), (True, True, 0.0, 3), (False, True, 0.3, 3)],
)
def test_only_unshuffled_batches_are_cached(tokenizer, de_en, shuffle, cache, alpha, passes):
    """``passes``: tokenizations of the whole split, the length count's included, in 2 epochs.
    Training batches (shuffled) and a sampling tokenizer tokenize every epoch anew."""
    counting = _CountingTokenizer(tokenizer.sampling(alpha) if alpha else tokenizer)
    ds = dp.make_batches(
        de_en["validation"],
        counting,
        max_length=64,
        tokens_per_batch=1024,
        shuffle=shuffle,
        seed=0,
        cache=cache,
    )
    assert counting.count == 2 * 1014  # The length count: both sides once.
    for _ in range(2):
        for _ in ds:
            pass
    assert counting.count == passes * 2 * 1014


def test_bucket_boundaries():
    assert dp.default_bucket_boundaries(20) == list(range(8, 22))
    assert dp.default_bucket_boundaries(4) == [5]
    boundaries = dp.default_bucket_boundaries(256)
    assert boundaries[-1] == 257 and boundaries == sorted(set(boundaries))
    sizes = dp.bucket_batch_sizes(boundaries, 4096)
    assert all(size * (b - 1) <= 4096 for size, b in zip(sizes, boundaries, strict=False))
    assert len(sizes) == len(boundaries) + 1


def test_custom_boundaries_keep_the_budget(tokenizer, de_en, de_en_pairs):
    ds = dp.make_batches(
        de_en["validation"],
        tokenizer,
        max_length=40,
        tokens_per_batch=300,
        shuffle=False,
        seed=0,
        bucket_boundaries=[10, 20, 30],
    )
    total = 0
    for batch in ds:
        b = batch["source"].shape[0]
        assert b * max(batch["source"].shape[1], batch["target_in"].shape[1]) <= 300
        total += b
    expected, dropped = _expected_examples(tokenizer, de_en_pairs["validation"], 40)
    assert dropped > 0  # some examples are over max_length: the count below is not just 1,014
    assert total == len(expected)


def test_bad_arguments(tokenizer, de_en):
    pairs = de_en["validation"]
    kwargs = dict(shuffle=False, seed=0)
    with pytest.raises(ValueError, match="smaller than max_length"):
        dp.make_batches(pairs, tokenizer, max_length=128, tokens_per_batch=100, **kwargs)
    with pytest.raises(ValueError, match="increasing"):
        dp.make_batches(
            pairs,
            tokenizer,
            max_length=64,
            tokens_per_batch=1024,
            bucket_boundaries=[10, 10, 20],
            **kwargs,
        )
    with pytest.raises(ValueError, match="must not exceed"):
        dp.make_batches(
            pairs,
            tokenizer,
            max_length=64,
            tokens_per_batch=1024,
            bucket_boundaries=[10, 100],
            **kwargs,
        )
    with pytest.raises(ValueError, match="No examples left"):
        dp.make_batches(pairs, tokenizer, max_length=3, tokens_per_batch=1024, **kwargs)
    with pytest.raises(ValueError, match="tf.string scalars"):
        dp.make_batches(pairs.batch(2), tokenizer, max_length=64, tokens_per_batch=1024, **kwargs)


def test_empty_strings(tokenizer):
    pairs = tf.data.Dataset.from_tensor_slices((["", "Ein Hund."], ["A dog.", ""]))
    batch = next(
        iter(
            dp.make_batches(
                pairs, tokenizer, max_length=16, tokens_per_batch=64, shuffle=False, seed=0
            )
        )
    )
    rows = sorted(_rows(batch), key=len)
    assert len(rows) == 2
    assert any(src == (EOS,) for src, _, _ in rows)
    assert any(tin == (BOS,) and tout == (EOS,) for _, tin, tout in rows)
    assert np.all(batch["source"].numpy() >= 0)


def test_iterator_checkpoint_restores_position(tokenizer, de_en, tmp_path):
    ds = dp.make_batches(
        de_en["validation"],
        tokenizer,
        max_length=64,
        tokens_per_batch=1024,
        shuffle=True,
        seed=0,
        repeat=True,
    )
    iterator = iter(ds)
    for _ in range(3):
        next(iterator)
    path = tf.train.Checkpoint(iterator=iterator).write(str(tmp_path / "it"))
    expected = [next(iterator)["target_out"].numpy() for _ in range(4)]
    restored = iter(ds)
    tf.train.Checkpoint(iterator=restored).read(path).assert_consumed()
    for want in expected:
        np.testing.assert_array_equal(next(restored)["target_out"].numpy(), want)


def test_a_sampling_tokenizer_gives_new_segmentations_every_epoch(tokenizer, de_en):
    sampler = tokenizer.sampling(0.3)
    ds = dp.make_batches(
        de_en["validation"], sampler, max_length=256, tokens_per_batch=4096, shuffle=False, seed=0
    )  # long enough for every segmentation

    def epoch():
        ids = sorted(tout for batch in ds for _, _, tout in _rows(batch))
        texts = sorted(tokenizer.detokenize(tf.ragged.constant(ids)).numpy().tolist())
        return ids, texts

    (first_ids, first_texts), (second_ids, second_texts) = epoch(), epoch()
    assert len(first_ids) == len(second_ids) == 1014
    assert first_texts == second_texts  # the same sentences, each once per epoch,
    assert first_ids != second_ids  # segmented anew.


def test_a_sampling_pipeline_restores_into_a_new_build(tokenizer, de_en, tmp_path):
    # Resuming builds the pipeline anew, with new sampled segmentations. Its structure (the
    # shuffle buffer above all) must not depend on them, or the saved position does not fit.
    # max_length=16 cuts through the middle of the length distribution, so how many examples a
    # sampled pass keeps varies from build to build (222 to 241 of 1,014 measured).
    sampler = tokenizer.sampling(0.5)
    budget, max_length = 32, 16

    def build():
        return dp.make_batches(
            de_en["validation"],
            sampler,
            max_length=max_length,
            tokens_per_batch=budget,
            shuffle=True,
            seed=0,
            repeat=True,
        )

    def ids(batches):
        return [{key: value.numpy().tolist() for key, value in batch.items()} for batch in batches]

    iterator = iter(build())
    for _ in range(5):
        next(iterator)
    path = tf.train.Checkpoint(iterator=iterator).write(str(tmp_path / "it"))
    # A pass's 1,014 pairs are tokenized at once (up to 1,024 a call) before its first batch,
    # so the whole first pass is in the saved position. 5 batches of at most 4 examples are out
    # and the buckets hold at most 16 without giving a batch: the next 10 batches come from the
    # rest of the first pass, the same in the restored pipeline, unlike a new pipeline's first.
    expected = ids(next(iterator) for _ in range(10))
    restored = iter(build())
    tf.train.Checkpoint(iterator=restored).read(path).assert_consumed()
    assert ids(next(restored) for _ in range(10)) == expected
    fresh = iter(build())
    assert ids(next(fresh) for _ in range(10)) != expected
    examples = 0
    while examples < 3 * 1014:  # Past a dozen epoch ends of the restored shuffle buffer.
        batch = next(restored)
        longest = max(batch["source"].shape[1], batch["target_in"].shape[1])
        assert batch["source"].shape[0] * longest <= budget and longest <= max_length
        examples += batch["source"].shape[0]
