"""bfloat16 decoding: the copy model's translations and scores as in float32 (its export records
the precision: tests/inference/test_shortlist.py)."""

import keras
import numpy as np
import pytest

from decoding.translator import ModelTranslator
from inference.loading import load_translator


@pytest.fixture(scope="module")
def bfloat16_copy(copy_translators, bfloat16_copy_model) -> ModelTranslator:
    """The copy model's beam-4 translator with its matrix products in bfloat16."""
    translator, _ = copy_translators[4]
    options = translator.options
    return ModelTranslator(bfloat16_copy_model, translator.tokenizer, options, max_source_length=48)


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
