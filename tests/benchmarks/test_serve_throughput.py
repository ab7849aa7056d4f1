import re

from tests.script_runner import run_benchmark


def test_serve_throughput_runs_on_the_tiny_model(
    tiny_saved_model, tiny_ctranslate2, tfds_dir, monkeypatch
):
    """The benchmark end to end, with few requests: every server answers, every figure prints,
    the overload burst is refused in part and nobody waits past the timeout."""
    monkeypatch.setenv("TFDS_DATA_DIR", tfds_dir)
    run = run_benchmark(
        "serve_throughput",
        f"--saved_model={tiny_saved_model}",
        f"--ctranslate2={tiny_ctranslate2}",
        "--clients=4",
        "--requests=8",
        "--sentences=8",
        "--overload_clients=40",
        "--overload_queue=1",
        "--request_timeout_seconds=20",
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert "cpu: " in run.stdout and "--clients=4" in run.stdout
    results = re.findall(r"^RESULT (.+?): ([\d.]+)", run.stdout, flags=re.M)
    expected = []
    for runtime in ("SavedModel", "CTranslate2"):
        expected += [
            f"{runtime} alone, batch 64",
            f"{runtime} alone, batch 32",
            f"{runtime} served, batching on, 4 clients",
            f"{runtime} served, batching off, 4 clients",
            f"{runtime}, 4 clients, batching on / alone at batch 64",
        ]
    assert [name for name, _ in results if "overload" not in name] == expected
    assert all(float(value) > 0 for _, value in results)
    bursts = re.findall(
        r"^RESULT (\w+) overload, 40 clients at once, queue 1 x 8 sentences: (\d+) answered .*, "
        r"(\d+) refused with 503 .* other 0; longest wait ([\d.]+) s",
        run.stdout,
        flags=re.M,
    )
    assert [runtime for runtime, *_ in bursts] == ["SavedModel", "CTranslate2"], run.stdout
    for _, answered, refused, longest in bursts:
        assert int(answered) + int(refused) == 40 and int(refused) > 0
        assert float(longest) < 20
