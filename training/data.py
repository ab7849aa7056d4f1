"""The training data of a config: the pairs, the tokenizer, the endless shuffled batches, and the
settings a saved position of those batches depends on (so a resumed run knows if it still fits).
"""

from __future__ import annotations

import dataclasses
import os

import ml_collections
import tensorflow as tf

import data_pipeline
from common import language_tags
from common.errors import ConfigError
from common.storage import writing
from common.translation import TranslationRequest


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


def extra_train_data(config: ml_collections.ConfigDict) -> list[str]:
    """The names in ``data.extra_train_data``; each must translate into ``data.name``'s target
    language (a ConfigError otherwise: one model learns one target language here).

    Example:
        >>> config.data.name, config.data.extra_train_data = "multi30k/en-de", "multi30k/fr-de"
        >>> extra_train_data(config)  # doctest: +SKIP
        ['multi30k/fr-de']
    """
    names = [name.strip() for name in config.data.extra_train_data.split(",") if name.strip()]
    if not names:
        return []
    if data_pipeline.multilingual.parse(config.data.name) is not None:
        raise ConfigError(
            f"config.data.extra_train_data ({config.data.extra_train_data!r}) is for a model of "
            f"one language pair; config.data.name ({config.data.name!r}) is multilingual: list "
            "every direction in config.data.name instead."
        )
    data_dir = config.data.data_dir or None
    target = data_pipeline.language_pair(config.data.name, data_dir)[1]
    for name in names:
        extra_target = data_pipeline.language_pair(name, data_dir)[1]
        if extra_target != target:
            raise ConfigError(
                f"config.data.extra_train_data names {name!r}, which translates into "
                f"{extra_target!r}, but config.data.name ({config.data.name!r}) into {target!r}; "
                "add only data sets with the same target language."
            )
    return names


def load_data(
    config: ml_collections.ConfigDict, workdir: str, splits: list[str]
) -> tuple[dict[str, tf.data.Dataset], data_pipeline.Tokenizer]:
    """Returns ``(split -> (source, target) string pairs, tokenizer)``: ``splits`` read into
    memory, the training split (with ``data.extra_train_data``'s) streamed from disk
    (``data_pipeline.load_training_split``). Trains the tokenizer on (a sample of) the training
    split the first time, into ``workdir/spm.model`` (a StorageError names that file when the
    file system refuses it).

    Example:
        >>> pairs, tokenizer = load_data(config, "/tmp/run", ["validation"])  # doctest: +SKIP
    """
    train_split, data_dir = config.data.train_split, config.data.data_dir or None
    extra_names = extra_train_data(config)  # Checked before any data is read.
    pairs = data_pipeline.load_translation_splits(config.data.name, splits, data_dir=data_dir)
    seed = config.data.shuffle_seed
    train, _ = data_pipeline.load_training_split(config.data.name, train_split, data_dir, seed)
    for name in extra_names:
        extra, _ = data_pipeline.load_training_split(name, train_split, data_dir, seed)
        train = train.concatenate(extra)
    pairs[train_split] = train
    multilingual = data_pipeline.multilingual.parse(config.data.name)
    tags = [language_tags.tag(lang) for lang in multilingual.languages] if multilingual else []
    with writing(os.path.join(workdir, data_pipeline.tokenizer.model_file())):
        tokenizer = data_pipeline.load_or_train_tokenizer(
            workdir,
            pairs[train_split],
            config.tokenizer.vocab_size,
            config.tokenizer.model_type,
            input_sentence_size=config.tokenizer.input_sentence_size,
            seed=config.train.seed,
            user_defined_symbols=tags,
        )
    return pairs, tokenizer


@dataclasses.dataclass(frozen=True)
class ValidationSet:
    """Sentences whose translation BLEU is measured during training: one direction's."""

    label: str  # "de-fr" for one direction of a multilingual run; "" for a run of one pair
    sources: list[str]
    references: list[str]
    request: TranslationRequest = TranslationRequest()  # a multilingual run's: its target


def validation_sets(
    config: ml_collections.ConfigDict, pairs: tf.data.Dataset
) -> list[ValidationSet]:
    """The first ``train.eval_max_sentences`` sentences of the validation split: of ``pairs``
    for a run of one language pair; of each direction for a multilingual run (the mean of the
    directions' BLEU chooses its best checkpoint).

    Example:
        >>> [s.label for s in validation_sets(multilingual_config, pairs)][:2]  # doctest: +SKIP
        ['de-en', 'en-de']
    """
    limit = config.train.eval_max_sentences or -1
    multilingual = data_pipeline.multilingual.parse(config.data.name)
    if multilingual is None:
        return [ValidationSet("", *_sides(pairs.take(limit)))]
    split = config.data.validation_split
    by_direction = data_pipeline.load_direction_splits(
        config.data.name, [split], config.data.data_dir or None
    )
    sets = []
    for direction, splits in by_direction.items():
        if split in splits:
            sources, references = _sides(splits[split].take(limit))
            label = data_pipeline.multilingual.direction_label(direction)
            request = TranslationRequest(target_lang=direction[1])
            sets.append(ValidationSet(label, sources, references, request))
    return sets


def _sides(pairs: tf.data.Dataset) -> tuple[list[str], list[str]]:
    sources, targets = [], []
    for source, target in pairs.as_numpy_iterator():
        sources.append(source.decode("utf-8"))
        targets.append(target.decode("utf-8"))
    return sources, targets


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
