import keras
import numpy as np
import pytest
import tensorflow as tf

from transformer.model import Transformer
from transformer.settings import TransformerConfig

VOCAB = 50


def tiny_model(**overrides) -> Transformer:
    args = dict(
        source_vocab_size=VOCAB, num_layers=2, d_model=16, num_heads=4, d_ff=32, dropout=0.0
    )
    return Transformer(TransformerConfig(**{**args, **overrides}))


def random_ids(rng, shape, vocab_size=VOCAB):
    """Ids of real tokens: 0 is padding and 1-3 are reserved."""
    return tf.constant(rng.integers(4, vocab_size, size=shape), tf.int32)


def test_call_returns_float32_logits_of_the_target_vocabulary():
    model = tiny_model(target_vocab_size=30, shared_embeddings="target")
    rng = np.random.default_rng(0)
    logits = model((random_ids(rng, [3, 7]), random_ids(rng, [3, 5], 30)))
    assert logits.shape == (3, 5, 30) and logits.dtype == tf.float32


@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder_is_causal(norm_first):
    """Changing target token t changes no logit before t (no attending to the future)."""
    model = tiny_model(norm_first=norm_first)
    rng = np.random.default_rng(1)
    source, target = random_ids(rng, [2, 6]), random_ids(rng, [2, 8]).numpy()
    before = model((source, tf.constant(target))).numpy()
    for t in (1, 4, 7):
        changed = target.copy()
        changed[:, t] = (changed[:, t] + 7) % (VOCAB - 4) + 4
        after = model((source, tf.constant(changed))).numpy()
        np.testing.assert_array_equal(after[:, :t], before[:, :t])
        assert np.abs(after[:, t:] - before[:, t:]).max() > 1e-4  # the change itself is seen


def test_extra_source_padding_changes_nothing():
    model = tiny_model()
    rng = np.random.default_rng(2)
    source, target = random_ids(rng, [2, 6]).numpy(), random_ids(rng, [2, 5])
    source[1, 4:] = 0  # the second sentence is already padded
    padded = np.concatenate([source, np.zeros([2, 9], np.int32)], axis=1)
    np.testing.assert_allclose(
        model((tf.constant(padded), target)), model((tf.constant(source), target)), atol=1e-5
    )


def test_target_padding_keys_are_masked():
    model = tiny_model()
    rng = np.random.default_rng(3)
    source, target = random_ids(rng, [1, 5]), random_ids(rng, [1, 4]).numpy()
    padded = np.concatenate([target, np.zeros([1, 3], np.int32)], axis=1)
    np.testing.assert_allclose(
        model((source, tf.constant(padded)))[:, :4], model((source, tf.constant(target))), atol=1e-5
    )


@pytest.mark.parametrize(
    "overrides",
    [
        {},
        {"norm_first": True},
        {"shared_embeddings": "none", "target_vocab_size": 40},
        {"num_layers": 3, "num_decoder_layers": 1, "norm_first": True},
    ],
)
@pytest.mark.parametrize("max_length", [9, None])  # a buffer longer than needed; growing
def test_incremental_decoding_equals_full_pass_step_by_step(overrides, max_length):
    model = tiny_model(**overrides)
    rng = np.random.default_rng(4)
    source = random_ids(rng, [3, 6]).numpy()
    source[0, 3:] = 0
    source = tf.constant(source)
    target = random_ids(rng, [3, 7], model.config.target_vocab_size)
    full = model((source, target))
    memory, memory_mask = model.encode(source)
    cache = model.init_cache(memory, memory_mask, max_length)
    for index in range(7):
        logits, cache = model.decode_step(
            target[:, index], tf.constant(index), cache, growing=max_length is None
        )
        np.testing.assert_allclose(tf.transpose(logits), full[:, index], atol=1e-5)
        assert cache["self"][0][0].shape[2] == (max_length or index + 1)


@pytest.mark.parametrize("overrides", [{}, {"shared_embeddings": "none", "target_vocab_size": 40}])
def test_a_step_scores_the_output_ids_it_is_given_alone(overrides):
    """A vocabulary shortlist: row i of the logits is token ``output_ids[i]``'s full logit."""
    model = tiny_model(**overrides)
    memory, memory_mask = model.encode(tf.constant([[5, 6, 7, 3], [8, 9, 3, 0]]))
    cache = model.init_cache(memory, memory_mask, None)
    tokens, index = tf.constant([2, 2]), tf.constant(0)
    full, _ = model.decode_step(tokens, index, cache, growing=True)
    output_ids = tf.constant([3, 17, 0, 9, 30])
    logits, _ = model.decode_step(tokens, index, cache, growing=True, output_ids=output_ids)
    assert logits.shape == (5, 2)
    np.testing.assert_allclose(logits, tf.gather(full, output_ids), atol=1e-5)


@pytest.mark.parametrize(
    "max_length, growing, message",
    [(None, False, "a growing cache needs growing=True"), (4, True, "exactly 1 positions")],
)
def test_a_step_with_the_wrong_kind_of_cache_fails_clearly(max_length, growing, message):
    model = tiny_model()
    memory, memory_mask = model.encode(tf.constant([[5, 6, 3]]))
    cache = model.init_cache(memory, memory_mask, max_length)
    _, cache = model.decode_step(tf.constant([2]), tf.constant(0), cache, growing=not growing)
    with pytest.raises(ValueError, match=message):
        model.decode_step(tf.constant([7]), tf.constant(1), cache, growing=growing)


