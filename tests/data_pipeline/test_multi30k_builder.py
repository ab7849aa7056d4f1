"""The Multi30k TFDS builder on the shared raw files, and its errors."""

from __future__ import annotations

import collections
import gzip
import hashlib
import os
import re
from pathlib import Path

import pytest
import tensorflow_datasets as tfds

import data_pipeline as dp
from data_pipeline import multi30k, raw_text

EXPECTED_SIZES = {
    "train": 29_000,
    "validation": 1_014,
    "test2016": 1_000,
    "test2017": 1_000,
    "mscoco2017": 461,
}


def _fake_raw_dir(tmp_path: Path, multi30k_dir: str, changes=None) -> Path:
    """A raw-file directory: links to the real files, with `changes` {name: bytes} written."""
    directory = tmp_path / "raw"
    directory.mkdir()
    for name in multi30k.SHA256:
        if changes and name in changes:
            (directory / name).write_bytes(changes[name])
        else:
            (directory / name).symlink_to(Path(multi30k_dir, name))
    return directory


def _gz_lines(multi30k_dir: str, name: str) -> list[bytes]:
    return gzip.decompress(Path(multi30k_dir, name).read_bytes()).split(b"\n")


def test_registered_configs_and_supervised_order():
    assert "multi30k" in tfds.list_builders()
    names = {c.name for c in dp.Multi30k.BUILDER_CONFIGS}
    assert {"de-en", "en-de", "fr-en", "en-fr", "cs-en", "en-cs"} <= names
    assert dp.Multi30k.VERSION == "1.0.0"
    assert tfds.builder("multi30k/en-de").info.supervised_keys == ("en", "de")
    assert tfds.builder("multi30k/de-en").info.supervised_keys == ("de", "en")


def test_split_sizes(de_en, de_en_pairs):
    assert {s: len(p) for s, p in de_en_pairs.items()} == EXPECTED_SIZES
    assert {s: int(ds.cardinality()) for s, ds in de_en.items()} == EXPECTED_SIZES


@pytest.mark.parametrize("split", list(EXPECTED_SIZES))
def test_every_pair_is_an_aligned_raw_line_pair(split, de_en_pairs, raw_lines):
    raw_pairs = list(zip(raw_lines(split, "de"), raw_lines(split, "en"), strict=True))
    assert collections.Counter(de_en_pairs[split]) == collections.Counter(raw_pairs)
    if split == "train":  # TFDS shuffled the examples; the pairs stayed aligned.
        assert de_en_pairs[split] != raw_pairs


def test_plain_tfds_load_gives_source_first(de_en, tfds_dir, raw_lines):
    ds = tfds.load("multi30k/de-en", split="test2016", as_supervised=True, data_dir=tfds_dir)
    pairs = {(s.decode(), t.decode()) for s, t in ds.as_numpy_iterator()}
    assert pairs == set(zip(raw_lines("test2016", "de"), raw_lines("test2016", "en"), strict=True))


def test_czech_has_three_splits(multi30k_dir, tfds_dir, monkeypatch, raw_lines):
    monkeypatch.setenv("MULTI30K_DIR", multi30k_dir)
    splits = dp.load_translation_splits(
        dp.spec.parse("multi30k/cs-en", data_dir=tfds_dir), ["train", "validation", "test2016"]
    )
    assert {s: int(ds.cardinality()) for s, ds in splits.items()} == {
        "train": 29_000,
        "validation": 1_014,
        "test2016": 1_000,
    }
    builder = tfds.builder("multi30k/cs-en", data_dir=tfds_dir)
    assert set(builder.info.splits.keys()) == {"train", "validation", "test2016"}
    cs, en = next(splits["validation"].as_numpy_iterator())
    assert cs.decode() in raw_lines("validation", "cs")
    assert en.decode() in raw_lines("validation", "en")
    for split in ("test2017", "mscoco2017"):
        with pytest.raises(ValueError, match=r"available: train, validation, test2016"):
            dp.load_translation_splits(dp.spec.parse("multi30k/cs-en", data_dir=tfds_dir), [split])


def test_second_load_does_not_read_raw_files(de_en_pairs, tfds_dir, tmp_path, monkeypatch):
    def fail(*args, **kwargs):
        raise AssertionError("raw files read again")

    monkeypatch.setenv("MULTI30K_DIR", str(tmp_path))  # Empty: no raw files here.
    monkeypatch.setattr(multi30k, "_read_raw_file", fail)
    monkeypatch.setattr(raw_text, "read_bytes", fail)
    monkeypatch.setattr(tfds.download.DownloadManager, "download", fail)
    again = dp.load_translation_splits(
        dp.spec.parse("multi30k/de-en", data_dir=tfds_dir), list(EXPECTED_SIZES)
    )
    counts = {
        split: sum(len(batch[0]) for batch in ds.batch(8192).as_numpy_iterator())
        for split, ds in again.items()
    }
    assert counts == EXPECTED_SIZES


