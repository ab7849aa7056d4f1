"""Timing CTranslate2 and LiteRT exports in a process of their own, without TensorFlow."""

import json
import subprocess
import sys

from benchmarks import harness
from exports.ctranslate2 import CTranslate2Translator
from exports.litert import LiteRTTranslator
from inference.ctranslate2_export import export_ctranslate2
from inference.litert_export import export_litert
from inference.loading import load_translator

SENTENCES = ["Ein Hund rennt.", "Zwei Männer spielen.", "Ja", "Eine Frau liest ein Buch."]


def test_exports_are_timed_in_turns_in_a_process_without_tensorflow(
    tiny_run, tiny_ctranslate2, tmp_path
):
    """Three different exports of the tiny run, CTranslate2 float32 and int8 (their
    translations of two of SENTENCES differ, measured on an AMD EPYC) and LiteRT: each entry
    holds its own export's translations, as that export gives them run directly, and a positive
    time for each call."""
    translator, _ = load_translator(tiny_run[0], "latest", jit_compile=False)
    exports = {
        "float32": {"runtime": "ctranslate2", "path": tiny_ctranslate2},
        "int8": {
            "runtime": "ctranslate2",
            "path": export_ctranslate2(translator, str(tmp_path / "ct2_int8"), "int8"),
        },
        "litert": {"runtime": "litert", "path": export_litert(translator, str(tmp_path / "tfl"))},
    }
    spec = tmp_path / "spec.json"
    spec.write_text(
        json.dumps(
            {
                "exports": exports,
                "length_penalty": 0.0,
                "sentences": SENTENCES,
                "batch1_sentences": 3,
                "reps": 2,
                "batch_size": 2,
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
    assert set(timings) == set(exports)
    for name, export in exports.items():
        timing = timings[name]
        assert len(timing["batch1_seconds"]) == 3 and len(timing["pass_seconds"]) == 2
        assert all(seconds > 0 for seconds in timing["batch1_seconds"] + timing["pass_seconds"])
        if export["runtime"] == "litert":
            direct = LiteRTTranslator(export["path"])
        else:
            direct = CTranslate2Translator(export["path"], length_penalty=0.0)
        assert timing["translations"] == direct.translate(SENTENCES, progress=False)
