"""Loading one language pair: TFDS catalog sets (mocked), user corpora, and bad names."""

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
        splits = dp.load_translation_splits(
            dp.spec.parse(name, data_dir=str(tmp_path)), ["train", "validation"]
        )
    assert set(splits) == {"train", "validation"}
    for ds in splits.values():
        assert ds.element_spec == STRING_PAIR
        pairs = list(ds.as_numpy_iterator())
        assert len(pairs) == 5
        assert all(isinstance(s, bytes) and isinstance(t, bytes) for s, t in pairs)


def test_catalog_source_target_order():
    assert tfds.builder("ted_hrlr_translate/pt_to_en").info.supervised_keys == ("pt", "en")
    assert tfds.builder("wmt14_translate/de-en").info.supervised_keys == ("de", "en")


def test_a_pairs_direction_comes_from_its_name_or_its_builder_not_its_data():
    assert dp.spec.parse("multi30k/fr-de").directions == (("fr", "de"),)
    assert dp.spec.parse("ted_hrlr_translate/pt_to_en").directions == (("pt", "en"),)
    assert dp.spec.parse("text:/nowhere:en-cs").directions == (("en", "cs"),)


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
    splits = dp.load_translation_splits(dp.spec.parse(f"text:{tmp_path}:de-en"), ["train", "dev"])
    assert splits["train"].element_spec == STRING_PAIR
    got = [(s.decode(), t.decode()) for s, t in splits["train"].as_numpy_iterator()]
    assert got == list(zip(DE, EN, strict=True))  # Lines exactly as written, in order.
    assert len(list(splits["dev"])) == 1
    # The reverse direction comes from the same files.
    en_de = dp.load_translation_splits(dp.spec.parse(f"text:{tmp_path}:en-de"), ["dev"])["dev"]
    assert [(s.decode(), t.decode()) for s, t in en_de.as_numpy_iterator()] == [(EN[0], DE[0])]
    with pytest.raises(ValueError, match=r"Unknown split 'valid'.*available: dev, train"):
        dp.load_translation_splits(dp.spec.parse(f"text:{tmp_path}:de-en"), ["valid"])
    with pytest.raises(dp.DataError, match=r"test target"):
        dp.load_translation_splits(dp.spec.parse(f"text:{tmp_path}:de-en"), ["test"])


def test_text_corpus_line_count_mismatch(tmp_path):
    src = _write(tmp_path / "train.de", DE)
    tgt = _write(tmp_path / "train.en.gz", EN[:2], gz=True)
    with pytest.raises(dp.DataError) as info:
        dp.load_translation_splits(dp.spec.parse(f"text:{tmp_path}:de-en"), ["train"])
    assert f"{src} has 3 lines but {tgt} has 2 lines" in str(info.value)


def test_text_corpus_undecodable_bytes(tmp_path):
    (tmp_path / "train.de").write_bytes(b"Ein Hund.\nZwei \xc3(Katzen.\nDrei.\n")
    _write(tmp_path / "train.en", EN)
    with pytest.raises(dp.DataError, match=r"train\.de, line 2: not valid UTF-8"):
        dp.load_translation_splits(dp.spec.parse(f"text:{tmp_path}:de-en"), ["train"])


def test_bad_names_are_one_clear_error_before_any_data_is_read():
    # DataError: the scripts print these as one line (cli.run_main), not as a traceback.
    with pytest.raises(dp.DataError, match=r"Unknown data set 'no_such_set/x'.*multi30k/de-en"):
        dp.spec.parse("no_such_set/x")
    with pytest.raises(dp.DataError, match=r"Unknown Multi30k language pair 'de-xx'.*en-de"):
        dp.spec.parse("multi30k/de-xx")
    with pytest.raises(dp.DataError, match="not a translation data set"):
        dp.spec.parse("mnist")
    with pytest.raises(dp.DataError, match="Cannot parse"):
        dp.spec.parse("text:/tmp")
    with pytest.raises(dp.DataError, match="Cannot read the direction 'de'"):
        dp.spec.parse("text:/tmp:de")


def test_bad_splits():
    with pytest.raises(dp.DataError, match=r"Unknown split 'dev'.*available: train, validation"):
        dp.load_translation_splits(dp.spec.parse("multi30k/de-en"), ["dev"])
    with pytest.raises(TypeError, match="sequence of split names"):
        dp.load_translation_splits(dp.spec.parse("multi30k/de-en"), "train")


def test_pair_texts_decodes_every_pair_in_order_across_batches():
    count = 4096 + 3  # one full batch of the reader's and a few pairs more
    sources = [f"{DE[i % 3]} {i}" for i in range(count)]
    targets = [f"{EN[i % 3]} {i}" for i in range(count)]
    pairs = tf.data.Dataset.from_tensor_slices((sources, targets))
    assert dp.pair_texts(pairs) == (sources, targets)
    assert dp.pair_texts(pairs.take(0)) == ([], [])
