"""One function to load parallel translation data: `load_translation_splits`.

`name` selects the data:

* A TFDS name with its config, `"dataset/config"`, loaded with `as_supervised=True`:
  `"multi30k/de-en"` (the builder in `data_pipeline.multi30k`), or any translation set of the
  TFDS catalog such as `"ted_hrlr_translate/pt_to_en"` (the TensorFlow tutorial's set) or
  `"wmt14_translate/de-en"`. The pair order is the data set's supervised keys, which for these
  sets is the order written in the name.
* A user's own corpus of parallel sentence-per-line text files (UTF-8, plain or gzipped;
  line N of one side translates line N of the other), in one of two forms:

  - `"text:DIR:SRC-TGT"`, e.g. `"text:/data/my_corpus:de-en"`: split `S` is read from
    `DIR/S.SRC` and `DIR/S.TGT`, each optionally with a `.gz` suffix (`train.de.gz`,
    `train.en`, ...). The split names are whatever files exist.
  - `"text"` with `text_corpus={"train": ("train.de", "train.en.gz"), ...}` mapping each split
    to its (source file, target file).

  Text corpora are read into memory and validated up front (see `data_pipeline.text_corpus`
  and `data_pipeline.raw_text`): equal line counts on both sides and valid UTF-8, or a
  `DataError` naming the file. `rebuild` does not apply to them.

A multilingual name (`"multi30k/multilingual"`, `"multi30k/en-de,multi30k/de-en,..."`,
`"text:DIR:de-en,fr-en,..."`; see `data_pipeline.multilingual`) yields every direction's pairs
with the target-language tag in front of each source; `load_direction_splits` gives them one
direction at a time, untagged, to score each.

`load_training_split` streams a training split instead, in bounded memory and with its pairs
counted: a text corpus's split prepared once into shuffled shards under `data_dir`
(`data_pipeline.prepared`), a TFDS split with its shard order shuffled on every pass.

Every returned `tf.data.Dataset` yields `(source, target)` pairs of `tf.string` scalars.

Example:
    >>> splits = load_translation_splits("multi30k/de-en", ["train", "validation"])
    >>> de, en = next(iter(splits["validation"]))
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

import tensorflow as tf
import tensorflow_datasets as tfds
from absl import logging

from data_pipeline import multi30k, multilingual, prepared
from data_pipeline import text_corpus as text_corpus_lib
from data_pipeline.errors import DataError

PREPARED_TEXT = "prepared_text"  # under data_dir: text corpora's prepared training splits
_USAGE = (
    "Use a TFDS translation set as 'dataset/config' (e.g. 'multi30k/de-en', "
    "'ted_hrlr_translate/pt_to_en', 'wmt14_translate/de-en'), or your own files: "
    + text_corpus_lib.USAGE
)


def load_translation_splits(
    name: str,
    splits: Sequence[str],
    data_dir: str | None = None,
    rebuild: bool = False,
    *,
    text_corpus: Mapping[str, tuple[str, str]] | None = None,
) -> dict[str, tf.data.Dataset]:
    """Loads the named splits of a translation data set as (source, target) string pairs.

    Args:
      name: which data set; see the module docstring.
      splits: split names, e.g. `["train", "validation"]` (TFDS slicing like `"train[:1%]"`
        works for TFDS sets).
      data_dir: TFDS data directory (default: TFDS's own default).
      rebuild: prepare the TFDS data set again (downloading afresh when online) even if it has
        been prepared before.
      text_corpus: with `name="text"`, a mapping split -> (source file, target file).

    Returns:
      A dict split -> `tf.data.Dataset` of `(tf.string, tf.string)` scalar pairs.

    Example:
        >>> ds = load_translation_splits("text:/data/corpus:de-en", ["train"])["train"]
        >>> ds = load_translation_splits(
        ...     "text", ["train"], text_corpus={"train": ("a.de.gz", "a.en.gz")})["train"]
    """
    if isinstance(splits, str):
        raise TypeError(f"splits must be a sequence of split names, not the string {splits!r}.")
    data = multilingual.parse(name)
    if data is not None:
        return _load_tagged(data, splits, data_dir, rebuild)
    if name == text_corpus_lib.TEXT or name.startswith(text_corpus_lib.TEXT + ":"):
        corpus = text_corpus_lib.TextCorpus.from_spec(name, text_corpus)
        return {split: corpus.load(split) for split in splits}
    if text_corpus is not None:
        raise ValueError(f"text_corpus is only used with name='text', not with {name!r}.")
    return _load_tfds(name, splits, data_dir, rebuild)


def load_training_split(
    name: str, split: str, data_dir: str | None = None, seed: int = 0
) -> tuple[tf.data.Dataset, int]:
    """A training split streamed from disk and its number of pairs: ``(dataset of (source,
    target) tf.string pairs, count)``. Its pairs come in a shuffled order (prepared so, and
    shards in a new order on every pass, with ``seed``); a text corpus is prepared under
    ``data_dir`` (default: TFDS's) the first time.

    Example:
        >>> pairs, count = load_training_split("text:/data/big:de-en", "train")
        >>> count
        4000000
    """
    data = multilingual.parse(name)
    if data is not None:
        return _load_multilingual_training_split(data, split, data_dir, seed)
    if name.startswith(text_corpus_lib.TEXT + ":"):
        corpus = text_corpus_lib.TextCorpus.from_spec(name)
        prepared_split = corpus.prepare(split, _prepared_root(data_dir))
        return prepared_split.dataset(seed), prepared_split.pairs
    builder = _prepared_builder(name, [split], data_dir, rebuild=False)
    return _shuffled_split(builder, split, seed, as_supervised=True)


def load_direction_splits(
    name: str, splits: Sequence[str], data_dir: str | None = None
) -> dict[tuple[str, str], dict[str, tf.data.Dataset]]:
    """Each direction of a multilingual data set (see `data_pipeline.multilingual`) with those
    of ``splits`` it has, as untagged (source, target) pairs: ``{("de", "fr"): {"test2016":
    dataset}, ...}``. A split that no direction has is a DataError.

    Example:
        >>> load_direction_splits("multi30k/multilingual", ["test2017"])[("de", "fr")]
        {'test2017': <...Dataset...>}
    """
    return _direction_pairs(_multilingual(name), splits, data_dir, rebuild=False)


def _direction_pairs(
    data: multilingual.MultilingualData, splits: Sequence[str], data_dir: str | None, rebuild: bool
) -> dict[tuple[str, str], dict[str, tf.data.Dataset]]:
    available = {d: data.splits(d) for d in data.directions}
    for split in splits:
        if not any(split.split("[")[0] in names for names in available.values()):
            raise DataError(
                f"No direction of {data.name!r} has the split {split!r}; available: "
                f"{', '.join(sorted({s for names in available.values() for s in names}))}."
            )
    return {
        direction: load_translation_splits(
            data.direction_name(direction),
            [s for s in splits if s.split("[")[0] in available[direction]],
            data_dir,
            rebuild,
        )
        for direction in data.directions
    }


def _multilingual(name: str) -> multilingual.MultilingualData:
    data = multilingual.parse(name)
    if data is None:
        raise DataError(
            f"{name!r} names one direction, not a multilingual data set. " + multilingual.USAGE
        )
    return data


def _load_tagged(
    data: multilingual.MultilingualData, splits: Sequence[str], data_dir: str | None, rebuild: bool
) -> dict[str, tf.data.Dataset]:
    """Every direction's pairs of each split, each source tagged, one direction after another."""
    by_direction = _direction_pairs(data, splits, data_dir, rebuild)
    joined = {}
    for split in splits:
        parts = [
            pairs[split].map(lambda s, t, lang=target: _tagged_pair(s, t, lang))
            for (_, target), pairs in by_direction.items()
            if split in pairs
        ]
        joined[split] = parts[0]
        for part in parts[1:]:
            joined[split] = joined[split].concatenate(part)
    return joined


def _tagged_pair(
    source: tf.Tensor, target: tf.Tensor, target_lang: tf.Tensor | str
) -> tuple[tf.Tensor, tf.Tensor]:
    """A multilingual run's pair: the source tagged, a tag written in either side defused."""
    return multilingual.tag_in_graph(source, target_lang), multilingual.defuse_in_graph(target)


def _load_multilingual_training_split(
    data: multilingual.MultilingualData, split: str, data_dir: str | None, seed: int
) -> tuple[tf.data.Dataset, int]:
    """The directions' training pairs mixed together, each source tagged, and their count."""
    if data.text_directory is not None:
        file_pairs = []
        for direction in data.directions:
            corpus = text_corpus_lib.TextCorpus.from_spec(data.direction_name(direction))
            file_pairs.append(prepared.FilePair(*corpus.files_of(split), target_lang=direction[1]))
        prepared_split = prepared.prepare_directions(file_pairs, _prepared_root(data_dir), seed)
        return prepared_split.dataset(seed), prepared_split.pairs
    # The builder's multilingual config holds every direction, in an order mixed across them.
    builder = _prepared_builder(multilingual.MULTI30K_ALL, [split], data_dir, rebuild=False)
    examples, count = _shuffled_split(builder, split, seed, as_supervised=False)
    if not data.all_multi30k:
        wanted = tf.constant([multilingual.direction_label(d) for d in data.directions])

        def wanted_direction(example: dict) -> tf.Tensor:
            label = tf.strings.join([example["source_language"], example["target_language"]], "-")
            return tf.reduce_any(label == wanted)

        examples = examples.filter(wanted_direction)
        # Each direction of a split has the same pairs (a slice of it about as many).
        count = count * len(data.directions) // len(multi30k.directions_for(split.split("[")[0]))
    pairs = examples.map(
        lambda e: _tagged_pair(e["source"], e["target"], e["target_language"]),
        num_parallel_calls=tf.data.AUTOTUNE,
        deterministic=True,
    )
    return pairs, count


def _prepared_root(data_dir: str | None) -> str:
    return os.path.join(data_dir or tfds.core.constants.DATA_DIR, PREPARED_TEXT)


def _shuffled_split(
    builder: tfds.core.DatasetBuilder, split: str, seed: int, as_supervised: bool
) -> tuple[tf.data.Dataset, int]:
    """A prepared TFDS split with its shard order shuffled on every pass, and its size."""
    info = builder.info.splits[split]
    read_config = tfds.ReadConfig(shuffle_seed=seed, shuffle_reshuffle_each_iteration=True)
    dataset = builder.as_dataset(
        split=split,
        as_supervised=as_supervised,
        shuffle_files=info.num_shards > 1,
        read_config=read_config,
    )
    return dataset, info.num_examples


def _load_tfds(
    name: str, splits: Sequence[str], data_dir: str | None, rebuild: bool
) -> dict[str, tf.data.Dataset]:
    builder = _prepared_builder(name, splits, data_dir, rebuild)
    return {
        split: builder.as_dataset(split=split, as_supervised=True, shuffle_files=False)
        for split in splits
    }


def _prepared_builder(
    name: str, splits: Sequence[str], data_dir: str | None, rebuild: bool
) -> tfds.core.DatasetBuilder:
    builder = _tfds_builder(name, data_dir)
    supervised = (
        ("source", "target")
        if name == multilingual.MULTI30K_ALL
        else _supervised_pair(name, builder)
    )
    _check_split_names(name, splits, builder)  # Before preparing: fail fast when known.
    mode = (
        tfds.download.GenerateMode.FORCE_REDOWNLOAD
        if rebuild
        else tfds.download.GenerateMode.REUSE_DATASET_IF_EXISTS
    )
    builder.download_and_prepare(download_config=tfds.download.DownloadConfig(download_mode=mode))
    _check_split_names(name, splits, builder)
    logging.info("Loaded %s (%s -> %s) from %s", name, *supervised, builder.data_dir)
    return builder


def language_pair(name: str, data_dir: str | None = None) -> tuple[str, str]:
    """The (source, target) languages of a data set `name` (the forms of `load_translation_splits`
    but `"text"`): a TFDS set's supervised keys, or the SRC-TGT of `"text:DIR:SRC-TGT"`. Reads
    no data.

    Example:
        >>> language_pair("multi30k/fr-de")
        ('fr', 'de')
    """
    if multilingual.parse(name) is not None:
        raise DataError(f"{name!r} is multilingual: it has no one language pair.")
    if name.startswith(text_corpus_lib.TEXT + ":"):
        _, source, target = text_corpus_lib.parse_spec(name)
        return source, target
    return _supervised_pair(name, _tfds_builder(name, data_dir))


def _supervised_pair(name: str, builder: tfds.core.DatasetBuilder) -> tuple[str, str]:
    supervised = builder.info.supervised_keys
    if not (
        isinstance(supervised, tuple)
        and len(supervised) == 2
        and all(isinstance(k, str) for k in supervised)
        and all(isinstance(builder.info.features[k], tfds.features.Text) for k in supervised)
    ):
        raise DataError(
            f"{name!r} is not a translation data set: its supervised keys {supervised!r} are "
            f"not a (source, target) pair of text features. {_USAGE}"
        )
    return supervised


def _tfds_builder(name: str, data_dir: str | None) -> tfds.core.DatasetBuilder:
    dataset, _, config = name.partition("/")
    if dataset == "multi30k":
        configs = [c.name for c in multi30k.Multi30k.BUILDER_CONFIGS]
        if config not in configs:
            raise DataError(
                f"Unknown Multi30k language pair {config!r} in {name!r}; available: "
                f"{', '.join('multi30k/' + c for c in configs)}."
            )
    try:
        return tfds.builder(name, data_dir=data_dir)
    except tfds.core.registered.DatasetNotFoundError as e:
        raise DataError(f"Unknown data set {name!r}. {_USAGE}\nTFDS says: {e}") from e
    except ValueError as e:
        raise DataError(f"Cannot use data set {name!r}: {e}\n{_USAGE}") from e


def _check_split_names(name: str, splits: Sequence[str], builder) -> None:
    if name == multilingual.MULTI30K_ALL:
        available = list(multi30k.SPLIT_PREFIXES)
    elif name.startswith("multi30k/"):
        cfg = builder.builder_config
        available = multi30k.splits_for(cfg.source, cfg.target)
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
