import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

from common.errors import ConfigError
from common.special_tokens import BOS_ID, PAD_ID
from decoding.ensemble import Ensemble
from decoding.search import decode
from decoding.translator import encode_sources
from exports.saved_model import SavedModelTranslator
from inference.export import export_saved_model
from inference.loading import load_model, load_translator
from rundir.checkpoints import UnreadableCheckpointError

REPO_ROOT = Path(__file__).resolve().parents[2]
SENTENCES = [
    "Ein Hund rennt.",
    "Zwei Männer stehen auf einer Straße und reden.",
    "Eine Frau spielt Gitarre.",
    "Kinder spielen im Park.",
]


def test_an_ensemble_of_two_work_directories_writes_their_mean_distributions_best_tokens(
    tiny_run, tiny_run_at_its_first_checkpoint
):
    workdir, earlier = tiny_run[0], tiny_run_at_its_first_checkpoint
    ensemble, path = load_translator(workdir, "latest", ensemble=[earlier])  # greedy (tiny.py)
    assert isinstance(ensemble.model, Ensemble) and ensemble.beam_size == 1
    latest = [tf.train.latest_checkpoint(f"{member}/checkpoints") for member in (workdir, earlier)]
    assert path == ", ".join(latest) and Path(latest[0]).name != Path(latest[1]).name
    source_ids = encode_sources(
        ensemble.tokenizer, tf.constant(SENTENCES), ensemble.max_source_length
    )
    output_ids = decode(ensemble.model, source_ids, ensemble.options, dynamic_shapes=True)
    translations = ensemble.translate(SENTENCES, progress=False)
    assert [t.decode() for t in ensemble.tokenizer.detokenize(output_ids).numpy()] == translations
    # Neither member alone translates so.
    members = [load_translator(member, "latest")[0] for member in (workdir, earlier)]
    for alone in members:
        assert alone.translate(SENTENCES, progress=False) != translations
    # Each written token is the best one of the mean of the members' probabilities, each member
    # loaded on its own and run on the whole output at once (no cache).
    target_in = tf.concat([tf.fill([len(SENTENCES), 1], BOS_ID), output_ids[:, :-1]], axis=1)
    probabilities = np.mean(
        [
            tf.nn.softmax(alone.model.decode(target_in, *alone.model.encode(source_ids)))
            for alone in members
        ],
        axis=0,
    )
    probabilities[..., ensemble.options.never_written] = 0.0
    ids = output_ids.numpy()
    written = ids != PAD_ID
    chosen = np.take_along_axis(probabilities, ids[..., np.newaxis], -1)[..., 0]
    np.testing.assert_array_less(probabilities.max(-1)[written] - chosen[written], 1e-5)


def test_an_exported_ensemble_serves_its_translations(
    tiny_run, tiny_run_at_its_first_checkpoint, tmp_path
):
    workdir, earlier = tiny_run[0], tiny_run_at_its_first_checkpoint
    ensemble, _ = load_translator(workdir, "latest", beam_size=2, ensemble=[earlier])
    translations = ensemble.translate(SENTENCES, progress=False)
    for member in (workdir, earlier):  # (an export of one member would give its translations)
        alone, _ = load_translator(member, "latest", beam_size=2)
        assert alone.translate(SENTENCES, progress=False) != translations
    exported = SavedModelTranslator(export_saved_model(ensemble, str(tmp_path / "saved_model")))
    assert exported.translate(SENTENCES, progress=False) == translations


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
    path = tf.train.latest_checkpoint(str(workdir / directory))
    data = Path(f"{path}.data-00000-of-00001")
    data.write_bytes(data.read_bytes()[:100])
    with pytest.raises(UnreadableCheckpointError) as raised:
        load_model(str(workdir), which)
    assert path == f"{workdir}/{directory}/{Path(path).name}"
    assert str(raised.value) == (
        f"The {which} checkpoint {path} cannot be read (Read less bytes than requested): its "
        f"files are truncated or corrupt. {advice}"
    )
