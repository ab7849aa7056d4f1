"""Pair augmentation: both directions; concatenation keeps pairs aligned, new partners every epoch,
resumable."""

from __future__ import annotations

import collections

import numpy as np
import pytest
import tensorflow as tf

import data_pipeline as dp
from data_pipeline.augment import both_directions, concatenate_pairs

PAD = dp.PAD_ID


def _numbered_pairs(n):
    return tf.data.Dataset.from_tensor_slices(
        ([f"s{i}" for i in range(n)], [f"t{i}" for i in range(n)])
    )


def _epoch(dataset):
    return [(s.decode(), t.decode()) for s, t in dataset.as_numpy_iterator()]


def _split(epoch):
    """(originals, concatenations as (i, j) index pairs) of one epoch of numbered pairs."""
    originals, joined = [], []
    for source, target in epoch:
        sources, targets = source.split(" "), target.split(" ")
        assert [s[1:] for s in sources] == [t[1:] for t in targets]  # both sides: same pairs
        if len(sources) == 1:
            originals.append(int(sources[0][1:]))
        else:
            assert len(sources) == 2
            joined.append((int(sources[0][1:]), int(sources[1][1:])))
    return originals, joined


def test_ratio_one_joins_every_pair_with_a_partner():
    originals, joined = _split(_epoch(concatenate_pairs(_numbered_pairs(50), 1.0, seed=0)))
    assert originals == list(range(50))
    assert [i for i, _ in joined] == list(range(50))  # each pair once as the first part,
    assert len({j for _, j in joined}) > 25  # with partners from across the data set.


def test_the_same_pairs_get_new_partners_every_epoch():
    augmented = concatenate_pairs(_numbered_pairs(300), 0.3, seed=0)
    (originals_1, joined_1), (originals_2, joined_2) = _split(_epoch(augmented)), _split(
        _epoch(augmented)
    )
    assert sorted(originals_1) == sorted(originals_2) == list(range(300))
    assert 60 < len(joined_1) < 120  # about 0.3 of 300,
    assert [i for i, _ in joined_1] == [i for i, _ in joined_2]  # the same ones every epoch,
    assert [j for _, j in joined_1] != [j for _, j in joined_2]  # with new partners.
    other_seed = _split(_epoch(concatenate_pairs(_numbered_pairs(300), 0.3, seed=1)))[1]
    assert other_seed != joined_1


def test_ratio_zero_is_the_data_unchanged():
    pairs = _numbered_pairs(3)
    assert concatenate_pairs(pairs, 0, seed=0) is pairs


@pytest.mark.parametrize("ratio", [-0.1, 1.5, True, "0.5", None])
def test_a_bad_ratio_is_an_error_naming_it(ratio):
    with pytest.raises(ValueError, match=r"concat_ratio must be a number in \[0, 1\]"):
        concatenate_pairs(_numbered_pairs(3), ratio, seed=0)


def test_both_directions_adds_every_pair_reversed():
    pairs = _numbered_pairs(3)
    assert list(both_directions(pairs).as_numpy_iterator()) == [
        *pairs.as_numpy_iterator(),
        *((target, source) for source, target in pairs.as_numpy_iterator()),
    ]


def _target_texts(batches, tokenizer):
    ids = [list(row[row != PAD]) for batch in batches for row in batch["target_out"].numpy()]
    return collections.Counter(
        text.decode() for text in tokenizer.detokenize(tf.ragged.constant(ids)).numpy()
    )


def test_batches_hold_every_pair_and_new_concatenations_every_epoch(tokenizer, de_en, de_en_pairs):
    batches = dp.make_batches(de_en["validation"], tokenizer, max_length=128,
                              tokens_per_batch=4096, shuffle=True, seed=0, concat_ratio=0.5)
    english = collections.Counter(dp.normalize_text(t) for _, t in de_en_pairs["validation"])
    first, second = _target_texts(batches, tokenizer), _target_texts(batches, tokenizer)
    for epoch in (first, second):
        assert epoch & english == english  # every validation sentence alone,
        joined = epoch - english
        assert 400 < sum(joined.values()) < 620  # and about half of them again, joined.
    assert first - english != second - english  # Not cached: new partners.


def test_a_concatenating_pipeline_restores_its_position_into_a_new_build(
    tokenizer, de_en, tmp_path
):
    def build():
        return dp.make_batches(de_en["validation"], tokenizer, max_length=64,
                               tokens_per_batch=512, shuffle=True, seed=0, repeat=True,
                               concat_ratio=0.5)

    iterator = iter(build())
    for _ in range(5):
        next(iterator)
    path = tf.train.Checkpoint(iterator=iterator).write(str(tmp_path / "it"))
    expected = [next(iterator)["target_out"].numpy() for _ in range(4)]
    restored = iter(build())
    tf.train.Checkpoint(iterator=restored).read(path).assert_consumed()
    for want in expected:
        np.testing.assert_array_equal(next(restored)["target_out"].numpy(), want)
