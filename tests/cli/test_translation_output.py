import json

from cli.translation_output import format_hypotheses, one_line
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


def test_a_line_break_a_model_wrote_never_breaks_the_line_of_its_sentence():
    broken = [Hypothesis("A dog\nruns\r\x1c\u2028.", -0.5, -0.8, 4)]
    for with_scores in (False, True):
        text = format_hypotheses(broken, "text", with_scores)
        assert len(text.splitlines()) == 1 and text.endswith("A dog runs   .\n")
    assert one_line("Zwei\x85Hunde") == "Zwei Hunde"
    line = format_hypotheses(broken, "jsonl", with_scores=False)
    assert json.loads(line)["hypotheses"][0]["translation"] == broken[0].text  # JSON escapes
