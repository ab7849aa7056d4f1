import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from common.errors import ConfigError
from decoding.ensemble import Ensemble
from inference.export import SavedModelTranslator, export_saved_model
from inference.loading import load_model, load_translator
from rundir.checkpoints import UnreadableCheckpointError

REPO_ROOT = Path(__file__).resolve().parents[2]


def test_an_ensemble_of_a_work_directory_with_itself_translates_as_it_alone(tiny_run, tmp_path):
    workdir, _ = tiny_run
    sentences = ["Ein Hund rennt.", "Zwei Männer stehen auf einer Straße und reden."]
    alone, _ = load_translator(workdir, "latest", beam_size=2)
    ensemble, path = load_translator(workdir, "latest", beam_size=2, ensemble=[workdir])
    assert isinstance(ensemble.model, Ensemble) and path.count("ckpt-") == 2
    translations = alone.translate(sentences, progress=False)
    assert ensemble.translate(sentences, progress=False) == translations
    # Exported, the ensemble is one SavedModel that serves the same translations.
    exported = SavedModelTranslator(export_saved_model(ensemble, str(tmp_path / "saved_model")))
    assert exported.translate(sentences, progress=False) == translations


def test_an_ensemble_refuses_a_work_directory_with_another_tokenizer(
    tiny_run, workdir_with_another_tokenizer
):
    with pytest.raises(ConfigError, match="tokenizer differs"):
        load_translator(tiny_run[0], "latest", ensemble=[workdir_with_another_tokenizer])


def test_translating_with_a_work_directory_imports_no_training_code(tiny_run):
    workdir, _ = tiny_run
    script = textwrap.dedent(
        f"""
        import sys
        from inference.loading import load_translator
        translator, _ = load_translator({workdir!r}, "latest", jit_compile=False)
        print(translator.translate(["Ein Hund rennt."], progress=False))
        assert not [name for name in sys.modules if name.split(".")[0] == "training"]
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=REPO_ROOT
    )
    assert result.returncode == 0, result.stderr[-2000:]


@pytest.mark.parametrize(
    "which, advice",
    [
        ("best", "Use --checkpoint=latest or --checkpoint=averaged instead."),
        (
            "latest",
            "Rerun train.py with this --workdir: it resumes from the newest checkpoint that "
            "reads and writes this one again.",
        ),
        ("averaged", "Rerun average_checkpoints.py to write it again."),
    ],
)
def test_a_truncated_checkpoint_stops_the_loading_with_one_line_naming_it(
    tiny_run, tmp_path, which, advice
):
    workdir = tmp_path / "run"
    shutil.copytree(tiny_run[0], workdir, ignore=shutil.ignore_patterns("eval", "saved_model*"))
    shutil.copytree(workdir / "best", workdir / "averaged", dirs_exist_ok=True)
    directory = {"best": "best", "latest": "checkpoints", "averaged": "averaged"}[which]
    data = workdir / directory / "ckpt-60.data-00000-of-00001"
    data.write_bytes(data.read_bytes()[:100])
    with pytest.raises(UnreadableCheckpointError) as raised:
        load_model(str(workdir), which)
    assert str(raised.value) == (
        f"The {which} checkpoint {workdir}/{directory}/ckpt-60 cannot be read (Read less bytes "
        f"than requested): its files are truncated or corrupt. {advice}"
    )
