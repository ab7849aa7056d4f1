"""benchmarks/terminology.py on the tiny model: every term given is held, and the sets are
written for translate.py --terms."""

import json
import re

from tests.script_runner import run_benchmark


def test_the_constrained_search_holds_every_term_of_each_set(tiny_run, tmp_path):
    run = run_benchmark(
        "terminology",
        f"--workdir={tiny_run[0]}",
        "--checkpoint=latest",
        "--splits=validation",
        "--max_sentences=24",
        f"--output_dir={tmp_path}",
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert "cpu: " in run.stdout
    rows = re.findall(
        r"^\| validation, ([a-z -]+) \| (\d+) of 24 \| (\d+) \| ([\d.]+)% \| ([\d.]+)% \|",
        run.stdout,
        re.M,
    )
    assert [name for name, *_ in rows] == ["reference", "rare", "made-up names"], run.stdout
    for name, _, terms, _, with_terms in rows:
        if int(terms):
            assert float(with_terms) == 100.0, (name, run.stdout)
    reference = rows[0]
    assert int(reference[1]) > 12 and float(reference[3]) == 0.0  # missed by construction
    lines = (tmp_path / "validation.reference.terms.jsonl").read_text().splitlines()
    assert len(lines) == 24
    assert sum(len(json.loads(line)["terms"]) for line in lines if line) == int(reference[2])
