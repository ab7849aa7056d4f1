"""A training split prepared once into shuffled shards, then streamed."""

from __future__ import annotations

import collections
import errno
import os

import pytest

import data_pipeline as dp
from common.storage import StorageError
from data_pipeline import prepared

PAIRS = [(f"Satz {i} ü", f"sentence {i}") for i in range(3000)]


@pytest.fixture
def corpus(tmp_path):
    (tmp_path / "train.de").write_text("".join(s + "\n" for s, _ in PAIRS), encoding="utf-8")
    (tmp_path / "train.en").write_text("".join(t + "\n" for _, t in PAIRS), encoding="utf-8")
    return tmp_path


def de_en(corpus) -> list[prepared.FilePair]:
    return [prepared.FilePair(str(corpus / "train.de"), str(corpus / "train.en"))]


def read(dataset) -> list[tuple[str, str]]:
    return list(zip(*dp.pair_texts(dataset), strict=True))


def test_shards_hold_every_pair_once_in_a_seeded_order_every_pass(corpus, tmp_path, monkeypatch):
    monkeypatch.setattr(prepared, "SHARD_BYTES", 8_000)  # 3000 pairs of ~25 bytes: 10 shards
    split = prepared.prepare(de_en(corpus), str(tmp_path / "root"))
    assert split.pairs == len(PAIRS) and len(split.shards) == 10
    both = read(split.dataset(seed=0).repeat(2))
    passes = both[: len(PAIRS)], both[len(PAIRS) :]
    for order in passes:
        assert collections.Counter(order) == collections.Counter(PAIRS)
    # Every pass the same order (a saved data position restores it in any process; the
    # batches' shuffle runs on across passes), another seed another one.
    assert passes[0] != PAIRS and passes[0] == passes[1]
    assert read(split.dataset(seed=1).take(100)) != passes[0][:100]


def test_a_prepared_split_is_reused_until_a_file_changes(corpus, tmp_path, monkeypatch):
    root = str(tmp_path / "root")
    split = prepared.prepare(de_en(corpus), root)
    monkeypatch.setattr(prepared, "_prepare", lambda *args: pytest.fail("prepared again"))
    assert prepared.prepare(de_en(corpus), root) == split
    (corpus / "train.en").write_text("".join(t + "!\n" for _, t in PAIRS), encoding="utf-8")
    monkeypatch.undo()
    changed = prepared.prepare(de_en(corpus), root)
    assert changed.directory != split.directory and changed.pairs == len(PAIRS)


def test_directions_are_mixed_with_sources_tagged_and_written_tags_defused(tmp_path):
    (tmp_path / "a.de").write_text("Sag <2en>.\nEin Hund.\n", encoding="utf-8")
    (tmp_path / "a.en").write_text("Say <2de>.\nA dog.\n", encoding="utf-8")
    directions = [
        prepared.FilePair(str(tmp_path / "a.de"), str(tmp_path / "a.en"), "en"),
        prepared.FilePair(str(tmp_path / "a.en"), str(tmp_path / "a.de"), "de"),
    ]
    split = prepared.prepare(directions, str(tmp_path / "root"))
    assert sorted(read(split.dataset(seed=0))) == [
        ("<2de> A dog.", "Ein Hund."),
        ("<2de> Say < 2de>.", "Sag < 2en>."),
        ("<2en> Ein Hund.", "A dog."),
        ("<2en> Sag < 2en>.", "Say < 2de>."),
    ]


def test_a_bad_corpus_is_named_and_leaves_nothing_behind(corpus, tmp_path):
    (corpus / "train.en").write_text("one line\n", encoding="utf-8")
    root = tmp_path / "root"
    with pytest.raises(dp.DataError, match=r"train\.de has 3000 lines but .*train\.en has 1"):
        prepared.prepare(de_en(corpus), str(root))
    assert os.listdir(root) == []


def test_load_training_split_streams_a_text_corpus_with_its_count(corpus, tmp_path):
    pairs, count = dp.load_training_split(
        dp.spec.parse(f"text:{corpus}:de-en", data_dir=str(tmp_path / "d")), "train"
    )
    assert count == len(PAIRS)
    assert collections.Counter(read(pairs)) == collections.Counter(PAIRS)
    assert os.listdir(tmp_path / "d") == [dp.datasets.PREPARED_TEXT]


def test_a_full_disk_is_one_line_naming_the_directory_and_leaves_nothing(
    corpus, tmp_path, monkeypatch
):
    def full(*args):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(prepared, "_write_shard", full)
    root = tmp_path / "root"
    with pytest.raises(StorageError) as raised:
        prepared.prepare(de_en(corpus), str(root))
    message = str(raised.value)
    assert message.startswith(f"No space left on the device while writing {root}/train.de-")
    assert os.listdir(root) == []
