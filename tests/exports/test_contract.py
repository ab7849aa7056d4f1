"""The exports are written as ``exports.contract`` names them, read back with TensorFlow alone."""

import os
import subprocess
import sys

import pytest
import tensorflow as tf

from exports.contract import (
    BEAM_SIZE_VARIABLE,
    CTRANSLATE2_MODEL_FILE,
    DECODING_FILE,
    LANGUAGES_VARIABLE,
    MAX_SOURCE_LENGTH_VARIABLE,
    SIGNATURE_OUTPUTS,
    SOURCE_LENGTHS,
    TOKENIZER_FILE,
    DecodingSettings,
    signature_inputs,
)
from tests.script_runner import REPO_ROOT

_DTYPES = {"DT_STRING": tf.string, "DT_FLOAT": tf.float32, "DT_INT32": tf.int32}


@pytest.mark.slow  # its exports come through request.getfixturevalue
@pytest.mark.parametrize("export", ["tiny_saved_model", "tiny_multilingual_saved_model"])
def test_a_saved_model_has_the_contracts_signatures_inputs_outputs_and_variables(export, request):
    import tensorflow_text  # noqa: F401  (the SentencePiece ops of the graph)

    loaded = tf.saved_model.load(request.getfixturevalue(export))
    multilingual = export == "tiny_multilingual_saved_model"
    languages = tuple(v.decode() for v in loaded.languages_variable.numpy()) if multilingual else ()
    assert hasattr(loaded, LANGUAGES_VARIABLE) == multilingual
    assert set(loaded.signatures) == set(SIGNATURE_OUTPUTS)
    for name, outputs in SIGNATURE_OUTPUTS.items():
        signature = loaded.signatures[name]
        _, inputs = signature.structured_input_signature
        assert sorted(inputs) == list(signature_inputs(languages, name)), name
        assert all(spec.shape.rank == 1 and spec.dtype == tf.string for spec in inputs.values())
        assert {
            output: (spec.dtype, spec.shape.rank)
            for output, spec in signature.structured_outputs.items()
        } == {output: (_DTYPES[dtype], rank) for output, (dtype, rank) in outputs.items()}
    assert getattr(loaded, BEAM_SIZE_VARIABLE).numpy() >= 1
    assert getattr(loaded, MAX_SOURCE_LENGTH_VARIABLE).numpy() > 1
    text = tf.constant(["Ein Hund.", ""])
    target_lang = tf.fill([2], languages[0] if languages else "")
    lengths = getattr(loaded, SOURCE_LENGTHS)(text, target_lang).numpy().tolist()
    assert lengths[0] > lengths[1] >= (1 if multilingual else 0)  # a tag is one piece


def test_a_ctranslate2_export_holds_the_contracts_files(tiny_ctranslate2):
    for name in (CTRANSLATE2_MODEL_FILE, DECODING_FILE, TOKENIZER_FILE):
        assert os.path.isfile(os.path.join(tiny_ctranslate2, name)), name
    settings = DecodingSettings.read(tiny_ctranslate2)
    assert settings.quantization == "float32" and settings.length_penalty == 0.0
    assert settings.search_options().beam_size == settings.beam_size


def test_a_directory_without_decoding_json_is_named_with_what_to_do(tmp_path):
    with pytest.raises(FileNotFoundError, match=f"No {DECODING_FILE} in .*export.py"):
        DecodingSettings.read(str(tmp_path))


def test_the_contract_and_the_ctranslate2_runtime_import_no_tensorflow():
    program = (
        "import sys\n"
        "import exports.contract, exports.ctranslate2\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('tensorflow', 'keras', 'decoding', 'inference', 'serving', 'data_pipeline')))\n"
    )
    completed = subprocess.run(
        [sys.executable, "-c", program], cwd=REPO_ROOT, capture_output=True, text=True
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.split() == ["['decoding',", "'decoding.options']"]
