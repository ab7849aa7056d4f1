import keras
import numpy as np
import pytest
import tensorflow as tf

from transformer.dense import Dense


def _pair(units: int = 5, activation: str | None = "relu") -> tuple[Dense, keras.layers.Dense]:
    ours, theirs = (
        Dense(units, activation=activation),
        keras.layers.Dense(units, activation=activation),
    )
    ours.build((None, 3)), theirs.build((None, 3))
    theirs.set_weights(ours.get_weights())
    return ours, theirs


@pytest.mark.parametrize("shape", [[4, 3], [2, 1, 3], [2, 6, 3], [2, 3, 2, 3]])
def test_gives_what_keras_dense_gives_with_the_same_weights(shape):
    ours, theirs = _pair()
    inputs = tf.random.stateless_normal(shape, seed=[0, 1])
    np.testing.assert_allclose(ours(inputs), theirs(inputs), atol=1e-6)


def test_a_rank_3_input_is_one_matmul_without_tensordot_in_a_graph():
    ours, theirs = _pair(activation=None)
    spec = tf.TensorSpec([None, None, 3])

    def op_types(layer) -> list[str]:
        graph = tf.function(layer).get_concrete_function(spec).graph
        return [operation.type for operation in graph.get_operations()]

    assert op_types(ours).count("MatMul") == 1
    assert "Prod" not in op_types(ours) and "Prod" in op_types(theirs)  # tensordot's shape work
    outputs = tf.function(ours).get_concrete_function(spec).structured_outputs
    assert outputs.shape.as_list() == [None, None, 5]


def test_checkpoints_are_interchangeable_with_keras_dense(tmp_path):
    ours, theirs = _pair()
    path = tf.train.Checkpoint(layer=ours).write(str(tmp_path / "dense"))
    restored = keras.layers.Dense(5, activation="relu")
    restored.build((None, 3))
    tf.train.Checkpoint(layer=restored).read(path).assert_consumed()
    np.testing.assert_array_equal(restored.kernel.numpy(), ours.kernel.numpy())
