"""bfloat16 decoding: the copy model's translations and scores as in float32, and the precision
recorded in its export."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from decoding.translator import ModelTranslator
from exports.contract import PRECISION_VARIABLE
from exports.saved_model import SavedModelTranslator
from inference.export import export_saved_model
from inference.loading import load_translator
from transformer import Transformer


@pytest.fixture(scope="module")
def bfloat16_copy(copy_translators) -> ModelTranslator:
    """The copy model's beam-4 translator with its matrix products in bfloat16."""
    translator, _ = copy_translators[4]
    model = Transformer(translator.model.config, dtype="mixed_bfloat16")
    model((tf.ones([1, 2], tf.int32), tf.ones([1, 2], tf.int32)))
    model.set_weights(translator.model.get_weights())
    return ModelTranslator(model, translator.tokenizer, translator.options, max_source_length=48)


def test_bfloat16_translates_as_float32_within_tolerance(
    copy_translators, bfloat16_copy, validation_sentences
):
    translator, plain = copy_translators[4]
    sentences = validation_sentences[:32]
    assert bfloat16_copy.precision == "bfloat16" and translator.precision == "float32"
    translations = bfloat16_copy.translate(sentences, progress=False)
    same = sum(ours == theirs for ours, theirs in zip(translations, plain, strict=False))
    assert same >= 30, (same, translations)
    float32 = translator.score(sentences, plain[:32], progress=False)
    bfloat16 = bfloat16_copy.score(sentences, plain[:32], progress=False)
    for full, half in zip(float32, bfloat16, strict=True):
        assert half.log_prob == pytest.approx(full.log_prob, abs=0.05 * full.length)
    assert not np.allclose([h.log_prob for h in bfloat16], [h.log_prob for h in float32])


def test_the_export_records_its_precision(bfloat16_copy, validation_sentences, tmp_path):
    path = export_saved_model(bfloat16_copy, str(tmp_path / "bfloat16"))
    recorded = getattr(tf.saved_model.load(path), PRECISION_VARIABLE).numpy().decode()
    assert recorded == "bfloat16"
    sentences = validation_sentences[:8]
    expected = bfloat16_copy.translate(sentences, progress=False)
    assert SavedModelTranslator(path).translate(sentences, progress=False) == expected


def test_a_work_directory_loads_in_bfloat16_and_refuses_another_precision(tiny_run):
    translator, _ = load_translator(tiny_run[0], "latest", precision="bfloat16")
    assert translator.model.compute_dtype == "bfloat16"
    assert translator.model.variable_dtype == "float32"
    assert translator.translate(["Ein Hund rennt."], progress=False)[0]
    with pytest.raises(ValueError, match="precision must be one of"):
        load_translator(tiny_run[0], "latest", precision="float16")
    assert keras.mixed_precision.global_policy().name == "float32"


def test_bfloat16_on_a_cpu_that_emulates_it_is_warned_about(tiny_run, monkeypatch, caplog):
    monkeypatch.setattr("inference.loading.read_cpuinfo", lambda: "flags : avx2 fma")
    load_translator(tiny_run[0], "latest", precision="bfloat16")
    assert "decodes slower than float32" in caplog.text
    caplog.clear()
    load_translator(tiny_run[0], "latest")
    assert "bfloat16" not in caplog.text
