import re

import pytest

from configs import tiny
from rundir.model import build_model
from tests.script_runner import run_benchmark


@pytest.mark.slow
def test_data_scaling_runs_on_a_small_corpus(multi30k_dir):
    """The benchmark end to end on one small size, one run of the tiny model: every figure prints
    and each is the figure of what it names (a second run finding the corpus prepared:
    tests/data_pipeline/test_prepared.py). One size: each size is a training run of its own (a
    second one made the benchmark half as long again, measured), so the largest / smallest
    ratios, 1 with one size, are only seen to print."""
    run = run_benchmark(
        "data_scaling",
        "--sizes=6000",
        "--steps=4",
        "--config=configs/tiny.py",
        "--runs=1",
        f"--multi30k_dir={multi30k_dir}",
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert "cpu: " in run.stdout and "--sizes=6000" in run.stdout
    runs = re.findall(
        r"^RESULT 6000 pairs, (first|second) run: peak ([\d.]+) GB, first step (\d+) s "
        r"\(prepared: at (\d+) s\), checkpoint ([\d.]+) MB \+ data position "
        r"([\d.]+) MB, (\d+) target tokens/s$",
        run.stdout,
        flags=re.M,
    )
    assert [found[0] for found in runs] == ["first"]
    _, peak_gb, first_step, prepared_at, model_mb, data_position_mb, tokens_per_s = runs[0]
    # A TensorFlow process: hundreds of MB, not KB or TB (ru_maxrss is in KiB on Linux).
    assert 0.2 < float(peak_gb) < 8
    assert int(prepared_at) <= int(first_step)  # the corpus is prepared before training starts
    # The checkpoint holds the weights and Adam's two moments, float32: 12 bytes a parameter
    # (to the 0.1 MB printed), without the data position saved beside it.
    model = build_model(tiny.get_config(), tiny.get_config().tokenizer.vocab_size)
    assert float(model_mb) == pytest.approx(12 * model.count_params() / 2**20, abs=0.06)
    assert 0 < float(data_position_mb) < 6  # 6,000 pairs of strings, tokenized batches: 4 MB
    assert int(tokens_per_s) > 0
    for figure in ("peak memory", "target tokens/s"):
        assert re.search(
            rf"^RESULT {figure}, largest / smallest first run: [\d.]+$", run.stdout, flags=re.M
        )
