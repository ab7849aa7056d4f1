import json

from cli.translation_output import format_hypotheses
from common.translation import Hypothesis

HYPOTHESES = [Hypothesis("A dog.", -0.5, -0.8, 4), Hypothesis("The dog.", -0.75, -1.2, 4)]


def test_text_is_a_line_a_hypothesis_with_or_without_its_score():
    assert format_hypotheses(HYPOTHESES, "text", with_scores=False) == "A dog.\nThe dog.\n"
    assert format_hypotheses(HYPOTHESES, "text", with_scores=True) == (
        "-0.500000 ||| A dog.\n-0.750000 ||| The dog.\n"
    )


def test_json_lines_are_an_object_a_sentence_with_every_hypothesis():
    line = format_hypotheses(HYPOTHESES[:1], "jsonl", with_scores=False)
    assert line.endswith("\n") and line.count("\n") == 1
    (hypothesis,) = json.loads(line)["hypotheses"]
    assert hypothesis["translation"] == "A dog." and hypothesis["length"] == 4
    assert hypothesis["confidence"] == HYPOTHESES[0].confidence == 0.8187307530779818
