"""Early stopping: the count of validations without an improvement, and a run that stops."""

from __future__ import annotations

import json

import pytest

from training.early_stopping import EarlyStopping


def test_patience_counts_validations_that_do_not_beat_the_reference_by_min_delta(tmp_path):
    stopping = EarlyStopping(patience=2, min_delta=0.5)
    for step, bleu, stalled in [(1, 10.0, 0), (2, 10.4, 1), (3, 11.0, 0), (4, 11.2, 1)]:
        stopping.add(step, bleu)
        assert stopping.stalled == stalled and not stopping.due
    stopping.add(5, 9.0)
    assert stopping.due
    assert stopping.reason() == (
        "2 validations in a row without a BLEU more than 0.5 above 11.00 (step 3); best/ holds "
        "the best model"
    )
    assert not EarlyStopping(patience=0, min_delta=0.0, history=stopping.history).due
    once = EarlyStopping(patience=1, min_delta=0.0, history=[(1, 10.0), (2, 9.0)])
    assert once.due and once.reason().startswith("1 validation without a BLEU more than 0.0")
    # A resumed run reads the history up to the step it resumes from.
    path = tmp_path / "validations.json"
    path.write_text(json.dumps(stopping.record()))
    resumed = EarlyStopping(patience=2, min_delta=0.5)
    resumed.resume(str(path), step=4)
    assert resumed.history == [(1, 10.0), (2, 10.4), (3, 11.0), (4, 11.2)] and not resumed.due
    resumed.resume(str(tmp_path / "none.json"), step=4)
    assert resumed.history == []


@pytest.mark.slow  # trains
def test_a_run_stops_early_keeps_its_best_and_a_rerun_has_nothing_to_do(
    small_corpus, tmp_path, capsys
):
    from configs import tiny
    from training.trainer import train

    config = tiny.get_config()
    config.data.name = f"text:{small_corpus}:de-en"
    config.data.data_dir = f"{small_corpus}-data"
    config.train.update(steps=200, eval_every=2, checkpoint_every=100, eval_max_sentences=2)
    config.train.update(early_stopping_patience=2, early_stopping_min_delta=100.0)
    workdir = str(tmp_path / "run")
    result = train(config, workdir)
    assert result.stopped_early and result.step == 6  # validations at steps 2, 4 and 6
    out = capsys.readouterr().out
    assert "Stopping early at step 6: 2 validations in a row without a BLEU more than 100.0" in out
    saved = json.loads((tmp_path / "run" / "eval" / "validations.json").read_text())
    assert [step for step, _ in saved["validations"]] == [2, 4, 6]
    assert (tmp_path / "run" / "best" / "best.json").exists()
    again = train(config, workdir)
    assert again.already_finished and again.step == 6
    assert "stopped early at step 6" in capsys.readouterr().out
