import os
import re
import subprocess
import sys

from benchmarks import harness


def test_serve_throughput_runs_on_the_tiny_model(tiny_saved_model, tfds_dir):
    """The benchmark end to end, with few requests: both servers answer, every figure prints."""
    run = subprocess.run(
        [
            sys.executable,
            str(harness.REPO_ROOT / "benchmarks" / "serve_throughput.py"),
            f"--saved_model={tiny_saved_model}",
            "--clients=1,4",
            "--requests=8",
            "--sentences=8",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "TFDS_DATA_DIR": tfds_dir},
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert "cpu: " in run.stdout and "--clients=1,4" in run.stdout
    results = re.findall(r"^RESULT (.+?): ([\d.]+)", run.stdout, flags=re.M)
    assert [name for name, _ in results] == [
        "SavedModel alone, batch 64",
        "SavedModel alone, batch 32",
        "serve.py batching on, 1 clients",
        "serve.py batching on, 4 clients",
        "serve.py batching off, 1 clients",
        "serve.py batching off, 4 clients",
        "4 clients, batching on / SavedModel batch 64",
    ]
    assert all(float(value) > 0 for _, value in results)
