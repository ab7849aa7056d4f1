"""Learning-rate schedules: linear warm-up, then the paper's inverse square-root decay or a
cosine decay to zero at the last step (better for short, fixed budgets)."""

from __future__ import annotations

import math

import keras
import tensorflow as tf

DECAYS = ("inverse_sqrt", "cosine")


class WarmupInverseSqrt(keras.optimizers.schedules.LearningRateSchedule):
    """``peak * min(step / warmup, sqrt(warmup / step))`` (Vaswani et al., 2017, eq. 3).

    With ``peak = d_model^-0.5 * warmup^-0.5`` this is exactly the paper's
    ``d_model^-0.5 * min(step^-0.5, step * warmup^-1.5)``.

    Example:
        >>> schedule = WarmupInverseSqrt(peak_learning_rate=1e-3, warmup_steps=100)
        >>> [round(float(schedule(step)), 6) for step in (100, 400)]
        [0.001, 0.0005]
    """

    def __init__(self, peak_learning_rate: float, warmup_steps: int) -> None:
        super().__init__()
        self.peak_learning_rate = peak_learning_rate
        self.warmup_steps = warmup_steps

    @classmethod
    def from_paper(cls, d_model: int, warmup_steps: int) -> WarmupInverseSqrt:
        return cls(d_model**-0.5 * warmup_steps**-0.5, warmup_steps)

    def __call__(self, step: tf.Tensor) -> tf.Tensor:
        step = tf.maximum(tf.cast(step, tf.float32), 1.0)
        warmup = float(max(self.warmup_steps, 1))
        return self.peak_learning_rate * tf.minimum(step / warmup, tf.sqrt(warmup / step))

    def get_config(self) -> dict:
        return {"peak_learning_rate": self.peak_learning_rate, "warmup_steps": self.warmup_steps}


class WarmupCosine(keras.optimizers.schedules.LearningRateSchedule):
    """Linear warm-up to ``peak``, then ``peak * (1 + cos(pi * progress)) / 2`` down to zero at
    ``total_steps`` (``progress`` goes from 0 at the end of warm-up to 1 at ``total_steps``).

    Example:
        >>> schedule = WarmupCosine(peak_learning_rate=1e-3, warmup_steps=100, total_steps=300)
        >>> [round(float(schedule(step)), 6) for step in (100, 200, 300)]
        [0.001, 0.0005, 0.0]
    """

    def __init__(self, peak_learning_rate: float, warmup_steps: int, total_steps: int) -> None:
        super().__init__()
        if total_steps <= warmup_steps:
            raise ValueError(
                f"total_steps ({total_steps}) must be larger than warmup_steps ({warmup_steps})."
            )
        self.peak_learning_rate = peak_learning_rate
        self.warmup_steps = warmup_steps
        self.total_steps = total_steps

    def __call__(self, step: tf.Tensor) -> tf.Tensor:
        step = tf.maximum(tf.cast(step, tf.float32), 1.0)
        warmup = float(max(self.warmup_steps, 1))
        progress = tf.clip_by_value(
            (step - warmup) / float(self.total_steps - self.warmup_steps), 0.0, 1.0
        )
        decayed = 0.5 * (1.0 + tf.cos(math.pi * progress))
        return self.peak_learning_rate * tf.minimum(step / warmup, decayed)

    def get_config(self) -> dict:
        return {
            "peak_learning_rate": self.peak_learning_rate,
            "warmup_steps": self.warmup_steps,
            "total_steps": self.total_steps,
        }


def make_schedule(
    decay: str, peak_learning_rate: float, warmup_steps: int, total_steps: int, d_model: int
) -> keras.optimizers.schedules.LearningRateSchedule:
    """The schedule a config asks for; ``peak_learning_rate`` 0 means the paper's
    ``d_model^-0.5 * warmup_steps^-0.5``."""
    if decay not in DECAYS:
        raise ValueError(f"decay must be one of {DECAYS}, got {decay!r}.")
    peak = peak_learning_rate or d_model**-0.5 * warmup_steps**-0.5
    if decay == "cosine":
        return WarmupCosine(peak, warmup_steps, total_steps)
    return WarmupInverseSqrt(peak, warmup_steps)
