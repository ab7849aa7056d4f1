"""The model and optimizer of a config."""

import numpy as np
import pytest
import tensorflow as tf

from configs import tiny
from rundir.model import build_model
from training.optimizer import build_optimizer


@pytest.mark.parametrize("weight_decay", [0.0, 0.5])
def test_weight_decay_shrinks_weight_matrices_and_embeddings_only(weight_decay):
    config = tiny.get_config()
    config.train.weight_decay = weight_decay
    model = build_model(config, vocab_size=40)
    optimizer = build_optimizer(config)
    learning_rate = float(optimizer.learning_rate)
    before = {variable.path: variable.numpy() for variable in model.trainable_variables}
    # Zero gradients: Adam moves nothing, so any change is the decay alone.
    optimizer.apply_gradients(
        [(tf.zeros_like(variable), variable) for variable in model.trainable_variables]
    )
    decayed = {"embeddings", "kernel"}
    assert {variable.name for variable in model.trainable_variables} == decayed | {
        "bias",
        "gamma",
        "beta",
    }
    for variable in model.trainable_variables:
        factor = 1 - learning_rate * weight_decay if variable.name in decayed else 1.0
        np.testing.assert_allclose(
            variable.numpy(), before[variable.path] * factor, rtol=1e-6, err_msg=variable.path
        )
