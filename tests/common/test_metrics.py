"""A classifier's scores: accuracy, precision, recall, F1 and the confusion matrix."""

import pytest

from common.metrics import classification_scores


def test_scores_of_a_binary_and_a_three_class_task():
    # ham 0, spam 1: 3 spam found of 4, 1 ham taken for spam of 6.
    actual = [1, 1, 1, 1, 0, 0, 0, 0, 0, 0]
    predicted = [1, 1, 1, 0, 1, 0, 0, 0, 0, 0]
    scores = classification_scores(actual, predicted, ["ham", "spam"], "spam")
    assert scores.confusion == ((5, 1), (1, 3))
    assert scores.accuracy == pytest.approx(0.8)
    assert (scores.precision("spam"), scores.recall("spam")) == (0.75, 0.75)
    assert scores.score == scores.f1("spam") == pytest.approx(0.75)
    assert scores.score_name == "spam F1"
    report = scores.report()
    assert "| spam | 0.7500 | 0.7500 | 0.7500 | 4 |" in report
    assert report.splitlines()[-1].split() == ["spam", "1", "3"]
    three = classification_scores([0, 1, 2, 2], [0, 2, 2, 2], ["a", "b", "c"])
    assert three.score_name == "macro F1"
    assert three.score == pytest.approx((1.0 + 0.0 + 0.8) / 3)
    assert three.precision("b") == 0.0  # never predicted: 0, not a division by zero


def test_a_positive_label_that_is_not_a_label_is_an_error():
    with pytest.raises(ValueError, match="positive label 'spam' is not one of"):
        classification_scores([0], [0], ["a", "b"], "spam")
