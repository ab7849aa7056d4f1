"""A work directory's ``config.json``: the config its run was trained with, its task, its data."""

from __future__ import annotations

import json
import os

import ml_collections

from data_pipeline.spec import DataSpec, parse
from rundir.layout import RunDirectory

TRANSLATION, CLASSIFICATION = "translation", "classification"
TASKS = (TRANSLATION, CLASSIFICATION)


def load_config(workdir: str) -> ml_collections.ConfigDict:
    """The config a work directory was trained with (its ``config.json``).

    Example:
        >>> load_config("runs/multi30k_de_en").model.d_model
        256
    """
    path = RunDirectory(workdir).config
    if not os.path.exists(path):
        raise FileNotFoundError(
            f"{workdir} is not a training work directory (no {os.path.basename(path)}); train "
            f"first with `python train.py --config=configs/multi30k_de_en.py --workdir={workdir}`."
        )
    with open(path, encoding="utf-8") as file:
        return ml_collections.ConfigDict(json.load(file))


def data_spec(config: ml_collections.ConfigDict) -> DataSpec:
    """The data ``config.data`` names (``name``, ``extra_train_data``, ``data_dir``), parsed
    once: training and every script take this value, never the names.

    Example:
        >>> data_spec(load_config("runs/multi30k_de_en")).directions
        (Direction(source='de', target='en'),)
    """
    data = config.data
    return parse(data.name, data.get("extra_train_data", ""), data.get("data_dir") or None)


def task(config: ml_collections.ConfigDict) -> str:
    """``config.task``: one of :data:`TASKS` (a config.json written before tasks: translation).

    Example:
        >>> task(configs.spam_assassin.get_config())
        'classification'
    """
    return config.get("task", TRANSLATION)
