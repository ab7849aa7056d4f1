"""Trains a Transformer: ``python train.py --config=configs/multi30k_de_en.py --workdir=DIR``, or
its encoder as a text classifier (``--config=configs/spam_assassin.py``).

Any config value can be overridden: ``--config.model.num_layers=4``. Rerunning the same command
resumes from the last complete checkpoint in ``--workdir``; Ctrl-C and SIGTERM save the step reached
first (exit status 130 and 143).
"""

import signal
import sys

from absl import flags
from ml_collections import config_flags

from cli.errors import run_main
from training.trainer import train

SCORE_NAMES = {"validation_bleu": "BLEU", "validation_f1": "F1"}

_CONFIG = config_flags.DEFINE_config_file(
    "config", "configs/multi30k_de_en.py", "Configuration file (ml_collections)."
)
_WORKDIR = flags.DEFINE_string(
    "workdir", None, "Directory for everything the run writes.", required=True
)


def main(argv: list[str]) -> None:
    del argv
    result = train(_CONFIG.value, _WORKDIR.value)
    if result.terminated:
        sys.exit(128 + signal.SIGTERM)
    if result.best_score is None:
        print(f"Finished at step {result.step}; no validation score (train.eval_every = 0).")
    else:
        name = SCORE_NAMES.get(result.score_name, result.score_name)
        print(f"Finished at step {result.step}; best validation {name} {result.best_score:.4g}.")


if __name__ == "__main__":
    run_main(main)
