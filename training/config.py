"""Checks a configuration's values at start-up, before any data or model work.

Misspelt keys are caught earlier: ``configs/base.py`` returns a locked ConfigDict. A config file
that does not exist or defines no ``get_config`` is caught before it is loaded
(``cli.errors.config_file_problem``).
"""

from __future__ import annotations

import ml_collections

from common.errors import ConfigError
from data_pipeline.labelled_text import NAMES, SPAM_ASSASSIN, TEXT_PREFIX
from data_pipeline.tokenizer import MODEL_TYPES
from rundir.config import CLASSIFICATION, TASKS, task
from rundir.model import transformer_config
from training.schedule import DECAYS
from transformer.classifier import POOLINGS
from transformer.settings import SettingError

PRECISIONS = ("float32", "mixed_bfloat16", "mixed_float16")
NON_NEGATIVE_INTS = {  # key -> what 0 means
    "train.eval_every": "no validation",
    "train.early_stopping_patience": "no early stopping",
}
DISTRIBUTIONS = ("default", "mirrored", "multi_worker", "tpu")
POSITIVE_INTS = (
    "data.max_length",
    "data.tokens_per_batch",
    "data.shuffle_buffer",
    "tokenizer.vocab_size",
    "train.steps",
    "train.log_every",
    "train.checkpoint_every",
    "train.keep_checkpoints",
    "decode.beam_size",
)


def setting(config: ml_collections.ConfigDict, key: str):
    """The value of ``key`` (``"model.d_model"``) in ``config``; None where it has no such key
    (a config.json of another version).

    Example:
        >>> setting(configs.tiny.get_config(), "model.d_model")
        32
    """
    section, _, name = key.partition(".")
    return config[section].get(name)


def _require(condition: bool, key: str, value: object, expected: str) -> None:
    if not condition:
        raise ConfigError(f"config.{key} = {value!r} is invalid: {expected}.")


def validate(config: ml_collections.ConfigDict) -> None:
    """Raises :class:`ConfigError` naming the first invalid key.

    Example:
        >>> config = configs.tiny.get_config(); config.model.d_model = 30
        >>> validate(config)  # ConfigError: config.model.d_model = 30 is invalid: ...
    """
    for key in POSITIVE_INTS:
        value = setting(config, key)
        _require(
            isinstance(value, int) and not isinstance(value, bool) and value > 0,
            key,
            value,
            "expected a positive integer",
        )
    for key, zero in NON_NEGATIVE_INTS.items():
        value = setting(config, key)
        _require(
            isinstance(value, int) and not isinstance(value, bool) and value >= 0,
            key,
            value,
            f"expected a non-negative integer (0: {zero})",
        )
    patience = config.train.early_stopping_patience
    _require(
        not patience or config.train.eval_every > 0,
        "train.early_stopping_patience",
        patience,
        "early stopping needs validations: set train.eval_every > 0",
    )
    _require(
        not config.train.keep_optimizer or bool(config.train.init_from),
        "train.keep_optimizer",
        config.train.keep_optimizer,
        "it keeps the Adam moments of the run train.init_from names: set that too",
    )
    _check_model(config)
    _require(
        isinstance(config.train.label_smoothing, int | float)
        and 0 <= config.train.label_smoothing < 1,
        "train.label_smoothing",
        config.train.label_smoothing,
        "expected a number in [0, 1)",
    )
    for key in (
        "train.warmup_steps",
        "train.peak_learning_rate",
        "train.gradient_clip_norm",
        "train.weight_decay",
        "decode.length_penalty",
        "decode.max_length_ratio",
        "decode.max_length_offset",
        "train.eval_max_sentences",
        "train.early_stopping_min_delta",
        "tokenizer.input_sentence_size",
        "tokenizer.sampling_alpha",
    ):
        value = setting(config, key)
        _require(
            isinstance(value, int | float) and value >= 0,
            key,
            value,
            "expected a non-negative number",
        )
    _require(
        config.train.warmup_steps > 0 or config.train.peak_learning_rate > 0,
        "train.warmup_steps",
        config.train.warmup_steps,
        "set it > 0, or set train.peak_learning_rate",
    )
    _require(
        config.train.decay in DECAYS,
        "train.decay",
        config.train.decay,
        f"expected one of {DECAYS}",
    )
    _require(
        config.train.decay != "cosine" or config.train.steps > config.train.warmup_steps,
        "train.warmup_steps",
        config.train.warmup_steps,
        f"a cosine decay needs train.steps ({config.train.steps}) > train.warmup_steps",
    )
    _require(
        config.tokenizer.model_type in MODEL_TYPES,
        "tokenizer.model_type",
        config.tokenizer.model_type,
        f"expected one of {MODEL_TYPES}",
    )
    _require(
        not config.tokenizer.sampling_alpha or config.tokenizer.model_type == "unigram",
        "tokenizer.sampling_alpha",
        config.tokenizer.sampling_alpha,
        "subword sampling needs tokenizer.model_type 'unigram' (set the alpha to 0 for 'bpe')",
    )
    _require(
        config.train.precision in PRECISIONS,
        "train.precision",
        config.train.precision,
        f"expected one of {PRECISIONS}",
    )
    _require(
        config.train.distribution in DISTRIBUTIONS,
        "train.distribution",
        config.train.distribution,
        f"expected one of {DISTRIBUTIONS}",
    )
    for key in ("train.adam_beta1", "train.adam_beta2"):
        value = setting(config, key)
        _require(0 <= value < 1, key, value, "expected a number in [0, 1)")
    _require(
        config.train.adam_epsilon > 0,
        "train.adam_epsilon",
        config.train.adam_epsilon,
        "expected a positive number",
    )
    _require(
        config.data.tokens_per_batch >= config.data.max_length,
        "data.tokens_per_batch",
        config.data.tokens_per_batch,
        f"it must be at least data.max_length ({config.data.max_length})",
    )
    _require(bool(config.data.name), "data.name", config.data.name, "name a data set")
    _require(task(config) in TASKS, "task", task(config), f"expected one of {TASKS}")
    if task(config) == CLASSIFICATION:
        _check_classifier(config)


def _check_classifier(config: ml_collections.ConfigDict) -> None:
    """What a classifier's run needs and what it does not support."""
    name = config.data.name
    _require(
        name == SPAM_ASSASSIN or (name.startswith(TEXT_PREFIX) and len(name) > len(TEXT_PREFIX)),
        "data.name",
        name,
        f"a classifier's data is {NAMES}",
    )
    _require(
        config.classifier.pooling in POOLINGS,
        "classifier.pooling",
        config.classifier.pooling,
        f"expected one of {POOLINGS}",
    )
    for key, what in (
        ("train.init_from", "fine-tuning"),
        ("train.freeze", "frozen parts"),
        ("tokenizer.sampling_alpha", "subword sampling"),
        ("data.extra_train_data", "extra training data"),
    ):
        value = setting(config, key)
        _require(not value, key, value, f"a classifier's run has no {what}; leave it unset")


def _check_model(config: ml_collections.ConfigDict) -> None:
    """``config.model``'s settings, checked where the model's are (``TransformerConfig``)."""
    try:
        transformer_config(config, config.tokenizer.vocab_size)
    except SettingError as error:
        raise ConfigError(
            f"config.model.{error.setting} = {error.value!r} is invalid: it must be {error.must}."
        ) from None
