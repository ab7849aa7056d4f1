"""A user's own parallel corpus: sentence-per-line text files (plain or gzipped) per split.

`"text:DIR:SRC-TGT"` (`data_pipeline.spec`) names one: split `S` is the files `DIR/S.SRC` and
`DIR/S.TGT`, each optionally gzipped with a `.gz` suffix. The available splits are the file
names found in `DIR`.

Files are read with `data_pipeline.raw_text` (strict UTF-8, equal line counts, else a
`DataError` naming the file and line or both counts): `load` holds a split in memory
(validation and test splits); `files_of` names a training split's files, which
`data_pipeline.prepared` streams into shuffled shards once, for training in bounded memory.

Example:
    >>> corpus = TextCorpus.find("/data/my_corpus", "de", "en")  # doctest: +SKIP
    >>> ds = corpus.load("train")  # (German, English) tf.string pairs  # doctest: +SKIP
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping

import tensorflow as tf
from absl import logging

from data_pipeline import raw_text
from data_pipeline.errors import DataError, missing_files_message


@dataclasses.dataclass(frozen=True)
class TextCorpus:
    """Split name -> (source file, target file); `None` marks a side that was not found."""

    files: Mapping[str, tuple[str | None, str | None]]
    origin: str  # Where the files were looked for, for messages.

    @classmethod
    def find(cls, directory: str, source: str, target: str) -> TextCorpus:
        """The files ``<split>.<source>[.gz]`` and ``<split>.<target>[.gz]`` in ``directory``.

        Example:
            >>> TextCorpus.find("/data/my_corpus", "de", "en").splits  # doctest: +SKIP
            ['test', 'train', 'validation']
        """
        if not tf.io.gfile.isdir(directory):
            raise DataError(
                f"Text corpus directory {directory} (from 'text:{directory}:{source}-{target}') "
                "does not exist."
            )
        sides: dict[str, dict[str, str]] = {}
        for file in sorted(tf.io.gfile.listdir(directory)):
            stem = file.removesuffix(".gz")
            split, _, lang = stem.rpartition(".")
            if split and lang in (source, target):
                sides.setdefault(split, {}).setdefault(lang, os.path.join(directory, file))
        files = {split: (s.get(source), s.get(target)) for split, s in sides.items()}
        origin = f"{directory} (files <split>.{source}[.gz] and <split>.{target}[.gz])"
        return cls(files, origin)

    @property
    def splits(self) -> list[str]:
        """Splits with both sides present.

        Example:
            >>> TextCorpus({"train": ("a.de", "a.en"), "dev": ("b.de", None)}, "x").splits
            ['train']
        """
        return sorted(s for s, (a, b) in self.files.items() if a and b)

    def files_of(self, split: str) -> tuple[str, str]:
        """The (source, target) files of ``split``, or a DataError naming what is missing."""
        if split not in self.files:
            raise DataError(
                f"Unknown split {split!r} in {self.origin}; available: "
                f"{', '.join(self.splits) or 'none'}."
            )
        source_path, target_path = self.files[split]
        if not (source_path and target_path):
            missing = [
                f"{split} {side}"
                for side, p in zip(("source", "target"), (source_path, target_path), strict=True)
                if not p
            ]
            raise DataError(
                missing_files_message(
                    missing,
                    self.origin,
                    f"Add the file, or choose a split among: {', '.join(self.splits) or 'none'}.",
                )
            )
        return source_path, target_path

    def load(self, split: str) -> tf.data.Dataset:
        """Reads and validates one split into memory; returns a dataset of (source, target)
        tf.string pairs in the files' order.

        Example:
            >>> TextCorpus.find("/data/my_corpus", "de", "en").load("train")  # doctest: +SKIP
        """
        source_path, target_path = self.files_of(split)
        source_lines, target_lines = raw_text.read_parallel(source_path, target_path)
        logging.info(
            "Read %d sentence pairs for split %r from %s and %s",
            len(source_lines),
            split,
            source_path,
            target_path,
        )
        return tf.data.Dataset.from_tensor_slices(
            (tf.constant(source_lines, tf.string), tf.constant(target_lines, tf.string))
        )
