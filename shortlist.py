"""Builds a run's vocabulary shortlist: ``python shortlist.py --workdir=DIR``.

Counts the run's training pairs and writes ``DIR/shortlist.npz`` (``inference.shortlist``):
translate.py, evaluate.py, score.py and export.py then search over each batch's candidate
target pieces instead of the whole vocabulary (faster in batches; ``--noshortlist``: the whole
vocabulary).
"""

import time

from absl import flags

from cli.errors import run_main
from inference.shortlist import DEFAULT_FREQUENT, DEFAULT_K, build_shortlist
from rundir.layout import RunDirectory

_WORKDIR = flags.DEFINE_string("workdir", None, "Training work directory.", required=True)
_K = flags.DEFINE_integer(
    "k", DEFAULT_K, "Target pieces kept for each source piece.", lower_bound=1
)
_FREQUENT = flags.DEFINE_integer(
    "frequent",
    DEFAULT_FREQUENT,
    "The most frequent target pieces, kept for every batch.",
    lower_bound=0,
)


def main(argv: list[str]) -> None:
    del argv
    start = time.perf_counter()
    shortlist = build_shortlist(_WORKDIR.value, _K.value, _FREQUENT.value)
    print(
        f"Wrote {RunDirectory(_WORKDIR.value).shortlist} ({len(shortlist.table)} source pieces, "
        f"{_K.value} target pieces each, {len(shortlist.frequent)} frequent ones) in "
        f"{time.perf_counter() - start:.1f} s."
    )


if __name__ == "__main__":
    run_main(main)