def test_incremental_decoding_works_inside_a_compiled_loop():
    model = tiny_model()
    rng = np.random.default_rng(5)
    source, target = random_ids(rng, [2, 5]), random_ids(rng, [2, 6])
    full = model((source, target))

    @tf.function(jit_compile=True)
    def run(source, target):
        memory, memory_mask = model.encode(source)
        cache = model.init_cache(memory, memory_mask, max_length=6)
        logits = tf.TensorArray(tf.float32, size=6)
        for index in tf.range(6):
            step_logits, cache = model.decode_step(target[:, index], index, cache)
            logits = logits.write(index, step_logits)  # (vocab, batch)
        return tf.transpose(logits.stack(), [2, 0, 1])

    np.testing.assert_allclose(run(source, target), full, atol=1e-5)


@pytest.mark.parametrize("policy", ["mixed_float16", "mixed_bfloat16"])
def test_mixed_precision_model_is_finite_with_padding(policy):
    keras.mixed_precision.set_global_policy(policy)
    model = tiny_model()
    rng = np.random.default_rng(6)
    source = random_ids(rng, [2, 6]).numpy()
    source[1, :] = 0  # an all-padding source: every cross-attention row is fully masked
    target = random_ids(rng, [2, 5]).numpy()
    target[0, 3:] = 0
    logits = model((tf.constant(source), tf.constant(target)))
    assert logits.dtype == tf.float32
    assert np.all(np.isfinite(logits))


def test_decode_returns_cross_attention_of_every_layer():
    model = tiny_model()
    rng = np.random.default_rng(7)
    memory, memory_mask = model.encode(random_ids(rng, [2, 6]))
    _, weights = model.decode(
        random_ids(rng, [2, 4]), memory, memory_mask, return_attention_scores=True
    )
    assert len(weights) == 2 and weights[-1].shape == (2, 4, 4, 6)
    np.testing.assert_allclose(tf.reduce_sum(weights[-1], -1), 1.0, atol=1e-5)


def test_encoder_and_decoder_depths_can_differ():
    model = tiny_model(num_layers=3, num_decoder_layers=1)
    model((tf.constant([[5, 6]]), tf.constant([[7]])))
    assert (len(model.encoder_layers), len(model.decoder_layers)) == (3, 1)
    assert len(tiny_model(num_layers=3).decoder_layers) == 3  # the default: num_layers
    with pytest.raises(ValueError, match="num_decoder_layers must be a positive integer, got 0"):
        tiny_model(num_decoder_layers=0)


def test_get_config_round_trip_gives_the_same_model():
    model = tiny_model(
        norm_first=True, shared_embeddings="target", target_vocab_size=30, num_decoder_layers=1
    )
    rng = np.random.default_rng(8)
    inputs = (random_ids(rng, [2, 5]), random_ids(rng, [2, 4], 30))
    expected = model(inputs)
    clone = Transformer.from_config(model.get_config())
    assert clone.get_config() == model.get_config()
    clone(inputs)
    clone.set_weights(model.get_weights())
    np.testing.assert_allclose(clone(inputs), expected, atol=1e-6)


@pytest.mark.parametrize(
    "overrides, message",
    [
        ({"d_model": 18}, r"d_model must be divisible by num_heads \(4\).*got 18"),
        ({"dropout": 1.5}, "dropout must be a number"),
        ({"attention_dropout": 1.0}, "attention_dropout must be a number"),
        ({"activation_dropout": -0.1}, "activation_dropout must be a number"),
        ({"shared_embeddings": "all", "target_vocab_size": 30}, "'all' needs one joint vocabulary"),
        ({"shared_embeddings": "some"}, "shared_embeddings must be one of"),
        ({"num_layers": 0}, "num_layers must be a positive integer"),
    ],
)
def test_bad_hyper_parameters_fail_with_clear_messages(overrides, message):
    with pytest.raises(ValueError, match=message):
        tiny_model(**overrides)


def test_attention_and_activation_dropout_default_to_dropout_and_reach_their_layers():
    default = tiny_model(dropout=0.3)
    split = tiny_model(dropout=0.3, attention_dropout=0.1, activation_dropout=0.0)
    for model, attention_rate, activation_rate in ((default, 0.3, 0.3), (split, 0.1, 0.0)):
        assert model.embedding_dropout.rate == 0.3
        for layer in model.encoder_layers + model.decoder_layers:
            assert layer.residual_dropout.rate == 0.3
            assert layer.self_attention.weights_dropout.rate == attention_rate
            assert layer.feed_forward.hidden_dropout.rate == activation_rate
        for layer in model.decoder_layers:
            assert layer.cross_attention.weights_dropout.rate == attention_rate
    clone = Transformer.from_config(split.get_config())
    assert (clone.config.attention_dropout, clone.config.activation_dropout) == (0.1, 0.0)


@pytest.mark.parametrize("rate_name", ["attention_dropout", "activation_dropout"])
def test_attention_or_activation_dropout_alone_makes_training_outputs_random(rate_name):
    """Every other rate at 0: the named one alone changes training-mode logits; at 0 as well,
    training mode gives the inference logits."""
    rng = np.random.default_rng(5)
    inputs = (random_ids(rng, [2, 6]), random_ids(rng, [2, 5]))
    keras.utils.set_random_seed(0)
    noisy = tiny_model(**{"attention_dropout": 0.0, "activation_dropout": 0.0, rate_name: 0.5})
    inference = noisy(inputs).numpy()
    assert not np.allclose(noisy(inputs, training=True), inference, atol=1e-3)
    quiet = tiny_model(attention_dropout=0.0, activation_dropout=0.0)
    quiet(inputs)
    quiet.set_weights(noisy.get_weights())
    np.testing.assert_allclose(quiet(inputs, training=True), inference, atol=1e-5)
