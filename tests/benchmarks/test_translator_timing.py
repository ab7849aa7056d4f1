"""Timing CTranslate2 exports in a process of their own, without TensorFlow."""

import json
import subprocess
import sys

from benchmarks import harness


def test_exports_are_timed_in_turns_in_a_process_without_tensorflow(tiny_ctranslate2, tmp_path):
    sentences = ["Ein Hund rennt.", "Zwei Männer spielen.", "Ja", "Eine Frau liest ein Buch."]
    spec = tmp_path / "spec.json"
    spec.write_text(
        json.dumps(
            {
                "exports": {"a": tiny_ctranslate2, "b": tiny_ctranslate2},
                "length_penalty": 0.0,
                "sentences": sentences,
                "batch1_sentences": 3,
                "reps": 2,
            }
        )
    )
    completed = subprocess.run(
        [sys.executable, str(harness.REPO_ROOT / "benchmarks" / "translator_timing.py"), spec],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert completed.returncode == 0, completed.stderr[-2000:]
    timings = json.loads(completed.stdout)
    assert set(timings) == {"a", "b"}
    for timing in timings.values():
        assert len(timing["batch1_seconds"]) == 3 and len(timing["pass_seconds"]) == 2
        assert all(seconds > 0 for seconds in timing["batch1_seconds"] + timing["pass_seconds"])
        assert len(timing["translations"]) == len(sentences)
    assert timings["a"]["translations"] == timings["b"]["translations"]
