import numpy as np
import pytest
import tensorflow as tf

from common.translation import truncation_warnings
from decoding.options import SearchOptions
from decoding.translator import ModelTranslator, pad_to_buckets, request_columns
from inference.loading import load_model


@pytest.mark.parametrize(
    "shape, padded_shape",
    [
        ((1, 5), (1, 16)),
        ((2, 16), (2, 16)),
        ((3, 17), (4, 32)),
        ((64, 9), (64, 16)),
        ((65, 1), (128, 16)),
    ],
)
def test_pad_to_buckets_pads_batch_to_a_power_of_two_and_length_to_the_bucket(shape, padded_shape):
    ids = tf.fill(shape, 7)
    padded = pad_to_buckets(ids, length_bucket=16)
    assert tuple(padded.shape) == padded_shape
    np.testing.assert_array_equal(padded[: shape[0], : shape[1]], ids)
    assert not tf.reduce_any(padded[: shape[0], shape[1] :] != 0)
    # Added rows are empty sentences: EOS, then padding.
    extra = padded[shape[0] :].numpy()
    assert (extra[:, 0] == 3).all() and (extra[:, 1:] == 0).all()


@pytest.mark.parametrize("beam_size, xla_max_batch_size", [(3, 8), (1, 2)])
def test_the_xla_compiled_search_translates_as_the_graph_one(
    tiny_run, beam_size, xla_max_batch_size
):
    """Batches of 3 and 1: beam search under XLA both; greedy search (largest XLA batch 2) the
    first in the graph, the second under XLA."""
    workdir, _ = tiny_run
    model, tokenizer, _ = load_model(workdir, "latest")
    sentences = ["Ein Hund rennt.", "", "Zwei Männer stehen auf einer Straße und reden.", "Ja"]
    translations = {
        jit: ModelTranslator(
            model,
            tokenizer,
            SearchOptions(beam_size=beam_size),
            max_source_length=32,
            jit_compile=jit,
            length_bucket=8,
            xla_max_batch_size=xla_max_batch_size,
        ).translate(sentences, batch_size=3, progress=False)
        for jit in (False, True)
    }
    assert translations[True] == translations[False]
    assert any(translations[True])


def test_truncation_warnings_name_each_sentence_longer_than_the_model_reads(tiny_run):
    workdir, _ = tiny_run
    model, tokenizer, _ = load_model(workdir, "latest")
    translator = ModelTranslator(model, tokenizer, max_source_length=6)
    long_sentence = "Zwei Männer stehen auf einer Straße und reden."
    warnings = truncation_warnings(translator, ["Ja", long_sentence, ""])
    assert len(warnings) == 1 and warnings[0].startswith("warning: sentence 2 has ")
    assert warnings[0].endswith("tokens; only the first 5 are translated.")
    assert truncation_warnings(translator, []) == []


def test_cross_attention_returns_the_translation_its_pieces_and_one_map_per_head(tiny_run):
    workdir, _ = tiny_run
    model, tokenizer, _ = load_model(workdir, "latest")
    translator = ModelTranslator(model, tokenizer, max_source_length=32)
    sentences = ["Ein Hund rennt über die Wiese.", "Ja"]
    outputs = translator.cross_attention(*request_columns(sentences, None))
    assert [t.decode() for t in outputs.translation.numpy()] == translator.translate(
        sentences, progress=False
    )
    attention = outputs.attention.numpy()
    assert attention.shape[:2] == (2, model.config.num_heads)
    for row, sentence in enumerate(sentences):
        source = [p.decode() for p in outputs.source_pieces[row].numpy() if p]
        target = [p.decode() for p in outputs.target_pieces[row].numpy() if p]
        expected_source = tokenizer.id_to_piece(tokenizer.tokenize([sentence])[0]).numpy()
        assert source == [p.decode() for p in expected_source] + ["</s>"]
        assert target and len(target) <= attention.shape[2]
        weights = attention[row]
        # Each real output piece's weights over the real source pieces sum to one; padding is 0.
        np.testing.assert_allclose(weights[:, : len(target), : len(source)].sum(-1), 1, rtol=1e-5)
        assert weights[:, len(target) :].sum() == 0 and weights[:, :, len(source) :].sum() == 0
