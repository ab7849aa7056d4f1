"""One optimisation step on one replica: forward, label-smoothed loss, backward, optimizer."""

from __future__ import annotations

from collections.abc import Callable

import keras
import tensorflow as tf

from training.loss import loss_function


def make_replica_step(
    model: keras.Model,
    optimizer: keras.optimizers.Optimizer,
    label_smoothing: float,
    pad_id: int = 0,
    compiled_loss: bool = True,
) -> Callable[[dict], tuple[tf.Tensor, tf.Tensor, tf.Tensor]]:
    """Returns ``step(batch) -> (loss_sum, correct, token_count)`` for ``strategy.run``.

    ``batch`` holds ``source``, ``target_in`` and ``target_out`` ids. Each replica divides its
    loss by the token count of the *global* batch, so the gradients summed over replicas are
    those of the global mean loss, whatever the number of replicas.

    Example:
        >>> step = tf.function(make_replica_step(model, optimizer, label_smoothing=0.1))
        >>> loss_sum, correct, count = step(batch)
    """

    loss_fn = loss_function(compiled_loss)

    def step(batch: dict) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
        with tf.GradientTape() as tape:
            logits = model((batch["source"], batch["target_in"]), training=True)
            loss_sum, correct, count = loss_fn(logits, batch["target_out"], label_smoothing, pad_id)
            global_count = tf.distribute.get_replica_context().all_reduce("sum", count)
            loss = optimizer.scale_loss(loss_sum / tf.maximum(global_count, 1.0))
        variables = model.trainable_variables
        optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables, strict=True))
        return loss_sum, correct, count

    return step
