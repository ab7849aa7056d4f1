"""The optimizer of a config (its model: ``rundir.model.build_model``)."""

from __future__ import annotations

import keras
import ml_collections

from training.schedule import make_schedule

# Variables that weight decay leaves alone: Dense biases and layer norms' scale and shift. Keras
# matches the pattern against ``bias`` on some backends and ``.../bias:0`` on TensorFlow's.
_NOT_DECAYED = [r"(^|/)(bias|gamma|beta)(:\d+)?$"]


def build_optimizer(config: ml_collections.ConfigDict) -> keras.optimizers.Optimizer:
    """Adam with ``config.train``'s schedule, optional global-norm clipping and decoupled weight
    decay (as AdamW: weight matrices and embeddings only), loss-scaled for mixed_float16.

    Example:
        >>> optimizer = build_optimizer(configs.tiny.get_config())
    """
    train = config.train
    schedule = make_schedule(
        train.decay,
        train.peak_learning_rate,
        train.warmup_steps,
        train.steps,
        config.model.d_model,
    )
    optimizer = keras.optimizers.Adam(
        learning_rate=schedule,
        beta_1=train.adam_beta1,
        beta_2=train.adam_beta2,
        epsilon=train.adam_epsilon,
        global_clipnorm=train.gradient_clip_norm or None,
        weight_decay=train.weight_decay or None,
    )
    # Keras' decoupled decay (w -= learning_rate * weight_decay * w), as AdamW does.
    optimizer.exclude_from_weight_decay(var_names=_NOT_DECAYED)
    if train.precision == "mixed_float16":
        optimizer = keras.optimizers.LossScaleOptimizer(optimizer)
    return optimizer
