"""benchmarks/score_pairs.py on the tiny model: every runtime ranks the pairs alike."""

import re

from tests.script_runner import run_benchmark


def test_every_runtime_finds_the_same_pairs_on_the_tiny_model(
    tiny_run, tiny_saved_model, tiny_ctranslate2
):
    run = run_benchmark(
        "score_pairs",
        f"--workdir={tiny_run[0]}",
        "--checkpoint=latest",
        "--split=validation",
        "--max_pairs=200",
        f"--saved_model={tiny_saved_model}",
        f"--ctranslate2={tiny_ctranslate2}",
        "--reps=1",
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert "cpu: " in run.stdout and "200 pairs of validation, 20 misaligned" in run.stdout
    rows = re.findall(
        r"^\| (work directory|SavedModel|CTranslate2 \(ours\)) \| \d+ \| (.*) \|$",
        run.stdout,
        flags=re.M,
    )
    assert len(rows) == 3 and len({found for _, found in rows}) == 1, rows
    assert "| CTranslate2's score_batch alone (the peer) |" in run.stdout
