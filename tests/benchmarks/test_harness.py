"""The benchmarks' shared harness: CPU description, FLOP formula, timing and peer runs."""

import sys

import pytest

from benchmarks import harness
from tests.script_runner import run_benchmark

CPUINFO = """processor\t: 0
vendor_id\t: AuthenticAMD
cpu family\t: 26
model\t\t: 2
model name\t: AMD EPYC
flags\t\t: fpu sse2 avx2 avx512f avx512_bf16

processor\t: 1
model name\t: another CPU
"""

LSCPU = """Architecture:        x86_64
Model name:          Intel(R) Xeon(R) CPU @ 2.20GHz
CPU family:          6
Model:               79
Flags:               fpu avx2
"""


def test_cpu_model_reads_name_family_model_and_notable_flags():
    assert harness.cpu_model(CPUINFO) == "AMD EPYC (family 26, model 2, avx2 avx512f avx512_bf16)"
    assert (
        harness.cpu_model(lscpu=LSCPU)
        == "Intel(R) Xeon(R) CPU @ 2.20GHz (family 6, model 79, avx2)"
    )
    assert harness.cpu_model()  # this machine: something, whatever it is


def test_flop_formula_matches_the_peers_definition():
    # ../shared/peers/README.md: small N = 7.553 M, 6N+attn = 45.98 MFLOP; base 60.42 M, 366.1.
    small, base = harness.SHAPES["small"], harness.SHAPES["base"]
    assert small.matmul_params() / 1e6 == pytest.approx(7.553, abs=5e-4)
    assert small.train_flops_per_target_token() / 1e6 == pytest.approx(45.98, abs=5e-3)
    assert base.matmul_params() / 1e6 == pytest.approx(60.42, abs=5e-3)
    assert base.train_flops_per_target_token() / 1e6 == pytest.approx(366.1, abs=0.05)


def test_synthetic_batch_has_the_shape_and_no_special_ids():
    shape = harness.SHAPES["tiny"]
    batch = harness.synthetic_batch(shape)
    assert batch["source"].shape == (shape.batch, shape.source_len)
    assert batch["target_in"].shape == batch["target_out"].shape == (shape.batch, shape.target_len)
    assert int(min(batch[key].numpy().min() for key in batch)) >= 4
    assert int(max(batch[key].numpy().max() for key in batch)) < shape.vocab


def test_timing_warms_up_then_times_each_repetition_and_round():
    calls = []
    seconds = harness.time_repetitions(lambda: calls.append("f"), repetitions=3, warmup=2)
    assert len(calls) == 5 and len(seconds) == 3 and min(seconds) >= 0
    rounds = harness.time_round_robin({"a": lambda: calls.append("a"), "b": lambda: 0}, 2)
    assert {name: len(times) for name, times in rounds.items()} == {"a": 2, "b": 2}
    assert harness.rates(10, [2.0, 5.0]) == [5.0, 2.0]
    assert harness.join_figures([1.26, 2.0], digits=1) == "1.3, 2.0"


def test_run_peer_parses_result_lines_and_says_why_a_peer_cannot_run(tmp_path, monkeypatch, capsys):
    (tmp_path / "peer.py").write_text(
        "print('peer 1.0')\n"
        "print('RESULT ct2 small float32 beam=1: 13203 tok/s (reps 1, 2)')\n"
        "print('RESULT tf small fp32: tgt tok/s median 4738.5 (reps 1)')\n"
    )
    monkeypatch.setattr(harness, "PEERS_DIR", tmp_path)
    monkeypatch.setenv("TORCHPY", sys.executable)
    results = harness.run_peer("peer.py", [], "json", "small")
    assert results == {"ct2 small float32 beam=1": 13203.0, "tf small fp32": 4738.5}
    assert "| peer 1.0" in capsys.readouterr().out

    assert harness.run_peer("peer.py", [], "json", "tiny") is None
    assert "no 'tiny' size" in capsys.readouterr().out
    monkeypatch.setenv("TORCHPY", str(tmp_path / "no-python"))
    assert harness.run_peer("peer.py", [], "json", "small") is None
    assert "cannot run here" in capsys.readouterr().out


@pytest.mark.slow
def test_decode_throughput_runs_on_the_tiny_shape():
    """One benchmark end to end (a few seconds): it follows the decoding API and prints the run."""
    run = run_benchmark("decode_throughput", "--size=tiny", "--reps=1", "--jit=off", "--peers=")
    assert run.returncode == 0, run.stderr[-3000:]
    assert "cpu: " in run.stdout and "flags: " in run.stdout and "--size=tiny" in run.stdout
    assert "best beam 4:" in run.stdout and "not checked: CTranslate2 did not run" in run.stdout
    for line in ("beam 4, n-best 4", "sampling top-k 10", "greedy, prefix 8", "beam 4, prefix 8"):
        assert f"{line}, jit_compile=False" in run.stdout
