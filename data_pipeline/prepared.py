"""A text corpus's training split, prepared once into shuffled TFRecord shards, then streamed.

Preparation reads the two files a line at a time (``raw_text.iter_parallel``: strict UTF-8,
equal line counts, errors naming the file and line) and shuffles the pairs in two passes with
bounded memory, as TFDS and fairseq-preprocess do: each pair goes to a random temporary bucket,
then each bucket (about :data:`SHARD_BYTES` of text) is shuffled in memory and written as one
TFRecord shard of ``tf.train.Example`` s with ``source`` and ``target`` bytes. ``info.json``,
written last, names the shards and counts the pairs; the directory is keyed by the files' paths,
sizes and modification times, so a changed file is prepared again and an unchanged one never.

Reading shuffles the shard order on every pass and interleaves several shards, so consecutive
pairs come from all over the corpus even before the training pipeline's bounded shuffle buffer.

A multilingual corpus is several pairs of files prepared together (``FilePair`` s with their
target languages), each source line with its direction's target-language tag in front: the
shards mix the directions, and one sentence's directions land far apart.

Example:
    >>> split = prepare([FilePair("train.de", "train.en")], "/data/prepared")  # minutes: millions
    >>> pairs = split.dataset(seed=0)   # (source, target) tf.string pairs, file order shuffled
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import os
import random
import shutil
import struct
import tempfile
import time
from collections.abc import Iterator

import tensorflow as tf
from absl import logging
from tqdm import tqdm

from common.language_tags import defused, tagged
from common.storage import writing
from data_pipeline import raw_text

SHARD_BYTES = 16 << 20  # text a shard holds, about; one shard is in memory while it is shuffled
INFO_FILE = "info.json"
_GZIP_RATIO = 4  # a gzipped file's text, estimated from its size, to choose the shard count
_INTERLEAVED_SHARDS = 8
_LENGTH = struct.Struct("<I")


@dataclasses.dataclass(frozen=True)
class PreparedSplit:
    """A prepared split: its shards (TFRecord files) and its number of pairs."""

    directory: str
    shards: tuple[str, ...]
    pairs: int

    def dataset(self, seed: int) -> tf.data.Dataset:
        """``(source, target)`` tf.string pairs: the shards in an order shuffled with
        ``seed``, :data:`_INTERLEAVED_SHARDS` read in turn. Every pass reads that order (a
        saved data position could not restore another one's: `make_batches` shuffles pairs
        across passes instead)."""
        paths = [os.path.join(self.directory, shard) for shard in self.shards]
        files = tf.data.Dataset.from_tensor_slices(paths).shuffle(
            len(paths), seed=seed, reshuffle_each_iteration=False
        )
        records = files.interleave(
            tf.data.TFRecordDataset,
            cycle_length=min(_INTERLEAVED_SHARDS, len(paths)),
            block_length=1,
            num_parallel_calls=tf.data.AUTOTUNE,
            deterministic=True,
        )
        features = {
            "source": tf.io.FixedLenFeature([], tf.string),
            "target": tf.io.FixedLenFeature([], tf.string),
        }

        def parse(record: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
            example = tf.io.parse_single_example(record, features)
            return example["source"], example["target"]

        return records.map(parse, num_parallel_calls=tf.data.AUTOTUNE, deterministic=True)


@dataclasses.dataclass(frozen=True)
class FilePair:
    """Two aligned files; for one direction of a multilingual corpus, its target language
    (each source read with its tag in front, a tag written in either side defused)."""

    source_path: str
    target_path: str
    target_lang: str = ""


def prepared_directory(file_pairs: list[FilePair], root: str) -> str:
    """Where the pairs of files are prepared under ``root``: a name from their absolute paths,
    sizes, modification times and target languages."""
    key = []
    for pair in file_pairs:
        key += [
            (os.path.abspath(p), tf.io.gfile.stat(p).length, tf.io.gfile.stat(p).mtime_nsec)
            for p in (pair.source_path, pair.target_path)
        ]
        if pair.target_lang:
            key.append(f"into {pair.target_lang}, tags defused")
    digest = hashlib.sha256(json.dumps(key).encode()).hexdigest()[:16]
    name = os.path.basename(file_pairs[0].source_path).removesuffix(".gz")
    if len(file_pairs) > 1:
        name += f"+{len(file_pairs) - 1}"
    return os.path.join(root, f"{name}-{digest}")


def prepare(file_pairs: list[FilePair], root: str, seed: int = 0) -> PreparedSplit:
    """The prepared split of pairs of aligned files, prepared under ``root`` the first time (see
    the module docstring): one pair, or several mixed together in the shards (a multilingual
    corpus: each pair a direction, its sources tagged with its ``target_lang``). The shards are
    written in a staging directory renamed into place when complete, so a preparation cut short
    leaves nothing that would be read.

    Example:
        >>> prepare([FilePair("train.de", "train.en", "en"),
        ...          FilePair("train.en", "train.de", "de")], "/data/p").pairs  # doctest: +SKIP
        58000
    """
    directory = prepared_directory(file_pairs, root)
    info_path = os.path.join(directory, INFO_FILE)
    if not tf.io.gfile.exists(info_path):
        with writing(directory):  # a full disk or a read-only data_dir: one line naming it
            _prepare(file_pairs, directory, seed)
    with tf.io.gfile.GFile(info_path) as file:
        info = json.load(file)
    return PreparedSplit(directory, tuple(info["shards"]), info["pairs"])


def _shard_count(file_pairs: list[FilePair]) -> int:
    size = sum(
        tf.io.gfile.stat(path).length * (_GZIP_RATIO if path.endswith(".gz") else 1)
        for pair in file_pairs
        for path in (pair.source_path, pair.target_path)
    )
    return max(1, math.ceil(size / SHARD_BYTES))


def _all_pairs(file_pairs: list[FilePair]) -> Iterator[tuple[str, str]]:
    for pair in file_pairs:
        for source, target in raw_text.iter_parallel(pair.source_path, pair.target_path):
            if pair.target_lang:
                source, target = tagged(source, pair.target_lang), defused(target)
            yield source, target


def _prepare(file_pairs: list[FilePair], directory: str, seed: int) -> None:
    start, rng = time.perf_counter(), random.Random(seed)
    num_shards = _shard_count(file_pairs)
    os.makedirs(os.path.dirname(directory), exist_ok=True)
    staging = tempfile.mkdtemp(prefix=".tmp-", dir=os.path.dirname(directory))
    try:
        buckets = [os.path.join(staging, f"bucket-{i:05d}") for i in range(num_shards)]
        pairs = _fill_buckets(_all_pairs(file_pairs), buckets, rng)
        shards = []
        for index, bucket in enumerate(tqdm(buckets, desc="shuffle shards", unit="shard")):
            shards.append(f"train-{index:05d}-of-{num_shards:05d}.tfrecord")
            _write_shard(bucket, os.path.join(staging, shards[-1]), rng)
            os.remove(bucket)
        with open(os.path.join(staging, INFO_FILE), "w", encoding="utf-8") as file:
            json.dump({"pairs": pairs, "shards": shards, "seed": seed}, file, indent=2)
        try:
            os.replace(staging, directory)  # complete or absent: never half there
        except OSError:
            if not tf.io.gfile.exists(os.path.join(directory, INFO_FILE)):
                raise
            # Another process prepared the same files meanwhile; its shards are as good.
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    logging.info(
        "Prepared %d pairs of %s into %d shards in %s (%.0f s)",
        pairs,
        ", ".join(f"{p.source_path} and {p.target_path}" for p in file_pairs),
        num_shards,
        directory,
        time.perf_counter() - start,
    )


def _fill_buckets(pairs: Iterator[tuple[str, str]], buckets: list[str], rng: random.Random) -> int:
    """Writes each pair, length-prefixed, to a random bucket file; returns the number of pairs."""
    files = [open(bucket, "wb") for bucket in buckets]  # noqa: SIM115 (closed below)
    count = 0
    try:
        for source, target in tqdm(pairs, desc="read pairs", unit="pair", mininterval=2):
            source_bytes, target_bytes = source.encode(), target.encode()
            files[rng.randrange(len(files))].write(
                _LENGTH.pack(len(source_bytes))
                + source_bytes
                + _LENGTH.pack(len(target_bytes))
                + target_bytes
            )
            count += 1
    finally:
        for file in files:
            file.close()
    return count


def _read_bucket(bucket: str) -> list[tuple[bytes, bytes]]:
    with open(bucket, "rb") as file:
        data = file.read()
    pairs, offset = [], 0
    while offset < len(data):
        sides = []
        for _ in range(2):
            (length,) = _LENGTH.unpack_from(data, offset)
            sides.append(data[offset + 4 : offset + 4 + length])
            offset += 4 + length
        pairs.append((sides[0], sides[1]))
    return pairs


def _write_shard(bucket: str, path: str, rng: random.Random) -> None:
    pairs = _read_bucket(bucket)
    rng.shuffle(pairs)
    with tf.io.TFRecordWriter(path) as writer:
        for source, target in pairs:
            features = {
                "source": tf.train.Feature(bytes_list=tf.train.BytesList(value=[source])),
                "target": tf.train.Feature(bytes_list=tf.train.BytesList(value=[target])),
            }
            example = tf.train.Example(features=tf.train.Features(feature=features))
            writer.write(example.SerializeToString())
