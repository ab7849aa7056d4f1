"""LiteRT exports: builtin operators only, the translations of TensorFlow's search, the scripts."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

from common.translation import truncation_warnings
from data_pipeline import Tokenizer
from data_pipeline.tokenizer import train_sentencepiece
from decoding.options import SearchOptions
from decoding.translator import ModelTranslator
from exports.contract import LITERT_QUANTIZATIONS, SENTENCEPIECE_OPS, ExportError
from exports.litert import LiteRTTranslator, model_ops, text_translation
from inference.litert_export import export_litert
from inference.loading import load_translator
from tests.script_runner import run_in_process, run_without_tensorflow

SENTENCES = ["Ein Hund rennt.", "Zwei Männer spielen Fußball auf einer grünen Wiese.", "Ja", ""]


@pytest.fixture(scope="module")
def copy_exports(copy_translators, tmp_path_factory) -> dict[int, str]:
    """``beam_size -> path``: the copy model's float32 LiteRT export of each search."""
    directory = tmp_path_factory.mktemp("litert")
    return {
        beam_size: export_litert(translator, str(directory / f"beam{beam_size}"))
        for beam_size, (translator, _) in copy_translators.items()
    }


@pytest.mark.parametrize("beam_size", [1, 4])
@pytest.mark.parametrize("batch_size", [1, 7, 64])
def test_translations_equal_tensorflow(
    beam_size, batch_size, copy_translators, copy_exports, validation_sentences
):
    """Batch 1, a batch of 7 (the last one shorter) and 64: each sentence as TensorFlow's
    search translates it (padding in a batch changes nothing)."""
    expected = copy_translators[beam_size][1]
    translator = LiteRTTranslator(copy_exports[beam_size], threads=1)
    sentences = validation_sentences[:40] if batch_size == 1 else validation_sentences
    translations = translator.translate(sentences, batch_size=batch_size, progress=False)
    assert translations == expected[: len(sentences)]


def test_the_model_has_builtin_operators_only(copy_exports):
    path = copy_exports[4]
    with open(os.path.join(path, "model.tflite"), "rb") as file:
        ops = model_ops(file.read())
    assert {"WHILE", "TOPK_V2", "FULLY_CONNECTED"} <= set(ops)
    assert not [op for op in ops if op.startswith("CUSTOM")]
    with open(os.path.join(path, "litert.json"), encoding="utf-8") as file:
        settings = json.load(file)
    assert settings["ops"] == ops
    assert settings["signatures"] == {
        "translate_ids": {"inputs": ["source_ids"], "outputs": ["output_ids"]}
    }
    assert (settings["beam_size"], settings["quantization"]) == (4, "float32")


# The share of the copy model's beam-4 translations of validation_sentences that a quantized
# export gives as the float32 export does: a few points under the share measured (2026-12-05,
# AMD EPYC Zen 4): float16 1.0, dynamic_int8 0.975.
AGREEMENT_AT_LEAST = {"float16": 0.98, "dynamic_int8": 0.92}


@pytest.mark.parametrize("quantization", ["dynamic_int8"])
def test_quantized_exports_are_smaller_and_agree(
    quantization, copy_translators, copy_exports, validation_sentences, tmp_path
):
    translator, expected = copy_translators[4]
    path = export_litert(translator, str(tmp_path / quantization), quantization)
    sizes = [os.path.getsize(os.path.join(p, "model.tflite")) for p in (path, copy_exports[4])]
    assert sizes[0] < 0.6 * sizes[1]
    translations = LiteRTTranslator(path, threads=1).translate(validation_sentences, progress=False)
    equal = np.mean([a == b for a, b in zip(translations, expected, strict=True)])
    assert equal >= AGREEMENT_AT_LEAST[quantization], f"{equal:.1%} equal"


