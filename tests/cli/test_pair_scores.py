import json

import pytest

from cli.pair_scores import PairFiles, PairsError, format_score, pairs_of_window
from common.translation import Hypothesis


def test_pairs_come_from_two_files_or_tab_separated_lines():
    files = PairFiles("src", "tgt")
    assert files.paths == ["src", "tgt"]
    assert pairs_of_window(files, 1, [["a", "b"], ["A", "B"]]) == (["a", "b"], ["A", "B"])
    tsv = PairFiles("pairs.tsv")
    assert tsv.paths == ["pairs.tsv"]
    assert pairs_of_window(tsv, 1, [["a\tA", "b\tB\twith a tab"]]) == (
        ["a", "b"],
        ["A", "B\twith a tab"],
    )


def test_a_line_without_a_tab_is_named_by_its_number_in_the_file():
    with pytest.raises(PairsError, match="pairs.tsv, line 12: no tab"):
        pairs_of_window(PairFiles("pairs.tsv"), 11, [["a\tA", "no tab"]])


def test_a_score_a_line_or_every_figure_as_json():
    scored = Hypothesis("A dog.", -0.5, -0.8, 2, (-0.3, -0.5))
    assert format_score(scored, "text") == "-0.500000\n"
    row = json.loads(format_score(scored, "jsonl"))
    assert row["token_log_probs"] == [-0.3, -0.5] and row["length"] == 2
