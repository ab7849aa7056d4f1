"""Counting a multilingual model's off-target translations in evaluate.py's files."""

import gzip
from pathlib import Path

from configs import multi30k_multilingual
from data_pipeline.spec import parse
from inference.evaluation import output_stem
from tests.script_runner import run_benchmark, run_script


def _raw_lines(multi30k_dir: str, split: str, language: str, count: int) -> list[str]:
    with gzip.open(Path(multi30k_dir, f"{split}.{language}.gz"), "rt") as file:
        return file.read().splitlines()[:count]


def test_off_target_hypotheses_are_counted_per_direction_and_shown(multi30k_dir, tmp_path):
    """The first run is a program of its own, as a user starts a benchmark (``benchmarks/`` first
    on the path, ``import harness``); the other benchmarks' tests run theirs in-process."""
    workdir = tmp_path / "run"
    workdir.mkdir()
    config = multi30k_multilingual.get_config()
    config.data.name = "multi30k/de-en,multi30k/en-de"
    (workdir / "config.json").write_text(config.to_json())
    english = _raw_lines(multi30k_dir, "test_2016_flickr", "en", 20)
    german = _raw_lines(multi30k_dir, "test_2016_flickr", "de", 20)
    into_english = [german[i] if i in (3, 7) else line for i, line in enumerate(english)]
    into_english[5] = "..."  # no words: named no language, so not off target
    files = {"multi30k/de-en": (english, into_english), "multi30k/en-de": (german, german)}
    for data_name, (references, hypotheses) in files.items():
        stem = output_stem(str(workdir / "eval"), parse(data_name).corpus, "test2016")
        Path(stem).parent.mkdir(exist_ok=True)
        Path(f"{stem}.ref").write_text("\n".join(references) + "\n")
        Path(f"{stem}.beam4.hyp").write_text("\n".join(hypotheses) + "\n")
    flags = [f"--workdir={workdir}", f"--multi30k_dir={multi30k_dir}"]
    run = run_script("benchmarks/off_target.py", *flags)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "cpu: " in run.stdout and "languages=de,en" in run.stdout
    assert (
        "RESULT de-en: 2 of 20 hypotheses off target (10.00 %); references misnamed: 0\n"
        f"    {german[3]}\n    {german[7]}\n"
    ) in run.stdout
    assert "RESULT en-de: 0 of 20 hypotheses off target" in run.stdout
    assert "RESULT all directions: 2 of 40 hypotheses off target" in run.stdout

    missing = run_benchmark("off_target", *flags, "--beam_size=5")
    assert missing.returncode == 1 and "Traceback" not in missing.stderr
    assert "error: " in missing.stderr
    assert "multi30k_de-en.test2016.beam5.hyp is missing: run evaluate.py" in missing.stderr

    config.data.name = "multi30k/de-en"
    (workdir / "config.json").write_text(config.to_json())
    one_pair = run_benchmark("off_target", *flags)
    assert one_pair.returncode == 1 and "Traceback" not in one_pair.stderr
    assert "is a model of one language pair (multi30k/de-en)" in one_pair.stderr
