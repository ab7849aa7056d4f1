import json

import pytest

from cli.pair_scores import PairFiles, PairsError, format_score, output_stream, read_pairs
from common.translation import Hypothesis


def test_pairs_are_read_in_chunks_from_two_files_or_tab_separated_lines(tmp_path):
    (tmp_path / "src").write_text("a\nb\nc\n", encoding="utf-8")
    (tmp_path / "tgt").write_bytes(b"A\r\nB\n\xff C\n")
    chunks = list(read_pairs(PairFiles(str(tmp_path / "src"), str(tmp_path / "tgt")), 2))
    assert chunks == [(["a", "b"], ["A", "B"]), (["c"], ["\ufffd C"])]
    (tmp_path / "pairs.tsv").write_text("a\tA\nb\tB\twith a tab\n", encoding="utf-8")
    assert list(read_pairs(PairFiles(str(tmp_path / "pairs.tsv")), 10)) == [
        (["a", "b"], ["A", "B\twith a tab"])
    ]


def test_files_of_different_lengths_or_a_line_without_a_tab_are_named(tmp_path):
    (tmp_path / "src").write_text("a\nb\n", encoding="utf-8")
    (tmp_path / "tgt").write_text("A\n", encoding="utf-8")
    with pytest.raises(PairsError, match="src has more lines than .*tgt"):
        list(read_pairs(PairFiles(str(tmp_path / "src"), str(tmp_path / "tgt")), 10))
    with pytest.raises(PairsError, match="src has more lines than .*tgt"):  # the target longer
        list(read_pairs(PairFiles(str(tmp_path / "tgt"), str(tmp_path / "src")), 10))
    (tmp_path / "pairs.tsv").write_text("a\tA\nno tab\n", encoding="utf-8")
    with pytest.raises(PairsError, match="pairs.tsv, line 2: no tab"):
        list(read_pairs(PairFiles(str(tmp_path / "pairs.tsv")), 10))


def test_a_score_a_line_or_every_figure_as_json():
    scored = Hypothesis("A dog.", -0.5, -0.8, 2, (-0.3, -0.5))
    assert format_score(scored, "text") == "-0.500000\n"
    row = json.loads(format_score(scored, "jsonl"))
    assert row["token_log_probs"] == [-0.3, -0.5] and row["length"] == 2


def test_an_error_while_scoring_leaves_the_old_output_file(tmp_path):
    path = tmp_path / "scores.txt"
    path.write_text("old\n", encoding="utf-8")
    with pytest.raises(RuntimeError), output_stream(str(path)) as stream:
        stream.write("-0.5\n")
        raise RuntimeError("the model failed")
    assert path.read_text(encoding="utf-8") == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["scores.txt"]
    with output_stream(str(path)) as stream:
        stream.write("-0.5\n")
    assert path.read_text(encoding="utf-8") == "-0.5\n"
