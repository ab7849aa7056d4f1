"""benchmarks/alignment_heads.py on the tiny model: a share for each head and each layer's mean."""

import re

from tests.script_runner import run_benchmark


def test_each_head_and_the_layers_mean_get_a_share_of_the_copied_pieces(tiny_run):
    run = run_benchmark(
        "alignment_heads",
        f"--workdir={tiny_run[0]}",
        "--checkpoint=latest",
        "--split=validation",
        "--max_sentences=16",
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert "cpu: " in run.stdout and "sentences=16, layers=1, heads=2" in run.stdout
    assert re.search(r"^copied pieces: \d+$", run.stdout, re.M)
    shares = re.findall(r"^RESULT layer 0 (head \d|heads' mean): ([\d.]+)(.*)$", run.stdout, re.M)
    assert [name for name, *_ in shares] == ["head 0", "head 1", "heads' mean"]
    assert all(0.0 <= float(share) <= 1.0 for _, share, _ in shares)
    assert shares[-1][2] == " (decoding.alignment's)"  # a one-layer decoder aligns with its own
