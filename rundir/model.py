"""The model of a config: ``config.model``'s keys are its hyper-parameters; a Transformer, or
its encoder as a text classifier (``config.task``, ``config.classifier``)."""

from __future__ import annotations

import dataclasses

import ml_collections
import tensorflow as tf

from common.errors import ConfigError
from common.special_tokens import PAD_ID
from data_pipeline.tokenizer import Tokenizer
from rundir.config import TRANSLATION, load_config, task
from rundir.layout import RunDirectory
from transformer.classifier import TextClassifier
from transformer.model import Transformer
from transformer.settings import TransformerConfig

# Settings that come from the tokenizer, not from config.model.
_NOT_IN_CONFIG = {"source_vocab_size", "target_vocab_size", "pad_id"}


def model_keys() -> set[str]:
    """The keys of ``config.model``: the model's settings, named as in ``TransformerConfig``."""
    return {field.name for field in dataclasses.fields(TransformerConfig)} - _NOT_IN_CONFIG


def transformer_config(config: ml_collections.ConfigDict, vocab_size: int) -> TransformerConfig:
    """The model settings of ``config.model`` with the (joint) vocabulary's size, checked (a
    SettingError names a bad one); a ConfigError names a key that is missing or unknown (a
    config.json written by another version of this code).

    Example:
        >>> transformer_config(configs.tiny.get_config(), vocab_size=1000).d_model
        32
    """
    given, expected = set(config.model), model_keys()
    for problem, keys in (("lacks", expected - given), ("has an unknown key", given - expected)):
        if keys:
            raise ConfigError(
                f"The config {problem} model.{sorted(keys)[0]}: it was written by another version "
                "of this code (for a work directory's config.json: train it again with this "
                "version, or use the version that trained it)."
            )
    return TransformerConfig(source_vocab_size=vocab_size, pad_id=PAD_ID, **config.model)


def build_model(
    config: ml_collections.ConfigDict, vocab_size: int, dtype: str | None = None
) -> Transformer:
    """The Transformer of ``config.model`` (:func:`transformer_config`), with its variables
    created; ``dtype``: its Keras dtype policy (None: the global one).

    Example:
        >>> model = build_model(configs.tiny.get_config(), vocab_size=40)
        >>> model.count_params() > 0
        True
    """
    model = Transformer(transformer_config(config, vocab_size), dtype=dtype)
    model((tf.ones([1, 2], tf.int32), tf.ones([1, 2], tf.int32)))  # creates the variables
    return model


def build_classifier(
    config: ml_collections.ConfigDict, vocab_size: int, num_classes: int, dtype: str | None = None
) -> TextClassifier:
    """The classifier of ``config`` (its encoder's settings ``config.model``, its pooling
    ``config.classifier.pooling``), with its variables created.

    Example:
        >>> build_classifier(configs.spam_assassin.get_config(), 8000, 2).num_classes
        2
    """
    model = TextClassifier(
        transformer_config(config, vocab_size),
        num_classes,
        config.classifier.pooling,
        dtype=dtype,
    )
    model(tf.ones([1, 2], tf.int32))  # creates the variables
    return model


def build_workdir_model(workdir: str, dtype: str | None = None) -> tuple[Transformer, Tokenizer]:
    """The model of a work directory's config (untrained weights; ``dtype``: its Keras dtype
    policy, None: the global one, float32 unless set) and its tokenizer."""
    config = load_config(workdir)
    if task(config) != TRANSLATION:
        raise ConfigError(
            f"{workdir} holds a {task(config)} model, not a translation model: use classify.py "
            "(and evaluate.py, export.py) with it."
        )
    tokenizer = Tokenizer.from_file(RunDirectory(workdir).tokenizer)
    return build_model(config, tokenizer.vocab_size, dtype), tokenizer