def test_what_the_search_in_the_file_lacks_is_a_clear_error(copy_exports):
    from common.translation import RequestError, Sampling, TranslationRequest

    translator = LiteRTTranslator(copy_exports[4], threads=1)
    with pytest.raises(RequestError, match="N-best lists and scores: a LiteRT export"):
        translator.hypotheses(SENTENCES)
    with pytest.raises(RequestError, match="Sampling and target prefixes"):
        translator.translate(SENTENCES, TranslationRequest(sampling=Sampling(top_k=5)))
    with pytest.raises(RequestError, match="Forced scores"):
        translator.score(SENTENCES, SENTENCES)
    with pytest.raises(ExportError, match="has no translate_text signature: export it again"):
        text_translation(copy_exports[4])


def test_a_bad_quantization_or_directory_is_a_clear_error(copy_translators, tmp_path):
    translator = copy_translators[1][0]
    with pytest.raises(ExportError, match="--quantization=int8 is not one of float32, float16"):
        export_litert(translator, str(tmp_path / "x"), "int8")
    assert not (tmp_path / "x").exists()
    with pytest.raises(FileNotFoundError, match="No litert.json in .*: it is not a LiteRT export"):
        LiteRTTranslator(str(tmp_path))
    assert LITERT_QUANTIZATIONS == ("float32", "float16", "dynamic_int8")


def test_the_text_signature_translates_each_sentence_as_the_ids_signature(
    copy_translators, validation_sentences, tmp_path
):
    """Tokenized and detokenized in the model by tensorflow_text's ops (the only custom ones),
    one sentence a call: the translations of the ids signature with SentencePiece in Python."""
    translator = copy_translators[4][0]
    path = export_litert(translator, str(tmp_path / "text"), text_signature=True)
    with open(os.path.join(path, "model.tflite"), "rb") as file:
        ops = model_ops(file.read())
    assert [op for op in ops if op.startswith("CUSTOM")] == list(SENTENCEPIECE_OPS)
    translate = text_translation(path, threads=1)
    sentences = validation_sentences[:60] + ["", " ".join(["Hund"] * 60)]  # empty, truncated
    by_text = [translate(sentence) for sentence in sentences]
    by_ids = LiteRTTranslator(path, threads=1).translate(sentences, batch_size=1, progress=False)
    assert by_text[-2:] == by_ids[-2:]
    # The pieces are the same (benchmarks/litert_sentencepiece.py: 100 % on test2016), but the
    # two signatures are two graphs whose float results need not agree to the bit: a near-tie
    # of the copy model went the other way in 1 of 60 sentences when the suite ran in two
    # processes (the copy model then trains with other thread counts), in none run alone.
    assert np.mean([a == b for a, b in zip(by_text, by_ids, strict=True)]) >= 0.95


def test_a_text_signature_is_refused_for_a_bpe_model_in_one_line(
    copy_model, validation_sentences, tmp_path
):
    model_path = train_sentencepiece(validation_sentences, str(tmp_path / "bpe"), 600, "bpe")
    translator = ModelTranslator(copy_model, Tokenizer.from_file(model_path))
    with pytest.raises(ExportError, match="--litert_text needs a unigram SentencePiece model"):
        export_litert(translator, str(tmp_path / "litert"), text_signature=True)
    assert not (tmp_path / "litert").exists()


def test_running_an_export_imports_no_tensorflow(copy_exports):
    path = copy_exports[1]
    expected = LiteRTTranslator(path, threads=1).translate(SENTENCES, progress=False)
    script = (
        "from exports.litert import LiteRTTranslator\n"
        f"translator = LiteRTTranslator({path!r} + '/model.tflite', threads=1)\n"
        f"print(repr(translator.translate({SENTENCES!r}, progress=False)))\n"
    )
    assert run_without_tensorflow(script) == [repr(expected)]


