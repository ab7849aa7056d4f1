"""The paper's learning-rate schedule: linear warm-up, then inverse square-root decay."""

from __future__ import annotations

import keras
import tensorflow as tf


class WarmupInverseSqrt(keras.optimizers.schedules.LearningRateSchedule):
    """``peak * min(step / warmup, sqrt(warmup / step))`` (Vaswani et al., 2017, eq. 3).

    With ``peak = d_model^-0.5 * warmup^-0.5`` this is exactly the paper's
    ``d_model^-0.5 * min(step^-0.5, step * warmup^-1.5)``.

    Example:
        >>> schedule = WarmupInverseSqrt(peak_learning_rate=1e-3, warmup_steps=100)
        >>> float(schedule(100)), float(schedule(400))
        (0.001, 0.0005)
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
