import keras
import numpy as np
import pytest
import tensorflow as tf

from transformer.classifier import TextClassifier
from transformer.settings import SettingError, TransformerConfig

VOCAB = 40


def tiny_config(**overrides) -> TransformerConfig:
    args = dict(source_vocab_size=VOCAB, num_layers=2, d_model=16, num_heads=4, d_ff=32)
    return TransformerConfig(**{**args, "dropout": 0.0, **overrides})


@pytest.mark.parametrize("num_classes, width", [(2, 1), (5, 5)])
@pytest.mark.parametrize("pooling", ["mean", "first"])
def test_logits_are_float32_one_for_two_classes_one_a_class_for_more(num_classes, width, pooling):
    model = TextClassifier(tiny_config(), num_classes=num_classes, pooling=pooling)
    logits = model(tf.constant([[5, 6, 7, 0], [8, 9, 0, 0]]))
    assert logits.shape == (2, width) and logits.dtype == tf.float32


@pytest.mark.parametrize("pooling", ["mean", "first"])
@pytest.mark.parametrize("norm_first", [False, True])
def test_padding_changes_no_logit(pooling, norm_first):
    model = TextClassifier(tiny_config(norm_first=norm_first), pooling=pooling)
    ids = np.array([[5, 6, 7, 8], [9, 10, 0, 0]])
    padded = np.pad(ids, [[0, 0], [0, 5]])
    np.testing.assert_allclose(model(tf.constant(padded)), model(tf.constant(ids)), atol=1e-5)


def test_the_mean_reads_every_token_and_the_first_token_its_context():
    mean, first = (TextClassifier(tiny_config(), pooling=p) for p in ("mean", "first"))
    ids, changed = tf.constant([[5, 6, 7, 8]]), tf.constant([[5, 6, 7, 9]])
    for model in (mean, first):  # the last token reaches the pooled vector either way
        assert np.abs(model(ids) - model(changed)).max() > 1e-5


def test_bad_settings_are_named():
    with pytest.raises(SettingError, match="num_classes must be an integer of at least 2"):
        TextClassifier(tiny_config(), num_classes=1)
    with pytest.raises(SettingError, match="pooling must be one of"):
        TextClassifier(tiny_config(), pooling="max")
    with pytest.raises(TypeError, match="config must be a TransformerConfig"):
        TextClassifier({"d_model": 16})


def test_the_config_round_trips():
    model = TextClassifier(tiny_config(), num_classes=3, pooling="first", name="spam")
    again = TextClassifier.from_config(model.get_config())
    assert (again.config, again.num_classes, again.pooling) == (model.config, 3, "first")


def test_it_learns_which_texts_hold_a_token():
    """Texts holding token 7 are class 1: a few hundred steps separate the classes."""
    keras.utils.set_random_seed(0)
    rng = np.random.default_rng(0)
    ids = rng.integers(8, VOCAB, size=(256, 10))
    labels = rng.integers(0, 2, size=256)
    ids[labels == 1, rng.integers(0, 10, size=int(labels.sum()))] = 7
    model = TextClassifier(tiny_config())
    model.compile(keras.optimizers.Adam(3e-3), keras.losses.BinaryCrossentropy(from_logits=True))
    model.fit(ids, labels[:, None].astype("float32"), batch_size=32, epochs=15, verbose=0)
    predicted = (model(tf.constant(ids)).numpy()[:, 0] > 0).astype(int)
    assert (predicted == labels).mean() > 0.95


@pytest.mark.parametrize("pooling", ["mean", "first"])
def test_the_pooled_attention_is_what_the_pooled_vector_attended_to(pooling):
    model = TextClassifier(tiny_config(), pooling=pooling)
    ids = tf.constant([[5, 6, 7, 8], [9, 10, 0, 0]])
    logits, weights = model(ids, return_attention_scores=True)
    np.testing.assert_array_equal(logits, model(ids))
    assert weights.shape == (2, 4, 4, 4)  # (batch, heads, queries, keys)
    pooled = model.pooled_attention(ids, weights).numpy()
    assert pooled.shape == (2, 4, 4)
    np.testing.assert_allclose(pooled.sum(axis=-1), 1.0, atol=1e-6)
    np.testing.assert_allclose(pooled[1, :, 2:], 0.0, atol=1e-7)  # no weight on padding
    # "first": the first token's row; "mean": the mean of the text's own rows (not padding's).
    expected = weights[1, :, 0] if pooling == "first" else weights[1, :, :2].numpy().mean(axis=1)
    np.testing.assert_allclose(pooled[1], expected, atol=1e-6)
