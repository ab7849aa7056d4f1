"""Loading the parallel data of a `DataSpec` (`data_pipeline.spec`): its splits, each
direction's, and the training split streamed.

* `load_direction_splits` reads each direction's splits into memory as written (`load_corpus`
  one corpus's): the splits validation BLEU and `evaluate.py` score.
* `model_pairs` turns them into what the model reads: the directions one after another, each
  source tagged with its target language when there are several (`data_pipeline.tagging`).
  `load_translation_splits` is the two together.
* `load_training_split` streams the training split in bounded memory, its pairs counted and
  in a shuffled order: a text corpus's split prepared once into shuffled shards under the data
  directory (`data_pipeline.prepared`), several directions' mixed there; a TFDS split with its
  shard order shuffled on every pass (several Multi30k directions from the builder's
  `multilingual` config, which holds them mixed); then the spec's extra training corpora.

TFDS sets are read with `as_supervised=True`; text corpora are read and validated up front
(`data_pipeline.text_corpus`, `data_pipeline.raw_text`): equal line counts on both sides and
valid UTF-8, or a `DataError` naming the file. Every returned `tf.data.Dataset` yields
`(source, target)` pairs of `tf.string` scalars.

Example:
    >>> data = spec.parse("multi30k/de-en")
    >>> splits = load_translation_splits(data, ["train", "validation"])
    >>> de, en = next(iter(splits["validation"]))
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import tensorflow as tf
import tensorflow_datasets as tfds
from absl import logging

from data_pipeline import multi30k, prepared, spec, tagging
from data_pipeline.errors import DataError

PREPARED_TEXT = "prepared_text"  # under data_dir: text corpora's prepared training splits

DirectionSplits = dict[spec.Direction, dict[str, tf.data.Dataset]]


def load_direction_splits(
    data: spec.DataSpec, splits: Sequence[str], rebuild: bool = False
) -> DirectionSplits:
    """Each direction of ``data`` with those of ``splits`` it has (`DataSpec.corpora_with`), as
    untagged (source, target) pairs: ``{Direction("de", "fr"): {"test2016": dataset}, ...}``.
    ``rebuild`` prepares a TFDS set again (downloading afresh when online).

    Example:
        >>> by_direction = load_direction_splits(spec.parse("multi30k/multilingual"), ["test2017"])
        >>> by_direction[spec.Direction("de", "fr")]
        {'test2017': <...Dataset...>}
    """
    if isinstance(splits, str):
        raise TypeError(f"splits must be a sequence of split names, not the string {splits!r}.")
    having = {split: data.corpora_with(split) for split in splits}
    return {
        corpus.direction: load_corpus(
            corpus, [s for s in splits if corpus in having[s]], data.data_dir, rebuild
        )
        for corpus in data.corpora
    }


def model_pairs(data: spec.DataSpec, by_direction: DirectionSplits) -> dict[str, tf.data.Dataset]:
    """Each split of ``by_direction`` as the model reads it: the directions' pairs one after
    another, each source tagged with its target language when ``data`` has several.

    Example:
        >>> model_pairs(data, load_direction_splits(data, ["validation"]))["validation"]
        <...Dataset...>
    """
    joined: dict[str, tf.data.Dataset] = {}
    for direction, pairs_of in by_direction.items():
        for split, pairs in pairs_of.items():
            pairs = data.model_pairs(direction, pairs)
            joined[split] = joined[split].concatenate(pairs) if split in joined else pairs
    return joined


def load_translation_splits(
    data: spec.DataSpec, splits: Sequence[str], rebuild: bool = False
) -> dict[str, tf.data.Dataset]:
    """The named splits of ``data`` as the model reads them: `model_pairs` of
    `load_direction_splits`.

    Example:
        >>> ds = load_translation_splits(spec.parse("text:/data/corpus:de-en"), ["dev"])["dev"]
    """
    return model_pairs(data, load_direction_splits(data, splits, rebuild))


def load_training_split(
    data: spec.DataSpec, split: str, seed: int = 0
) -> tuple[tf.data.Dataset, int]:
    """A training split streamed from disk and its number of pairs: ``(dataset of (source,
    target) tf.string pairs, count)``, the pairs as the model reads them, in a shuffled order
    (prepared so, its shards in an order shuffled with ``seed``), the pairs of
    ``data.extra_train`` mixed in: each corpus's ``weight`` times its size (a share, or more
    than one pass of it), drawn in proportion to those sizes so that all end together.

    Example:
        >>> pairs, count = load_training_split(spec.parse("text:/data/big:de-en"), "train")
        >>> count
        4000000
    """
    parts = [_training_split(data, data.corpora, split, seed)]
    for corpus in data.extra_train:
        pairs, count = _training_split(data, (corpus,), split, seed)
        if corpus.weight != 1.0:
            count = max(1, round(count * corpus.weight))
            pairs = pairs.repeat().take(count)
        parts.append((pairs, count))
    if len(parts) == 1:
        return parts[0]
    total = sum(count for _, count in parts)
    mixed = tf.data.Dataset.sample_from_datasets(
        [pairs for pairs, _ in parts],
        weights=[count / total for _, count in parts],
        seed=seed,
        stop_on_empty_dataset=False,
        rerandomize_each_iteration=False,  # every pass the same draws: a position restores
    )
    return mixed, total


def _training_split(
    data: spec.DataSpec, corpora: tuple[spec.Corpus, ...], split: str, seed: int
) -> tuple[tf.data.Dataset, int]:
    """The training pairs of ``corpora`` (all text files, or all TFDS) mixed and counted."""
    if corpora[0].text_directory:
        file_pairs = [
            prepared.FilePair(
                *corpus.text_files().files_of(split), data.tag_language(corpus.direction)
            )
            for corpus in corpora
        ]
        prepared_split = prepared.prepare(file_pairs, _prepared_root(data), seed)
        return prepared_split.dataset(seed), prepared_split.pairs
    if len(corpora) == 1:
        builder = _prepared_builder(corpora[0].tfds_name, [split], data.data_dir, rebuild=False)
        pairs, count = _shuffled_split(builder, split, seed, as_supervised=True)
        return data.model_pairs(corpora[0].direction, pairs), count
    # The builder's multilingual config holds every direction, in an order mixed across them.
    builder = _prepared_builder(spec.MULTI30K_ALL, [split], data.data_dir, rebuild=False)
    examples, count = _shuffled_split(builder, split, seed, as_supervised=False)
    if set(data.directions) != set(multi30k.DIRECTIONS):
        wanted = tf.constant([direction.label for direction in data.directions])

        def wanted_direction(example: dict) -> tf.Tensor:
            label = tf.strings.join([example["source_language"], example["target_language"]], "-")
            return tf.reduce_any(label == wanted)

        examples = examples.filter(wanted_direction)
        # Each direction of a split has the same pairs (a slice of it about as many).
        count = count * len(corpora) // len(multi30k.directions_for(split.split("[")[0]))
    pairs = examples.map(
        lambda e: tagging.tagged_pair(e["source"], e["target"], e["target_language"]),
        num_parallel_calls=tf.data.AUTOTUNE,
        deterministic=True,
    )
    return pairs, count


def load_corpus(
    corpus: spec.Corpus, splits: Sequence[str], data_dir: str | None = None, rebuild: bool = False
) -> dict[str, tf.data.Dataset]:
    """One corpus's splits in memory, untagged: ``{split: (source, target) pairs}``.

    Example:
        >>> load_corpus(spec.parse("multi30k/de-en").corpora[0], ["test2016"])["test2016"]
        <...Dataset...>
    """
    if not splits:
        return {}
    if corpus.text_directory:
        files = corpus.text_files()
        return {split: files.load(split) for split in splits}
    builder = _prepared_builder(corpus.tfds_name, splits, data_dir, rebuild)
    return {
        split: builder.as_dataset(split=split, as_supervised=True, shuffle_files=False)
        for split in splits
    }


def pair_texts(pairs: tf.data.Dataset) -> tuple[list[str], list[str]]:
    """``(sources, targets)``: the ``(source, target)`` string pairs of ``pairs`` decoded from
    UTF-8, in their order.

    Example:
        >>> sources, references = pair_texts(load_corpus(corpus, ["test2016"])["test2016"])
    """
    sources, targets = [], []
    # In batches: a pair at a time costs ~0.3 ms each (8.6 s for Multi30k's training split).
    for batch_sources, batch_targets in pairs.batch(4096).as_numpy_iterator():
        sources += [source.decode("utf-8") for source in batch_sources]
        targets += [target.decode("utf-8") for target in batch_targets]
    return sources, targets


def _prepared_root(data: spec.DataSpec) -> str:
    return os.path.join(data.data_dir or tfds.core.constants.DATA_DIR, PREPARED_TEXT)


def _shuffled_split(
    builder: tfds.core.DatasetBuilder, split: str, seed: int, as_supervised: bool
) -> tuple[tf.data.Dataset, int]:
    """A prepared TFDS split with its shards in an order shuffled with ``seed`` (the same on
    every pass, as `prepared.PreparedSplit.dataset` says why), and its size."""
    info = builder.info.splits[split]
    # Read from disk on every pass, not cached in memory by TFDS (its `try_autocache` of a
    # small split): a saved iterator position holds a cache's every pair read so far (197 MB
    # at step 2,500 of the multilingual pre-training, against 6.5 MB read from disk).
    read_config = tfds.ReadConfig(
        shuffle_seed=seed, shuffle_reshuffle_each_iteration=False, try_autocache=False
    )
    dataset = builder.as_dataset(
        split=split,
        as_supervised=as_supervised,
        shuffle_files=info.num_shards > 1,
        read_config=read_config,
    )
    return dataset, info.num_examples


def _prepared_builder(
    name: str, splits: Sequence[str], data_dir: str | None, rebuild: bool
) -> tfds.core.DatasetBuilder:
    builder = spec.tfds_builder(name, data_dir)
    _check_split_names(name, splits, builder)  # Before preparing: fail fast when known.
    mode = (
        tfds.download.GenerateMode.FORCE_REDOWNLOAD
        if rebuild
        else tfds.download.GenerateMode.REUSE_DATASET_IF_EXISTS
    )
    builder.download_and_prepare(download_config=tfds.download.DownloadConfig(download_mode=mode))
    _check_split_names(name, splits, builder)
    logging.info("Loaded %s from %s", name, builder.data_dir)
    return builder


def _check_split_names(name: str, splits: Sequence[str], builder) -> None:
    if isinstance(builder, multi30k.Multi30k):
        available = builder.split_names()
    else:
        available = list(builder.info.splits.keys())
    if not available:  # Not known before preparation (or under tfds.testing.mock_data).
        return
    for split in splits:
        base = split.split("[")[0]
        if "+" not in split and base not in available:
            raise DataError(
                f"Unknown split {split!r} for {name!r}; available: {', '.join(available)}."
            )
