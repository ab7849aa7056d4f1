"""``SavedModelTranslator``: today's exports, the one-line refusal of earlier versions', and what
``translate.py --saved_model`` loads."""

import re
import subprocess
import sys

import pytest
import tensorflow as tf

from common.language_tags import UnknownLanguageError
from common.translation import TranslationRequest
from exports.contract import ADDED_IN, MAX_SOURCE_LENGTH_VARIABLE, SOURCE_LENGTHS, TOKEN_LOG_PROBS
from exports.saved_model import EarlierExportError, SavedModelTranslator
from inference.loading import load_translator
from serving.saved_model import load_saved_model
from tests.script_runner import REPO_ROOT

SENTENCES = ["Ja.", "Zwei Männer stehen auf einer Straße und reden miteinander."]


def _earlier_export(translator, path: str, lacks: str) -> str:
    """The tiny run exported as today's exports but for one part that versions before
    ``ADDED_IN[lacks]`` did not write: ``max_source_length_variable``, ``source_lengths``' target
    language input, or the token log-probabilities among the ``scored`` outputs. (The model and
    the tokenizer on the root: a SavedModel that saves fast.)"""
    spec = tf.TensorSpec([None], tf.string, name="text")

    def serve(text):
        return {"translation": translator.translate_batch(text, tf.fill(tf.shape(text), ""))}

    def scored(text):
        outputs = translator.scored_batch(text, tf.fill(tf.shape(text), ""))._asdict()
        if lacks == TOKEN_LOG_PROBS:
            del outputs[TOKEN_LOG_PROBS]
        return outputs

    root = tf.Module()
    root.model, root.tokenizer = translator.model, translator.tokenizer
    root.beam_size_variable = tf.Variable(translator.beam_size, trainable=False)
    if lacks != MAX_SOURCE_LENGTH_VARIABLE:
        root.max_source_length_variable = tf.Variable(6, trainable=False)
    if lacks == SOURCE_LENGTHS:
        root.source_lengths = tf.function(
            lambda text: translator.source_token_counts(text, tf.fill(tf.shape(text), "")),
            input_signature=[spec],
        )
    else:  # as export.py writes it
        root.source_lengths = translator.source_token_counts
    signatures = {
        "serving_default": tf.function(serve, input_signature=[spec], autograph=False),
        "scored": tf.function(scored, input_signature=[spec], autograph=False),
    }
    no_gradients = tf.saved_model.SaveOptions(experimental_custom_gradients=False)  # as export.py
    tf.saved_model.save(root, path, signatures=signatures, options=no_gradients)
    return path


@pytest.mark.parametrize("lacks", list(ADDED_IN))
def test_an_export_of_an_earlier_version_is_one_line_naming_the_version_and_what_to_do(
    tiny_run, tmp_path, lacks
):
    translator, _ = load_translator(tiny_run[0], "latest", jit_compile=False)
    path = _earlier_export(translator, str(tmp_path / "earlier"), lacks)
    message = f"{path} was exported by a version before {re.escape(ADDED_IN[lacks])}, which added"
    with pytest.raises(EarlierExportError, match=message):
        SavedModelTranslator(path)
    with pytest.raises(EarlierExportError, match=message):
        load_saved_model("earlier", path)  # nor is it served


def test_a_language_for_a_model_of_one_target_language_is_refused_before_the_graph_runs(
    tiny_saved_model,
):
    translator = SavedModelTranslator(tiny_saved_model)
    assert translator.languages == () and translator.beam_size == 1
    with pytest.raises(UnknownLanguageError, match="one language only"):
        translator.translate(SENTENCES, TranslationRequest(target_lang="fr"), progress=False)


def test_a_directory_without_a_saved_model_is_named(tmp_path):
    with pytest.raises(FileNotFoundError, match=f"No SavedModel in {tmp_path}.*export.py"):
        SavedModelTranslator(str(tmp_path))


@pytest.mark.slow  # its exports come through request.getfixturevalue
@pytest.mark.parametrize(
    "flag, export", [("saved_model", "tiny_saved_model"), ("ctranslate2", "tiny_ctranslate2")]
)
def test_translate_py_with_an_export_loads_no_model_data_or_training_code(
    flag, export, request, tmp_path
):
    source = tmp_path / "in.txt"
    source.write_text("Ein Hund rennt.\n", encoding="utf-8")
    program = (
        "import runpy, sys\n"
        f"sys.argv = ['translate.py', '--{flag}={request.getfixturevalue(export)}',\n"
        f"            '--input={source}', '--output={tmp_path / 'out.txt'}']\n"
        "try:\n"
        "    runpy.run_path('translate.py', run_name='__main__')\n"
        "except SystemExit as exit:\n"
        "    assert not exit.code, exit.code\n"
        "loaded = {m.split('.')[0] for m in sys.modules}\n"
        "print(sorted(loaded & {'tensorflow_datasets', 'training', 'data_pipeline',\n"
        "                       'transformer', 'inference'}))\n"
        "print(sorted(m for m in sys.modules if m.startswith('decoding')))\n"
    )
    completed = subprocess.run(
        [sys.executable, "-c", program], cwd=REPO_ROOT, capture_output=True, text=True, timeout=300
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.splitlines() == ["[]", "['decoding', 'decoding.options']"]
    assert (tmp_path / "out.txt").read_text(encoding="utf-8").count("\n") == 1
