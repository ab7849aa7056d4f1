"""Training a text classifier through train(): the loss, the recorded split, validation F1, best/,
exact resume, and the settings a classifier refuses."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

from common.errors import ConfigError
from inference.classifier import load_classifier
from rundir import checkpoints
from rundir.labelled import read_labels
from rundir.layout import RunDirectory
from tests.conftest import tiny_classifier_config
from training import trainer
from training.classification import classification_loss
from training.config import validate

pytestmark = pytest.mark.slow


def test_the_loss_is_the_sigmoid_or_the_softmax_cross_entropy():
    labels = tf.constant([1, 0])
    loss_sum, correct, count = classification_loss(tf.constant([[2.0], [1.0]]), labels)
    expected = -np.log(1 / (1 + np.exp(-2.0))) - np.log(1 - 1 / (1 + np.exp(-1.0)))
    assert loss_sum.numpy() == pytest.approx(expected, rel=1e-6)
    assert (correct.numpy(), count.numpy()) == (1.0, 2.0)
    logits = tf.constant([[0.0, 3.0, 0.0], [1.0, 0.0, 0.0]])
    loss_sum, correct, count = classification_loss(logits, tf.constant([1, 2]))
    log_softmax = tf.nn.log_softmax(logits).numpy()
    assert loss_sum.numpy() == pytest.approx(-(log_softmax[0, 1] + log_softmax[1, 2]), rel=1e-6)
    assert (correct.numpy(), count.numpy()) == (1.0, 2.0)


def test_a_classifier_trains_records_its_split_and_keeps_its_best_by_f1(tiny_classifier_run):
    workdir, result = tiny_classifier_run
    run = RunDirectory(workdir)
    assert result.step == 120 and result.score_name == "validation_f1"
    assert result.best_score > 0.9 and result.validation_score > 0.9
    assert result.train_losses[-1][1] < 0.5 * result.train_losses[0][1]
    record = json.loads(Path(run.split).read_text())
    assert read_labels(workdir) == ("ham", "spam") == tuple(record["labels"])
    sizes = {name: len(names) for name, names in record["splits"].items()}
    assert sizes == {"train": 240, "validation": 30, "test": 30}
    assert not set(record["splits"]["train"]) & set(record["splits"]["test"])
    best = json.loads(Path(run.best_scores).read_text())
    assert best["validation_f1"] == result.best_score
    predicted = Path(run.validation_translations(120)).read_text().split()
    assert len(predicted) == 30 and set(predicted) <= {"ham", "spam"}


def test_a_resumed_classifier_run_ends_with_the_weights_of_an_uninterrupted_one(
    toy_labelled_file, tmp_path
):
    def weights(workdir: str) -> dict[str, np.ndarray]:
        path = checkpoints.checkpoint_path(workdir, "latest")
        reader = tf.train.load_checkpoint(path)
        names = [name for name, _ in tf.train.list_variables(path) if name.startswith("model/")]
        return {name: reader.get_tensor(name) for name in names}

    settings = {"checkpoint_every": 10, "eval_every": 0, "log_every": 10}
    straight = str(tmp_path / "straight")
    trainer.train(tiny_classifier_config(toy_labelled_file, steps=20, **settings), straight)
    resumed = str(tmp_path / "resumed")
    trainer.train(tiny_classifier_config(toy_labelled_file, steps=10, **settings), resumed)
    result = trainer.train(tiny_classifier_config(toy_labelled_file, steps=20, **settings), resumed)
    assert result.step == 20
    expected, actual = weights(straight), weights(resumed)
    assert len(expected) > 10 and expected.keys() == actual.keys()
    for name, value in expected.items():
        np.testing.assert_array_equal(actual[name], value, err_msg=name)


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("train.init_from", "runs/de_en", "has no fine-tuning"),
        ("classifier.pooling", "max", r"expected one of \('mean', 'first'\)"),
        ("data.name", "multi30k/de-en", "a classifier's data is 'spam_assassin' or 'text:FILE'"),
        ("task", "summarization", r"expected one of \('translation', 'classification'\)"),
    ],
)
def test_a_classifier_refuses_what_it_cannot_do_in_one_line(toy_labelled_file, key, value, message):
    config = tiny_classifier_config(toy_labelled_file)
    section, _, name = key.rpartition(".")
    (config[section] if section else config)[name] = value
    with pytest.raises(ConfigError, match=message):
        validate(config)


def test_three_labels_train_a_softmax_head_scored_by_the_macro_f1(tmp_path):
    rows = ["label,text"]
    words = {"sport": "goal match team", "food": "bread soup cake", "news": "vote law court"}
    for i in range(90):
        label = list(words)[i % 3]
        rows.append(f"{label},today {words[label]} please")
    (tmp_path / "three.csv").write_text("\n".join(rows) + "\n")
    config = tiny_classifier_config(str(tmp_path / "three.csv"), steps=40, eval_every=40)
    config.classifier.positive_label = ""
    config.tokenizer.vocab_size = 283  # what so few words give
    result = trainer.train(config, str(tmp_path / "run"))
    assert read_labels(str(tmp_path / "run")) == ("food", "news", "sport")
    assert result.score_name == "validation_f1" and result.best_score == 1.0  # the macro F1
    classifier, _ = load_classifier(str(tmp_path / "run"))
    assert classifier.model.num_classes == 3
    (found,) = classifier.classify(["today vote law court please"])
    assert found.label == "news" and len(found.probabilities) == 3
