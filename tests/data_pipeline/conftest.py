"""Data-pipeline fixtures: raw Multi30k lines, the prepared de-en splits and one tokenizer.

`multi30k_dir` and `tfds_dir` (session-scoped) come from tests/conftest.py.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

import data_pipeline as dp
from data_pipeline import multi30k

DE_EN_SPLITS = list(multi30k.SPLIT_PREFIXES)


@pytest.fixture(scope="session")
def raw_lines(multi30k_dir):
    """Reads a raw file independently of data_pipeline: raw_lines(split, lang) -> lines."""
    cache: dict[tuple[str, str], list[str]] = {}

    def read(split: str, lang: str) -> list[str]:
        if (split, lang) not in cache:
            path = Path(multi30k_dir, multi30k.raw_file(split, lang))
            text = gzip.decompress(path.read_bytes()).decode("utf-8")
            assert text.endswith("\n")
            cache[split, lang] = text[:-1].split("\n")
        return cache[split, lang]

    return read


@pytest.fixture(scope="session")
def de_en(multi30k_dir, tfds_dir):
    """multi30k/de-en, all splits, as tf.data datasets of (de, en) strings."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MULTI30K_DIR", multi30k_dir)
        return dp.load_translation_splits(
            dp.spec.parse("multi30k/de-en", data_dir=tfds_dir), DE_EN_SPLITS
        )


@pytest.fixture(scope="session")
def de_en_pairs(de_en) -> dict[str, list[tuple[str, str]]]:
    """The de-en splits as Python lists of (de, en) strings, in TFDS order."""
    pairs = {}
    for split, ds in de_en.items():
        pairs[split] = [
            (s.decode(), t.decode())
            for sources, targets in ds.batch(8192).as_numpy_iterator()
            for s, t in zip(sources, targets, strict=True)
        ]
    return pairs


@pytest.fixture(scope="session")
def tokenizer(de_en, tmp_path_factory) -> dp.Tokenizer:
    """A joint de+en unigram model (vocab 2000) trained on the de-en training split."""
    workdir = tmp_path_factory.mktemp("tokenizer")
    return dp.load_or_train_tokenizer(str(workdir / "spm.model"), de_en["train"], vocab_size=2000)
