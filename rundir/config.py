"""A work directory's ``config.json``: the config its run was trained with."""

from __future__ import annotations

import json
import os

import ml_collections

CONFIG_FILE = "config.json"


def load_config(workdir: str) -> ml_collections.ConfigDict:
    """The config a work directory was trained with (its ``config.json``).

    Example:
        >>> load_config("runs/multi30k_de_en").model.d_model
        256
    """
    path = os.path.join(workdir, CONFIG_FILE)
    if not os.path.exists(path):
        raise FileNotFoundError(
            f"{workdir} is not a training work directory (no {CONFIG_FILE}); train first with "
            f"`python train.py --config=configs/multi30k_de_en.py --workdir={workdir}`."
        )
    with open(path, encoding="utf-8") as file:
        return ml_collections.ConfigDict(json.load(file))
