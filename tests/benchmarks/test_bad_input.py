"""A benchmark given a path that holds nothing it can read stops with one line naming it."""

import pytest

from tests.script_runner import run_benchmark

NO_WORK_DIRECTORY = "/nowhere is not a training work directory (no config.json)"


@pytest.mark.parametrize(
    "name, flag, says",
    [
        ("alignment_heads", "--workdir=/nowhere", NO_WORK_DIRECTORY),
        ("litert_sentencepiece", "--workdir=/nowhere", NO_WORK_DIRECTORY),
        ("off_target", "--workdir=/nowhere", NO_WORK_DIRECTORY),
        ("sampled_translations", "--workdir=/nowhere", NO_WORK_DIRECTORY),
        ("score_pairs", "--workdir=/nowhere", NO_WORK_DIRECTORY),
        ("shortlist", "--workdir=/nowhere", NO_WORK_DIRECTORY),
        ("spam_baseline", "--workdir=/nowhere", NO_WORK_DIRECTORY),
        ("terminology", "--workdir=/nowhere", NO_WORK_DIRECTORY),
        ("translate_file", "--workdir=/nowhere", NO_WORK_DIRECTORY),
        ("saved_model_latency", "--saved_model=/nowhere", "No SavedModel in /nowhere"),
        ("serve_throughput", "--saved_model=/nowhere", "No SavedModel in /nowhere"),
        ("serve_throughput", "--ctranslate2=/nowhere", "No decoding.json in /nowhere"),
        ("data_scaling", "--multi30k_dir=/nowhere", "'/nowhere/train.de.gz'"),
    ],
)
def test_a_path_that_holds_nothing_is_one_line(name, flag, says):
    run = run_benchmark(name, flag)
    assert run.returncode == 1, run.stderr[-2000:]
    last = run.stderr.strip().splitlines()[-1]
    assert last.startswith("error: ") and says in last, run.stderr[-2000:]
