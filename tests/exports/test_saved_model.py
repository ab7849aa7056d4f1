"""``SavedModelTranslator``: today's exports and the layouts earlier versions wrote, and what
``translate.py --saved_model`` loads."""

import subprocess
import sys

import pytest
import tensorflow as tf

from common.language_tags import UnknownLanguageError
from common.translation import TranslationRequest
from exports.saved_model import SavedModelTranslator
from inference.loading import load_translator
from tests.script_runner import REPO_ROOT

SENTENCES = ["Ja.", "Zwei Männer stehen auf einer Straße und reden miteinander."]


def _earlier_export(translator, path: str, with_max_source_length: bool) -> str:
    """The tiny run exported as versions before the export contract wrote it: no signature but
    ``serving_default``, ``source_lengths`` of the text alone, and (before the token counts were
    saved) no ``max_source_length_variable``. (Those versions kept the whole translator on the
    root; the reader never reads it, and the model and tokenizer save faster.)"""

    def serve(text):
        return {"translation": translator.translate_batch(text, tf.fill(tf.shape(text), ""))}

    spec = tf.TensorSpec([None], tf.string, name="text")
    root = tf.Module()
    root.model, root.tokenizer = translator.model, translator.tokenizer
    root.source_lengths = tf.function(
        lambda text: translator.source_lengths(text, tf.fill(tf.shape(text), "")),
        input_signature=[spec],
    )
    root.beam_size_variable = tf.Variable(translator.beam_size, trainable=False)
    if with_max_source_length:
        root.max_source_length_variable = tf.Variable(6, trainable=False)
    signature = tf.function(serve, input_signature=[spec])
    tf.saved_model.save(root, path, signatures={"serving_default": signature})
    return path


@pytest.mark.parametrize("with_max_source_length", [True, False])
def test_an_export_of_an_earlier_version_translates_and_warns_as_it_did(
    tiny_run, tiny_saved_model, tmp_path, with_max_source_length
):
    translator, _ = load_translator(tiny_run[0], "latest", jit_compile=False)
    path = _earlier_export(translator, str(tmp_path / "earlier"), with_max_source_length)
    earlier, today = SavedModelTranslator(path), SavedModelTranslator(tiny_saved_model)
    translations = today.translate(SENTENCES, progress=False)
    assert earlier.translate(SENTENCES, progress=False) == translations
    warnings = earlier.truncation_warnings(SENTENCES)
    if with_max_source_length:  # only the long sentence is over 5 pieces
        assert len(warnings) == 1 and warnings[0].startswith("warning: sentence 2 has ")
    else:
        assert warnings == []


def test_the_scores_of_an_export_without_token_log_probabilities_come_without_them(
    tiny_run, tiny_saved_model, tmp_path
):
    """Exports of 63998ee and before: ``scored`` without ``token_log_probs``."""
    translator, _ = load_translator(tiny_run[0], "latest", jit_compile=False)
    spec = tf.TensorSpec([None], tf.string, name="text")

    def scored(text):
        outputs = translator.scored_batch(text, tf.fill(tf.shape(text), ""))._asdict()
        del outputs["token_log_probs"]
        return outputs

    root = tf.Module()
    root.model, root.tokenizer = translator.model, translator.tokenizer
    root.beam_size_variable = tf.Variable(translator.beam_size, trainable=False)

    def serve(text):
        return {"translation": translator.translate_batch(text, tf.fill(tf.shape(text), ""))}

    signatures = {
        "serving_default": tf.function(serve, input_signature=[spec]),
        "scored": tf.function(scored, input_signature=[spec]),
    }
    path = str(tmp_path / "earlier")
    tf.saved_model.save(root, path, signatures=signatures)
    earlier = SavedModelTranslator(path).hypotheses(SENTENCES, progress=False)
    today = SavedModelTranslator(tiny_saved_model).hypotheses(SENTENCES, progress=False)
    for (old,), (new,) in zip(earlier, today, strict=True):
        assert (old.text, old.length) == (new.text, new.length) and old.token_log_probs == ()
        assert old.score == pytest.approx(new.score, abs=1e-5) and len(new.token_log_probs) > 0


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
