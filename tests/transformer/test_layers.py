import numpy as np
import pytest
import tensorflow as tf

from transformer.layers import DecoderLayer, EncoderLayer, FeedForward
from transformer.settings import TransformerConfig


def settings(**values) -> TransformerConfig:
    """A layer's settings (the vocabulary is the model's, unused here)."""
    return TransformerConfig(source_vocab_size=1, **values)


@pytest.mark.parametrize(
    "layer",
    [
        FeedForward(d_model=16, d_ff=32, dropout=0.1),
        EncoderLayer(settings(d_model=16, num_heads=4, d_ff=32, dropout=0.2, norm_first=True)),
        DecoderLayer(settings(d_model=16, num_heads=2, d_ff=32, dropout=0.0)),
    ],
)
def test_get_config_round_trip(layer):
    clone = type(layer).from_config(layer.get_config())
    assert clone.get_config() == layer.get_config()


def test_d_model_must_divide_by_num_heads():
    with pytest.raises(ValueError, match=r"d_model must be divisible by num_heads \(4\).*got 10"):
        settings(d_model=10, num_heads=4, d_ff=32)


@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder_layer_step_equals_full_pass(norm_first):
    layer = DecoderLayer(
        settings(d_model=16, num_heads=4, d_ff=32, dropout=0.0, norm_first=norm_first)
    )
    x, memory = tf.random.normal([2, 5, 16]), tf.random.normal([2, 3, 16])
    memory_mask = tf.constant([[[[True, True, False]]], [[[True, True, True]]]])
    full = layer(x, memory, memory_mask=memory_mask)
    memory_heads = layer.cross_attention.project_keys_values(memory, memory)
    empty = tf.zeros([2, 4, 5, 4])
    cache = (empty, empty)
    for index in range(5):
        step, cache = layer.step(
            x[:, index : index + 1], tf.constant(index), cache, memory_heads, memory_mask
        )
        np.testing.assert_allclose(step[:, 0], full[:, index], atol=1e-5)
