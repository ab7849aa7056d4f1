"""Averages the last N checkpoints: ``python average_checkpoints.py --workdir=DIR --last=5``.

Writes ``DIR/averaged``; use it with ``--checkpoint=averaged`` in evaluate.py, translate.py and
export.py.
"""

from absl import flags

from cli.errors import run_main
from rundir.layout import RunDirectory
from rundir.model import build_workdir_model
from training.averaging import average_checkpoints, last_checkpoints

_WORKDIR = flags.DEFINE_string("workdir", None, "Training work directory.", required=True)
_LAST = flags.DEFINE_integer("last", 5, "How many of the newest checkpoints to average.")


def main(argv: list[str]) -> None:
    del argv
    paths = last_checkpoints(_WORKDIR.value, _LAST.value)
    model, _ = build_workdir_model(_WORKDIR.value)
    path = average_checkpoints(model, paths, RunDirectory(_WORKDIR.value).averaged)
    print(f"Averaged {len(paths)} checkpoints ({paths[0]} .. {paths[-1]}) into {path}.")


if __name__ == "__main__":
    run_main(main)
