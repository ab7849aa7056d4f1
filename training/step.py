"""One optimisation step on one replica: forward, loss (a translation model's label-smoothed
cross-entropy, or another task's), backward, optimizer."""

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

    ``batch`` holds ``source``, ``target_in`` and ``target_out`` ids.

    Example:
        >>> step = tf.function(make_replica_step(model, optimizer, label_smoothing=0.1))
        >>> loss_sum, correct, count = step(batch)
    """
    loss_fn = loss_function(compiled_loss)

    def sums(batch: dict) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
        logits = model((batch["source"], batch["target_in"]), training=True)
        return loss_fn(logits, batch["target_out"], label_smoothing, pad_id)

    return make_step(model, optimizer, sums)


def make_step(
    model: keras.Model,
    optimizer: keras.optimizers.Optimizer,
    sums: Callable[[dict], tuple[tf.Tensor, tf.Tensor, tf.Tensor]],
) -> Callable[[dict], tuple[tf.Tensor, tf.Tensor, tf.Tensor]]:
    """``step(batch) -> sums(batch)``, which also takes one optimizer step on the mean loss.

    ``sums(batch)`` runs the model (training) and returns ``(loss_sum, correct, count)`` summed
    over the batch's tokens (or texts). Each replica divides its loss by the count of the
    *global* batch, so the gradients summed over replicas are those of the global mean loss,
    whatever the number of replicas.
    """

    def step(batch: dict) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
        with tf.GradientTape() as tape:
            loss_sum, correct, count = sums(batch)
            global_count = tf.distribute.get_replica_context().all_reduce("sum", count)
            loss = optimizer.scale_loss(loss_sum / tf.maximum(global_count, 1.0))
        variables = model.trainable_variables
        optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables, strict=True))
        return loss_sum, correct, count

    return step
