"""A trained classifier loaded from its work directory: labels and scores, what it attended to,
its scores on the recorded test split, and classify.py and evaluate.py on it."""

from __future__ import annotations

import email.message
from pathlib import Path
from xml.etree import ElementTree

import numpy as np
import pytest
import tensorflow as tf

from common.errors import ConfigError
from exports.contract import CLASSIFIER_OUTPUTS
from inference.attention_plot import text_attention_svg
from inference.classifier import evaluate_classifier, load_classifier
from rundir.config import load_config
from rundir.labelled import read_split
from rundir.model import build_workdir_model
from tests.conftest import TOY_WORDS
from tests.script_runner import run_in_process

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def workdir(tiny_classifier_run) -> str:
    return tiny_classifier_run[0]


@pytest.fixture(scope="module")
def classifier(workdir):
    return load_classifier(workdir)[0]


def test_texts_get_their_label_with_its_probability(classifier):
    spam = " ".join(["please", *TOY_WORDS["spam"][:2], "today"])
    ham = " ".join(["please", *TOY_WORDS["ham"][:2], "today"])
    results = classifier.classify([spam, ham, ""])
    assert [r.label for r in results[:2]] == ["spam", "ham"]
    for result in results:
        assert set(result.probabilities) == {"ham", "spam"}
        assert sum(result.probabilities.values()) == pytest.approx(1.0, abs=1e-6)
        assert result.score == max(result.probabilities.values()) >= 0.5
    # The same texts one at a time: batching and padding change nothing.
    for text, batched in zip([spam, ham], results[:2], strict=True):
        assert classifier.classify([text])[0].score == pytest.approx(batched.score, abs=1e-5)


def test_the_attention_of_a_text_is_each_heads_weights_over_its_pieces(classifier):
    text = "free prize for you"
    attention = classifier.attention(text)
    pieces = classifier.tokenizer.tokenize(tf.constant([text])).to_list()[0]
    assert attention.pieces[0] == "<s>" and len(attention.pieces) == 1 + len(pieces)
    assert attention.weights.shape == (2, len(attention.pieces))
    np.testing.assert_allclose(attention.weights.sum(axis=1), 1.0, atol=1e-5)
    svg = text_attention_svg(attention.pieces, attention.weights, "spam (0.99)")
    root = ElementTree.fromstring(svg)
    assert len(root.findall(".//{http://www.w3.org/2000/svg}title")) == 3 * len(pieces) + 3


def test_the_recorded_test_split_is_scored_and_each_prediction_written(workdir, classifier):
    config = load_config(workdir)
    scores, predictions = evaluate_classifier(
        classifier, read_split(config, workdir), "test", str(Path(workdir) / "eval")
    )
    assert scores.count == 30 and scores.accuracy > 0.9 and scores.score_name == "spam F1"
    lines = Path(predictions).read_text().splitlines()
    assert lines[0] == "name\tlabel\tpredicted\tscore" and len(lines) == 31
    assert sum(line.split("\t")[1] == line.split("\t")[2] for line in lines[1:]) == round(
        scores.accuracy * 30
    )
    assert "confusion matrix" in (Path(workdir) / "eval/test.scores.md").read_text()


def test_evaluate_py_reports_a_classifiers_scores(workdir):
    completed = run_in_process("evaluate.py", f"--workdir={workdir}")
    assert completed.returncode == 0, completed.stderr
    assert "test." in completed.stdout and "| spam |" in completed.stdout
    assert "confusion matrix (rows: true label, columns: predicted):" in completed.stdout
    refused = run_in_process("evaluate.py", f"--workdir={workdir}", "--beam_size=4")
    assert refused.returncode == 1 and "give --workdir, --checkpoint and --split" in refused.stderr


