import re
import subprocess
import sys

import pytest

from benchmarks import harness


@pytest.mark.slow
def test_data_scaling_runs_on_a_small_corpus(multi30k_dir):
    """The benchmark end to end on one small size, one run of the tiny model: every figure prints
    (a second run finding the corpus prepared: tests/data_pipeline/test_prepared.py)."""
    run = subprocess.run(
        [
            sys.executable,
            str(harness.REPO_ROOT / "benchmarks" / "data_scaling.py"),
            "--sizes=6000",
            "--steps=4",
            "--config=configs/tiny.py",
            "--runs=1",
            f"--multi30k_dir={multi30k_dir}",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert "cpu: " in run.stdout and "--sizes=6000" in run.stdout
    runs = re.findall(
        r"^RESULT 6000 pairs, (first|second) run: peak ([\d.]+) GB, first step (\d+) s "
        r"\(prepared: (at \d+ s|before the run)\), checkpoint ([\d.]+) MB \+ data position "
        r"([\d.]+) MB, (\d+) target tokens/s$",
        run.stdout,
        flags=re.M,
    )
    assert [found[0] for found in runs] == ["first"] and runs[0][3].startswith("at ")
    assert all(float(found[5]) < 2 for found in runs)  # 6,000 pairs of strings: about 1 MB
    assert "RESULT peak memory, largest / smallest first run: 1.00" in run.stdout