def test_a_multilingual_export_translates_into_each_language(tiny_multilingual_run, tmp_path):
    from common.language_tags import UnknownLanguageError
    from common.translation import TranslationRequest

    translator, _ = load_translator(tiny_multilingual_run[0], "latest", jit_compile=False)
    litert = LiteRTTranslator(export_litert(translator, str(tmp_path / "litert")), threads=1)
    assert litert.languages == translator.languages == ("de", "en", "fr")
    for language in ("en", "fr"):
        request = TranslationRequest(target_lang=language)
        assert litert.translate(SENTENCES, request, progress=False) == translator.translate(
            SENTENCES, request, progress=False
        )
    with pytest.raises(UnknownLanguageError, match="Unknown target language 'cs'"):
        litert.translate(SENTENCES, TranslationRequest(target_lang="cs"))
    with pytest.raises(ExportError, match="--litert_text cannot take a multilingual model's"):
        export_litert(translator, str(tmp_path / "text"), text_signature=True)


def test_export_translate_and_evaluate_scripts(tiny_run, tmp_path):
    workdir, export = tiny_run[0], str(tmp_path / "litert_int8")
    completed = run_in_process(
        "export.py",
        f"--workdir={workdir}",
        "--checkpoint=latest",
        "--format=litert",
        "--quantization=dynamic_int8",
        f"--output={export}",
    )
    assert completed.returncode == 0, completed.stderr
    assert f"Translate with it:  python translate.py --litert={export}" in completed.stdout
    inputs = tmp_path / "in.txt"
    inputs.write_text("\n".join(SENTENCES) + "\n", encoding="utf-8")
    translated = run_in_process(
        "translate.py", f"--litert={export}/model.tflite", f"--input={inputs}"
    )
    assert translated.returncode == 0, translated.stderr
    expected = LiteRTTranslator(export).translate(SENTENCES, progress=False)
    assert translated.stdout.splitlines() == expected

    evaluated = run_in_process(
        "evaluate.py", f"--workdir={workdir}", f"--litert={export}", "--split=validation"
    )
    assert evaluated.returncode == 0, evaluated.stderr
    assert "(dynamic_int8) on multi30k/de-en validation (beam 1" in evaluated.stdout
    assert "mean confidence" not in evaluated.stdout  # the search in the file gives no scores
    eval_dir = os.path.join(workdir, "eval", "litert-litert_int8")
    assert os.path.exists(os.path.join(eval_dir, "multi30k_de-en.validation.beam1.hyp"))


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["translate.py", "--litert=/nonexistent"], "No litert.json in /nonexistent"),
        (["translate.py", "--litert=L", "--beam_size=2"], "--beam_size needs --workdir"),
        (["translate.py", "--litert=L", "--workdir=W"], "give exactly one of"),
        (["export.py", "--workdir=W", "--output=o", "--format=litert", "--quantization=int8"],
         "--quantization=int8 is not one of float32, float16, dynamic_int8 for --format=litert"),
        (["evaluate.py", "--workdir=W", "--litert=L", "--beam_size=2"], "--litert translates"),
        (["export.py", "--workdir=W", "--output=o", "--litert_text"], "--litert_text needs --form"),
    ],
)  # fmt: skip
def test_script_errors_are_one_line(arguments, message, tiny_run, copy_exports):
    replaced = [
        argument.replace("=W", f"={tiny_run[0]}").replace("=L", f"={copy_exports[1]}")
        for argument in arguments
    ]
    completed = run_in_process(*replaced)
    assert completed.returncode != 0
    assert completed.stderr.strip().splitlines()[-1].startswith("error: ")
    assert message in completed.stderr


def test_a_model_translator_of_other_options_exports_them(copy_model, tokenizer, tmp_path):
    """The export's search is the translator's: its beam and length penalty, recorded."""
    options = SearchOptions(beam_size=3, length_penalty=1.2)
    translator = ModelTranslator(copy_model, tokenizer, options, max_source_length=24)
    path = export_litert(translator, str(tmp_path / "litert"))
    litert = LiteRTTranslator(path, threads=1)
    assert (litert.beam_size, litert.settings.length_penalty) == (3, 1.2)
    long_sentence = " ".join(["Hund"] * 40)
    warnings = truncation_warnings(litert, [long_sentence, "Ja"])
    assert warnings and warnings == truncation_warnings(translator, [long_sentence, "Ja"])
    assert litert.translate(SENTENCES + [long_sentence], progress=False) == translator.translate(
        SENTENCES + [long_sentence], progress=False
    )