def test_classify_py_labels_files_typed_texts_and_a_raw_message(workdir, classifier, tmp_path):
    texts = tmp_path / "texts.txt"
    texts.write_text("free prize cash\nlunch meeting notes\n")
    output, svg = tmp_path / "labels.tsv", tmp_path / "first.svg"
    completed = run_in_process(
        "classify.py",
        f"--workdir={workdir}",
        f"--input={texts}",
        f"--output={output}",
        f"--plot_attention={svg}",
        "--with_probabilities",
    )
    assert completed.returncode == 0, completed.stderr
    rows = [line.split("\t") for line in output.read_text().splitlines()]
    assert [row[0] for row in rows] == ["spam", "ham"] and all(len(row) == 4 for row in rows)
    pieces = classifier.attention("free prize cash").pieces
    assert svg.read_text().count("<title>") == 3 * len(pieces)  # two heads and their mean
    assert ">spam (" in svg.read_text()
    typed = run_in_process("classify.py", f"--workdir={workdir}", stdin="winner bonus click\n")
    assert typed.returncode == 0 and typed.stdout.startswith("> spam\t")
    message = email.message.EmailMessage()
    message["Subject"] = "cash offer"
    message.set_content("<p>click <b>urgent</b> bonus</p>", subtype="html")
    mail = tmp_path / "mail.eml"
    mail.write_bytes(message.as_bytes())
    from_mail = run_in_process(
        "classify.py",
        f"--workdir={workdir}",
        f"--message={mail}",
        f"--plot_attention={tmp_path / 'mail.svg'}",
    )
    assert from_mail.returncode == 0 and from_mail.stdout.startswith("spam\t")
    # The message's subject and the text of its HTML, not its headers or tags.
    pieces = classifier.attention("cash offer click urgent bonus").pieces
    assert (tmp_path / "mail.svg").read_text().count("<title>") == 3 * len(pieces)


def test_a_classifier_and_a_translation_model_each_refuse_the_others_tools(workdir, tiny_run):
    with pytest.raises(ConfigError, match="holds a classification model.*use classify.py"):
        build_workdir_model(workdir)
    with pytest.raises(ConfigError, match="holds a translation model.*use translate.py"):
        load_classifier(tiny_run[0])


def test_the_saved_model_labels_texts_as_the_work_directory_does(
    classifier, tiny_classifier_saved_model
):
    loaded = tf.saved_model.load(tiny_classifier_saved_model)
    assert [label.decode() for label in loaded.labels_variable.numpy()] == ["ham", "spam"]
    assert int(loaded.max_length_variable.numpy()) == 32
    for name, outputs in CLASSIFIER_OUTPUTS.items():
        structured = loaded.signatures[name].structured_outputs
        assert sorted(structured) == sorted(outputs)
    texts = ["free prize cash now", "lunch meeting notes", "x " * 100]
    answer = loaded.signatures["serving_default"](text=tf.constant(texts))
    expected = classifier.classify(texts)
    assert [label.decode() for label in answer["label"].numpy()] == [e.label for e in expected]
    np.testing.assert_allclose(answer["score"].numpy(), [e.score for e in expected], atol=1e-5)
    attended = loaded.signatures["text_attention"](text=tf.constant(texts[:1]))
    direct = classifier.attention(texts[0])
    length = len(direct.pieces)
    assert [p.decode() for p in attended["pieces"].numpy()[0, :length]] == direct.pieces
    np.testing.assert_allclose(
        attended["attention"].numpy()[0, :, :length], direct.weights, atol=1e-5
    )


def test_export_py_writes_a_classifiers_saved_model_and_refuses_other_formats(workdir, tmp_path):
    completed = run_in_process(
        "export.py", f"--workdir={workdir}", f"--output={tmp_path / 'model'}"
    )
    assert completed.returncode == 0, completed.stderr
    assert "labels ham, spam" in completed.stdout and "serve.py --saved_model=" in completed.stdout
    assert tf.saved_model.contains_saved_model(str(tmp_path / "model"))
    refused = run_in_process(
        "export.py", f"--workdir={workdir}", f"--output={tmp_path / 'ct2'}", "--format=ctranslate2"
    )
    assert refused.returncode == 1 and "exports as a SavedModel only" in refused.stderr
