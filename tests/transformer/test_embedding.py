import numpy as np
import pytest
import tensorflow as tf

from transformer.embedding import TokenEmbedding, positional_encoding


def test_positional_encoding_is_the_papers_interleaved_sinusoid():
    depth, positions = 16, np.arange(7)
    encoding = positional_encoding(tf.constant(positions), depth).numpy()
    expected = np.zeros([7, depth])
    for pos in positions:
        for i in range(depth // 2):
            expected[pos, 2 * i] = np.sin(pos / 10000 ** (2 * i / depth))
            expected[pos, 2 * i + 1] = np.cos(pos / 10000 ** (2 * i / depth))
    np.testing.assert_allclose(encoding, expected, atol=1e-5)


def test_positional_encoding_rejects_odd_depth():
    with pytest.raises(ValueError, match="even depth"):
        positional_encoding(tf.range(3), 15)


def test_token_embedding_scales_by_sqrt_d_model_and_adds_positions():
    embed = TokenEmbedding(vocab_size=10, d_model=8)
    ids = tf.constant([[3, 4, 5]])
    output = embed(ids).numpy()
    table = embed.embedding.embeddings.numpy()
    expected = table[[3, 4, 5]] * np.sqrt(8) + positional_encoding(tf.range(3), 8).numpy()
    np.testing.assert_allclose(output[0], expected, atol=1e-5)
    # One position at a time (incremental decoding) gives the same vectors.
    np.testing.assert_allclose(
        embed(ids[:, 2:], positions=tf.constant([2]))[0, 0], expected[2], atol=1e-5
    )


def test_tied_logits_use_the_embedding_matrix():
    embed = TokenEmbedding(vocab_size=10, d_model=8)
    embed(tf.constant([[1]]))
    states = tf.random.normal([2, 3, 8])
    expected = states.numpy() @ embed.embedding.embeddings.numpy().T  # (2, 3, vocab)
    np.testing.assert_allclose(embed.logits(states), expected, atol=1e-5)
    np.testing.assert_allclose(embed.vocab_major_logits(states[:, 0]), expected[:, 0].T, atol=1e-5)
