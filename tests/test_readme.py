"""Every ```python block of README.md runs, as a reader would run it after scripts/main.sh.

The blocks run in a directory where ``runs/multi30k_de_en`` is the tiny trained work directory
with an averaged checkpoint and its SavedModel export, the files scripts/main.sh leaves.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from inference.export import export_saved_model
from inference.loading import load_translator
from rundir.model import build_workdir_model
from training.averaging import average_checkpoints, last_checkpoints

README = Path(__file__).resolve().parents[1] / "README.md"


def python_blocks(markdown: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", markdown, flags=re.S | re.M)


@pytest.fixture
def main_sh_outputs(tiny_run, tmp_path, monkeypatch) -> Path:
    """``tmp_path`` holding ``runs/multi30k_de_en`` as scripts/main.sh leaves it; the cwd."""
    workdir = tmp_path / "runs" / "multi30k_de_en"
    shutil.copytree(tiny_run[0], workdir, ignore=shutil.ignore_patterns("eval", "saved_model*"))
    model, _ = build_workdir_model(str(workdir))
    average_checkpoints(model, last_checkpoints(str(workdir), 2), str(workdir / "averaged"))
    translator, _ = load_translator(str(workdir), "averaged")
    export_saved_model(translator, str(workdir / "saved_model"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_the_readme_shows_the_three_python_examples():
    blocks = python_blocks(README.read_text(encoding="utf-8"))
    assert len(blocks) == 3, blocks
    assert "from transformer import Transformer" in blocks[0]
    assert "load_translator" in blocks[1]
    assert "tf.saved_model.load" in blocks[2]


def test_every_python_block_of_the_readme_runs(main_sh_outputs, capsys):
    for number, block in enumerate(python_blocks(README.read_text(encoding="utf-8")), 1):
        exec(compile(block, f"README.md python block {number}", "exec"), {"__name__": "readme"})
    printed = capsys.readouterr().out.splitlines()
    assert len(printed) == 2  # one translation list, one translated string
    assert printed[0].startswith("['") and printed[1]
