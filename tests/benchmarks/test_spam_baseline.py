"""benchmarks/spam_baseline.py on a small label,text file: the baseline's metrics and matrix."""

import random
import re

from tests.script_runner import run_benchmark


def test_the_baseline_separates_separable_texts_and_prints_its_metrics(tmp_path):
    rng = random.Random(0)
    words = ["meeting", "lunch", "report", "patch", "review", "train", "weekend", "family"]
    rows = ["label,text"]
    for row in range(200):
        text = " ".join(rng.choices(words, k=8))
        spam = row % 3 == 0
        rows.append(f"{'spam' if spam else 'ham'},{text} {'win free money' if spam else ''}")
    data = tmp_path / "mail.csv"
    data.write_text("\n".join(rows) + "\n")
    run = run_benchmark("spam_baseline", f"--data={data}")
    assert run.returncode == 0, run.stderr[-2000:]
    assert "cpu: " in run.stdout and "split=train 160, validation 20, test 20" in run.stdout
    metrics = re.search(
        r"^\| TF-IDF \+ logistic regression \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \|",
        run.stdout,
        re.M,
    )
    assert metrics and [float(value) for value in metrics.groups()] == [1.0] * 4, run.stdout
    assert re.search(r"^  ham: 14 0\n  spam: 0 6$", run.stdout, re.M), run.stdout


def test_a_classifiers_row_is_scored_on_its_runs_recorded_split(tiny_classifier_run):
    workdir, _ = tiny_classifier_run
    run = run_benchmark("spam_baseline", f"--workdir={workdir}")
    assert run.returncode == 0, run.stderr[-2000:]
    assert "split=train 240, validation 30, test 30" in run.stdout
    row = re.search(
        r"^\| attention classifier \(.*\) \| ([\d.]+) \| [\d.]+ \| [\d.]+ \| ([\d.]+) \| "
        r"not timed: give --config \|$",
        run.stdout,
        re.M,
    )
    assert row and float(row[1]) > 0.9 and float(row[2]) > 0.8, run.stdout
