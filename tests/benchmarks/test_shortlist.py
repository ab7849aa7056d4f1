"""benchmarks/shortlist.py on the tiny model: a row for the full search and one a setting."""

import re

from tests.script_runner import run_benchmark


def test_each_setting_gets_its_candidates_coverage_bleu_and_speed(tiny_run):
    run = run_benchmark(
        "shortlist",
        f"--workdir={tiny_run[0]}",
        "--checkpoint=latest",
        "--splits=validation",
        "--max_sentences=24",
        "--batch_size=8",
        "--settings=count:3:20,dice:3:20",
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert "cpu: " in run.stdout and "training pairs counted" in run.stdout
    rows = re.findall(
        r"^\| (\S+) \| (\d+) \| (\d+) \| ([\d.]+) % \| ([\d.]+) \| ([\d.]+) \| ([\d.]+)x \|$",
        run.stdout,
        re.M,
    )
    assert [row[0] for row in rows] == ["none", "count:3:20", "dice:3:20"], run.stdout
    vocabulary = int(rows[0][1])
    for _, batch, one, inside, *_ in rows[1:]:
        assert int(one) <= int(batch) < vocabulary  # a batch's candidates hold each sentence's
        assert 0 <= float(inside) <= 100
