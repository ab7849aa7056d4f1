"""benchmarks/sampled_translations.py on the tiny model: both runtimes sample reproducibly."""

import re

from tests.script_runner import run_benchmark


def test_each_runtime_reports_its_samples_and_repeats_a_seed(tiny_run, tiny_ctranslate2):
    run = run_benchmark(
        "sampled_translations",
        f"--workdir={tiny_run[0]}",
        "--checkpoint=latest",
        f"--ctranslate2={tiny_ctranslate2}",
        "--split=validation",
        "--max_sentences=24",
        "--seeds=1,2",
        "--temperature=1.5",
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert "cpu: " in run.stdout and "validation (24 sentences)" in run.stdout
    assert run.stdout.count("seed 1 again gives the same samples: True") == 2, run.stdout
    rows = re.findall(
        r"^\| sampled, seed (\d) \| [\d.]+ \| ([\d.]+)% \| [\d.]+ \|$", run.stdout, re.M
    )
    assert [seed for seed, _ in rows] == ["1", "2"] * 2 and all(float(d) > 0 for _, d in rows)
    assert run.stdout.count("self-BLEU across the 2 seeds") == 2
