"""`load_translation_splits`: TFDS catalog sets (mocked), user corpora, and bad names."""

from __future__ import annotations

import gzip

import pytest
import tensorflow as tf
import tensorflow_datasets as tfds

import data_pipeline as dp

STRING_PAIR = (tf.TensorSpec([], tf.string), tf.TensorSpec([], tf.string))

DE = ["Ein Hund läuft.", "Zwei Männer  spielen Fußball. ", "Ä"]
EN = ["A dog runs.", "Two men play soccer.", "A"]


@pytest.mark.parametrize("name", ["ted_hrlr_translate/pt_to_en", "wmt14_translate/de-en"])
def test_tfds_catalog_sets(name, tmp_path):
    with tfds.testing.mock_data(num_examples=5):
        splits = dp.load_translation_splits(name, ["train", "validation"], data_dir=str(tmp_path))
    assert set(splits) == {"train", "validation"}
    for ds in splits.values():
        assert ds.element_spec == STRING_PAIR
        pairs = list(ds.as_numpy_iterator())
        assert len(pairs) == 5
        assert all(isinstance(s, bytes) and isinstance(t, bytes) for s, t in pairs)


def test_catalog_source_target_order():
    assert tfds.builder("ted_hrlr_translate/pt_to_en").info.supervised_keys == ("pt", "en")
    assert tfds.builder("wmt14_translate/de-en").info.supervised_keys == ("de", "en")


def test_language_pair_reads_names_not_data():
    assert dp.language_pair("multi30k/fr-de") == ("fr", "de")
    assert dp.language_pair("ted_hrlr_translate/pt_to_en") == ("pt", "en")
    assert dp.language_pair("text:/nowhere:en-cs") == ("en", "cs")
    with pytest.raises(dp.DataError, match="Unknown Multi30k language pair"):
        dp.language_pair("multi30k/fr-xx")


def _write(path, lines, gz=False):
    data = "".join(line + "\n" for line in lines).encode("utf-8")
    path.write_bytes(gzip.compress(data) if gz else data)
    return str(path)


def test_text_corpus_directory(tmp_path):
    _write(tmp_path / "train.de.gz", DE, gz=True)
    _write(tmp_path / "train.en", EN)
    _write(tmp_path / "dev.de", DE[:1])
    _write(tmp_path / "dev.en.gz", EN[:1], gz=True)
    _write(tmp_path / "test.de", DE)  # No English side: not a split.
    splits = dp.load_translation_splits(f"text:{tmp_path}:de-en", ["train", "dev"])
    assert splits["train"].element_spec == STRING_PAIR
    got = [(s.decode(), t.decode()) for s, t in splits["train"].as_numpy_iterator()]
    assert got == list(zip(DE, EN, strict=True))  # Lines exactly as written, in order.
    assert len(list(splits["dev"])) == 1
    # The reverse direction comes from the same files.
    en_de = dp.load_translation_splits(f"text:{tmp_path}:en-de", ["dev"])["dev"]
    assert [(s.decode(), t.decode()) for s, t in en_de.as_numpy_iterator()] == [(EN[0], DE[0])]
    with pytest.raises(ValueError, match=r"Unknown split 'valid'.*available: dev, train"):
        dp.load_translation_splits(f"text:{tmp_path}:de-en", ["valid"])
    with pytest.raises(dp.DataError, match=r"test target"):
        dp.load_translation_splits(f"text:{tmp_path}:de-en", ["test"])


def test_text_corpus_explicit_files(tmp_path):
    src = _write(tmp_path / "a.de", DE)
    tgt = _write(tmp_path / "b.en.gz", EN, gz=True)
    splits = dp.load_translation_splits("text", ["train"], text_corpus={"train": (src, tgt)})
    got = [(s.decode(), t.decode()) for s, t in splits["train"].as_numpy_iterator()]
    assert got == list(zip(DE, EN, strict=True))
    with pytest.raises(ValueError, match="Unknown split 'dev'"):
        dp.load_translation_splits("text", ["dev"], text_corpus={"train": (src, tgt)})
    with pytest.raises(ValueError, match="needs text_corpus"):
        dp.load_translation_splits("text", ["train"])
    with pytest.raises(dp.DataError, match="File not found: .*nope.en"):
        dp.load_translation_splits(
            "text", ["train"], text_corpus={"train": (src, str(tmp_path / "nope.en"))}
        )


def test_text_corpus_line_count_mismatch(tmp_path):
    src = _write(tmp_path / "a.de", DE)
    tgt = _write(tmp_path / "a.en.gz", EN[:2], gz=True)
    with pytest.raises(dp.DataError) as info:
        dp.load_translation_splits("text", ["train"], text_corpus={"train": (src, tgt)})
    assert f"{src} has 3 lines but {tgt} has 2 lines" in str(info.value)


def test_text_corpus_undecodable_bytes(tmp_path):
    (tmp_path / "train.de").write_bytes(b"Ein Hund.\nZwei \xc3(Katzen.\nDrei.\n")
    _write(tmp_path / "train.en", EN)
    with pytest.raises(dp.DataError, match=r"train\.de, line 2: not valid UTF-8"):
        dp.load_translation_splits(f"text:{tmp_path}:de-en", ["train"])


def test_bad_names():
    # DataError: the scripts print these as one line (cli.run_main), not as a traceback.
    with pytest.raises(dp.DataError, match=r"Unknown data set 'no_such_set/x'.*multi30k/de-en"):
        dp.load_translation_splits("no_such_set/x", ["train"])
    with pytest.raises(dp.DataError, match=r"Unknown Multi30k language pair 'de-xx'.*en-de"):
        dp.load_translation_splits("multi30k/de-xx", ["train"])
    with pytest.raises(dp.DataError, match=r"Unknown split 'dev'.*available: train, validation"):
        dp.load_translation_splits("multi30k/de-en", ["dev"])
    with pytest.raises(dp.DataError, match="not a translation data set"):
        dp.load_translation_splits("mnist", ["train"])
    with pytest.raises(dp.DataError, match="Cannot parse"):
        dp.load_translation_splits("text:/tmp", ["train"])
    with pytest.raises(TypeError, match="sequence of split names"):
        dp.load_translation_splits("multi30k/de-en", "train")
