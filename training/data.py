"""The training data of a config: the pairs, the tokenizer, the endless shuffled batches, and the
settings a saved position of those batches depends on (so a resumed run knows if it still fits).
The validation split is read here too, once; ``training.validation`` scores on it.
"""

from __future__ import annotations

import dataclasses

import ml_collections
import tensorflow as tf

import data_pipeline
from common import language_tags
from common.storage import writing


def data_settings(config: ml_collections.ConfigDict, num_workers: int) -> dict:
    """The settings a saved position of the training batches depends on.

    A position restores only into a pipeline built with the same settings; after a change
    (e.g. ``--config.data.max_length``) training resumes with the data from the start of its
    order instead (:func:`changed_settings`).

    Example:
        >>> data_settings(configs.tiny.get_config(), 1)["data.max_length"]
        48
    """
    return {
        "data.name": config.data.name,
        "data.train_split": config.data.train_split,
        "data.max_length": config.data.max_length,
        "data.tokens_per_batch": config.data.tokens_per_batch,
        "data.shuffle_seed": config.data.shuffle_seed,
        "data.shuffle_buffer": config.data.shuffle_buffer,
        "tokenizer.sampling_alpha": config.tokenizer.sampling_alpha,
        "data.extra_train_data": config.data.extra_train_data,
        "train.seed": config.train.seed,
        "workers": num_workers,
        # The pipeline's version: 2 reads TFDS splits from disk on every pass (2026-12-06);
        # a position saved by version 1 (unversioned) does not restore into it.
        "pipeline": 2,
    }


def changed_settings(saved: dict, current: dict) -> str | None:
    """``"name old -> new, ..."`` for each setting that differs, or None when none does.

    Example:
        >>> changed_settings({"workers": 1}, {"workers": 2})
        'workers 1 -> 2'
    """
    changed = sorted(name for name in {*saved, *current} if saved.get(name) != current.get(name))
    if not changed:
        return None
    return ", ".join(f"{name} {saved.get(name)!r} -> {current.get(name)!r}" for name in changed)


@dataclasses.dataclass(frozen=True)
class TrainingData:
    """What a run reads: its training pairs (streamed, endless once batched), the splits it
    validates on (each direction's, read once) and its tokenizer."""

    train: tf.data.Dataset  # (source, target) pairs as the model reads them
    by_direction: data_pipeline.datasets.DirectionSplits  # untagged, in memory
    tokenizer: data_pipeline.Tokenizer


def load_data(
    config: ml_collections.ConfigDict,
    data: data_pipeline.DataSpec,
    tokenizer_path: str,
    splits: list[str],
) -> TrainingData:
    """``data``'s ``splits`` read into memory, its training split (with the extra training
    corpora's) streamed from disk (``data_pipeline.load_training_split``), and the tokenizer:
    trained on (a sample of) the training split the first time, into ``tokenizer_path`` (a
    StorageError names that file when the file system refuses it).

    Example:
        >>> run = RunDirectory("/tmp/run")
        >>> loaded = load_data(config, data_spec(config), run.tokenizer, ["validation"])
    """
    by_direction = data_pipeline.load_direction_splits(data, splits)
    train, _ = data_pipeline.load_training_split(
        data, config.data.train_split, config.data.shuffle_seed
    )
    with writing(tokenizer_path):
        tokenizer = data_pipeline.load_or_train_tokenizer(
            tokenizer_path,
            train,
            config.tokenizer.vocab_size,
            config.tokenizer.model_type,
            input_sentence_size=config.tokenizer.input_sentence_size,
            seed=config.train.seed,
            user_defined_symbols=[language_tags.tag(lang) for lang in data.languages],
        )
    return TrainingData(train, by_direction, tokenizer)


def training_batches(
    config: ml_collections.ConfigDict,
    pairs: tf.data.Dataset,
    tokenizer: data_pipeline.Tokenizer,
) -> tf.data.Dataset:
    """The endless, shuffled training batches of ``config`` (before sharding over workers).

    With ``tokenizer.sampling_alpha`` > 0 every epoch samples new segmentations of both sides.

    Example:
        >>> batches = training_batches(config, pairs["train"], tokenizer)  # doctest: +SKIP
    """
    alpha = config.tokenizer.sampling_alpha
    return data_pipeline.make_batches(
        pairs,
        tokenizer.sampling(alpha) if alpha else tokenizer,
        max_length=config.data.max_length,
        tokens_per_batch=config.data.tokens_per_batch,
        shuffle=True,
        seed=config.data.shuffle_seed,
        repeat=True,
        shuffle_buffer=config.data.shuffle_buffer,
    )
