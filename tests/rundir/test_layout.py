"""The work directory's layout: what training writes is where `RunDirectory` says it is."""

from __future__ import annotations

import os

import pytest

from rundir.layout import RunDirectory

pytestmark = pytest.mark.slow  # the tiny run


def test_a_trained_run_has_each_file_where_its_layout_says(tiny_run):
    workdir, result = tiny_run
    run = RunDirectory(workdir)
    for path in (run.config, run.tokenizer, run.best_scores, run.validation_translations(300)):
        assert os.path.isfile(path), path
    for directory in (run.checkpoints, run.best, run.tensorboard, run.eval):
        assert os.listdir(directory), directory
    assert os.path.isfile(run.data_position(worker=0, step=result.step) + ".index")
    assert (
        run.evaluation(ctranslate2_export="/exports/ct2_int8/")
        == f"{run.eval}/ctranslate2-ct2_int8"
    )
    assert run.evaluation(ensemble=True) == f"{run.eval}/ensemble"
    for litert in ("/exports/litert_int8", "/exports/litert_int8/model.tflite"):
        assert run.evaluation(litert_export=litert) == f"{run.eval}/litert-litert_int8"