@pytest.mark.slow  # prepares a data set
def test_rebuild_reads_raw_files_again(multi30k_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("MULTI30K_DIR", multi30k_dir)
    reads = []
    original = multi30k._read_raw_file
    monkeypatch.setattr(
        multi30k, "_read_raw_file", lambda path, name: reads.append(name) or original(path, name)
    )
    data_dir = str(tmp_path / "tfds")
    dp.load_translation_splits(dp.spec.parse("multi30k/en-cs", data_dir=data_dir), ["validation"])
    assert len(reads) == 6  # 3 splits x 2 sides.
    dp.load_translation_splits(dp.spec.parse("multi30k/en-cs", data_dir=data_dir), ["validation"])
    assert len(reads) == 6
    ds = dp.load_translation_splits(
        dp.spec.parse("multi30k/en-cs", data_dir=data_dir), ["validation"], rebuild=True
    )["validation"]
    assert len(reads) == 12
    assert int(ds.cardinality()) == 1_014


@pytest.mark.slow  # prepares a data set
def test_missing_files_error(multi30k_dir, tmp_path, monkeypatch):
    for name in ("train.de.gz", "train.en.gz", "val.de.gz"):
        (tmp_path / name).symlink_to(Path(multi30k_dir, name))
    monkeypatch.setenv("MULTI30K_DIR", str(tmp_path))
    with pytest.raises(dp.DataError) as info:
        dp.load_translation_splits(
            dp.spec.parse("multi30k/de-en", data_dir=str(tmp_path / "tfds")), ["train"]
        )
    message = str(info.value)
    for name in ("val.en.gz", "test_2016_flickr.de.gz", "test_2017_mscoco.en.gz"):
        assert name in message
    assert "train.de.gz" not in message
    assert str(tmp_path) in message and "MULTI30K_DIR" in message
    assert "raw.githubusercontent.com/multi30k/dataset" in message


@pytest.mark.slow  # prepares a data set
def test_offline_without_files_error(tmp_path, monkeypatch):
    def offline(self, urls):
        raise ConnectionError("network is unreachable")

    monkeypatch.delenv("MULTI30K_DIR", raising=False)
    monkeypatch.setattr(multi30k, "_probe", lambda url: offline(None, url))
    monkeypatch.setattr(tfds.download.DownloadManager, "download", offline)
    with pytest.raises(dp.DataError) as info:
        dp.load_translation_splits(
            dp.spec.parse("multi30k/fr-en", data_dir=str(tmp_path)), ["train"]
        )
    message = str(info.value)
    assert "train.fr.gz" in message and "test_2017_mscoco.en.gz" in message
    assert multi30k.URL_PATTERN.format(file="<FILE>") in message
    assert "network is unreachable" in message
    assert "MULTI30K_DIR" in message and "online" in message


def _serve_downloads(monkeypatch, directory: Path) -> dict[str, str]:
    """Unsets $MULTI30K_DIR and makes downloads "succeed" with the files of `directory`; returns
    the {name: URL} requested."""
    requested = {}

    def fake_download(self, urls):
        requested.update(urls)
        return {name: directory / name for name in urls}

    monkeypatch.delenv("MULTI30K_DIR", raising=False)
    monkeypatch.setattr(multi30k, "_probe", lambda url: None)  # "Online".
    monkeypatch.setattr(tfds.download.DownloadManager, "download", fake_download)
    return requested


@pytest.mark.slow  # prepares a data set
def test_downloaded_files_are_verified(multi30k_dir, tmp_path, monkeypatch):
    corrupt = gzip.compress(b"Ein Hund.\n" * 1014)
    raw = _fake_raw_dir(tmp_path, multi30k_dir, {"val.de.gz": corrupt})
    requested = _serve_downloads(monkeypatch, raw)
    with pytest.raises(dp.DataError, match=r"checksum mismatch for .*val\.de\.gz"):
        dp.load_translation_splits(
            dp.spec.parse("multi30k/de-en", data_dir=str(tmp_path / "a")), ["train"]
        )
    assert requested["val.de.gz"] == multi30k.URL_PATTERN.format(file="val.de.gz")
    assert multi30k.COMMIT in requested["val.de.gz"]

    # With intact "downloads" the data set is prepared from them.
    monkeypatch.setattr(
        tfds.download.DownloadManager,
        "download",
        lambda self, urls: {name: Path(multi30k_dir, name) for name in urls},
    )
    ds = dp.load_translation_splits(
        dp.spec.parse("multi30k/de-en", data_dir=str(tmp_path / "b")), ["test2016"]
    )
    assert int(ds["test2016"].cardinality()) == 1_000


@pytest.mark.slow  # prepares a data set
def test_checksum_mismatch_error(multi30k_dir, tmp_path, monkeypatch):
    lines = _gz_lines(multi30k_dir, "val.en.gz")
    lines[10] = b"A dog runs on the beach."
    changed = gzip.compress(b"\n".join(lines))
    raw = _fake_raw_dir(tmp_path, multi30k_dir, {"val.en.gz": changed})
    monkeypatch.setenv("MULTI30K_DIR", str(raw))
    with pytest.raises(dp.DataError) as info:
        dp.load_translation_splits(
            dp.spec.parse("multi30k/de-en", data_dir=str(tmp_path / "tfds")), ["train"]
        )
    message = str(info.value)
    assert str(raw / "val.en.gz") in message
    assert multi30k.SHA256["val.en.gz"] in message
    assert hashlib.sha256(changed).hexdigest() in message


@pytest.mark.slow  # prepares a data set
def test_line_count_mismatch_error(multi30k_dir, tmp_path, monkeypatch):
    lines = _gz_lines(multi30k_dir, "val.en.gz")
    changed = gzip.compress(b"\n".join(lines[:-2] + [b""]))  # Drops the last sentence.
    raw = _fake_raw_dir(tmp_path, multi30k_dir, {"val.en.gz": changed})
    monkeypatch.setenv("MULTI30K_DIR", str(raw))
    monkeypatch.setitem(multi30k.SHA256, "val.en.gz", hashlib.sha256(changed).hexdigest())
    with pytest.raises(dp.DataError) as info:
        dp.load_translation_splits(
            dp.spec.parse("multi30k/de-en", data_dir=str(tmp_path / "tfds")), ["train"]
        )
    message = str(info.value)
    assert re.search(r"val\.de\.gz has 1014 lines but .*val\.en\.gz has 1013 lines", message)


@pytest.mark.slow  # prepares a data set
def test_undecodable_bytes_error(multi30k_dir, tmp_path, monkeypatch):
    lines = _gz_lines(multi30k_dir, "val.de.gz")
    lines[41] = lines[41] + b" \xff\xfe"
    changed = gzip.compress(b"\n".join(lines))
    raw = _fake_raw_dir(tmp_path, multi30k_dir, {"val.de.gz": changed})
    monkeypatch.setenv("MULTI30K_DIR", str(raw))
    monkeypatch.setitem(multi30k.SHA256, "val.de.gz", hashlib.sha256(changed).hexdigest())
    with pytest.raises(dp.DataError, match=r"val\.de\.gz, line 42: not valid UTF-8"):
        dp.load_translation_splits(
            dp.spec.parse("multi30k/de-en", data_dir=str(tmp_path / "tfds")), ["train"]
        )
    assert not os.path.exists(tmp_path / "tfds" / "multi30k" / "de-en" / "1.0.0")


# The data set's tokenized references (data/task1/tok/): read from $MULTI30K_DIR/tok/<file>.gz
# or downloaded (published uncompressed), their content's SHA-256 checked either way.


def _tok_lines(multi30k_dir: str, name: str) -> list[str]:
    text = gzip.decompress(Path(multi30k_dir, "tok", name + ".gz").read_bytes()).decode("utf-8")
    return text[:-1].split("\n")


def _fake_tok_dir(tmp_path: Path, multi30k_dir: str, changes=None) -> Path:
    """Raw files and tok/ as in `multi30k_dir`, with `changes` {tok name: bytes} written."""
    directory = _fake_raw_dir(tmp_path, multi30k_dir)
    (directory / "tok").mkdir()
    for name in multi30k.TOK_SHA256:
        local = directory / "tok" / (name + ".gz")
        if changes and name in changes:
            local.write_bytes(changes[name])
        else:
            local.symlink_to(Path(multi30k_dir, "tok", name + ".gz"))
    return directory


def test_every_tokenized_reference_file_is_known():
    assert len(multi30k.TOK_SHA256) == 14  # en, de, fr: 4 splits each; cs: 2.
    for language in multi30k.LANGUAGES:
        expected = [s for s in multi30k.SPLIT_PREFIXES if s != "train"]
        if language == "cs":
            expected = ["validation", "test2016"]
        assert [
            s for s in multi30k.SPLIT_PREFIXES if multi30k.has_tokenized_references(s, language)
        ] == expected


def test_tokenized_references_and_file_pairs_are_in_the_files_order(
    multi30k_dir, tfds_dir, monkeypatch, raw_lines
):
    monkeypatch.setenv("MULTI30K_DIR", multi30k_dir)
    builder = dp.Multi30k(config="en-de", data_dir=tfds_dir)
    assert builder.tokenized_references("test2017") == _tok_lines(
        multi30k_dir, "test_2017_flickr.lc.norm.tok.de"
    )
    assert builder.file_pairs("mscoco2017") == list(
        zip(raw_lines("mscoco2017", "en"), raw_lines("mscoco2017", "de"), strict=True)
    )
    with pytest.raises(
        dp.DataError,
        match=r"no tokenized references for 'train' in 'de'; it does"
        r" for: validation, test2016, test2017, mscoco2017\.",
    ):
        builder.tokenized_references("train")
    czech = dp.Multi30k(config="en-cs", data_dir=tfds_dir)
    with pytest.raises(dp.DataError, match="for: validation, test2016"):
        czech.tokenized_references("test2017")
    with pytest.raises(dp.DataError, match=r"Unknown split 'test2017' .*validation, test2016\."):
        czech.file_pairs("test2017")


def test_missing_tokenized_references_error(multi30k_dir, tmp_path, monkeypatch):
    raw = _fake_raw_dir(tmp_path, multi30k_dir)  # No tok/ directory.
    monkeypatch.setenv("MULTI30K_DIR", str(raw))
    builder = dp.Multi30k(config="de-en", data_dir=str(tmp_path / "tfds"))
    with pytest.raises(dp.DataError) as info:
        builder.tokenized_references("test2016")
    message = str(info.value)
    assert "test_2016_flickr.lc.norm.tok.en.gz" in message
    assert f"{raw / 'tok'} (from $MULTI30K_DIR, which does not exist)" in message
    assert multi30k.TOK_URL_PATTERN.format(file="<FILE>") in message


def test_corrupt_tokenized_references_error(multi30k_dir, tmp_path, monkeypatch):
    lines = _tok_lines(multi30k_dir, "val.lc.norm.tok.fr")
    lines[7] += " x"
    changed = gzip.compress("".join(line + "\n" for line in lines).encode("utf-8"))
    raw = _fake_tok_dir(tmp_path, multi30k_dir, {"val.lc.norm.tok.fr": changed})
    monkeypatch.setenv("MULTI30K_DIR", str(raw))
    builder = dp.Multi30k(config="en-fr", data_dir=str(tmp_path / "tfds"))
    first = builder.tokenized_references("test2016")[0]  # Other files are still read.
    assert first == "un homme avec un chapeau orange regardant quelque chose ."
    with pytest.raises(dp.DataError) as info:
        builder.tokenized_references("validation")
    message = str(info.value)
    assert f"checksum mismatch for {raw / 'tok' / 'val.lc.norm.tok.fr.gz'}" in message
    assert multi30k.TOK_SHA256["val.lc.norm.tok.fr"] in message
    assert multi30k.TOK_URL_PATTERN.format(file="val.lc.norm.tok.fr") in message


def test_tokenized_references_are_downloaded_and_verified(multi30k_dir, tmp_path, monkeypatch):
    published = tmp_path / "published"  # What the download address serves: uncompressed files.
    published.mkdir()
    for name in multi30k.TOK_SHA256:
        (published / name).write_bytes(
            gzip.decompress(Path(multi30k_dir, "tok", name + ".gz").read_bytes())
        )
    requested = _serve_downloads(monkeypatch, published)
    builder = dp.Multi30k(config="de-en", data_dir=str(tmp_path / "tfds"))
    assert builder.tokenized_references("validation") == _tok_lines(
        multi30k_dir, "val.lc.norm.tok.en"
    )
    assert requested == {
        "val.lc.norm.tok.en": multi30k.TOK_URL_PATTERN.format(file="val.lc.norm.tok.en")
    }
    assert multi30k.COMMIT in requested["val.lc.norm.tok.en"]
    assert (tmp_path / "tfds" / "downloads").is_dir()  # TFDS's download directory.

    (published / "val.lc.norm.tok.en").write_bytes(b"a truncated file\n")
    with pytest.raises(
        dp.DataError,
        match=r"checksum mismatch for .*val\.lc\.norm\.tok\.en: "
        r".*a downloaded copy can be deleted",
    ):
        builder.tokenized_references("validation")


def test_offline_without_tokenized_references_error(tmp_path, monkeypatch):
    def offline(url):
        raise ConnectionError("network is unreachable")

    monkeypatch.delenv("MULTI30K_DIR", raising=False)
    monkeypatch.setattr(multi30k, "_probe", offline)
    builder = dp.Multi30k(config="fr-de", data_dir=str(tmp_path))
    with pytest.raises(dp.DataError) as info:
        builder.tokenized_references("mscoco2017")
    message = str(info.value)
    assert "test_2017_mscoco.lc.norm.tok.de" in message
    assert multi30k.TOK_URL_PATTERN.format(file="<FILE>") in message
    assert "network is unreachable" in message
    assert "online" in message and "MULTI30K_DIR" in message and "in tok/" in message
