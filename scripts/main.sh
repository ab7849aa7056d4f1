#!/usr/bin/env bash
# Sets up .venv/ and runs the main job on the default configuration: train configs/multi30k_de_en.py,
# average its last 5 checkpoints, build its vocabulary shortlist, evaluate BLEU on test2016 and
# export the SavedModel from that average (as the README's results do), and print how to
# translate with it.
# Rerunning it resumes an interrupted training (or skips a finished one).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash scripts/setup.sh
export MULTI30K_DIR="${MULTI30K_DIR:-$root/../shared/data/multi30k}"
config="${CONFIG:-configs/multi30k_de_en.py}"
workdir="${WORKDIR:-runs/$(basename "$config" .py)}"
python=.venv/bin/python
echo "== 1/5 train $config in $workdir"
$python train.py --config="$config" --workdir="$workdir" "$@"
echo "== 2/5 average the last 5 checkpoints"
$python average_checkpoints.py --workdir="$workdir" --last=5
echo "== 3/5 build the vocabulary shortlist"
$python shortlist.py --workdir="$workdir"
echo "== 4/5 evaluate the averaged checkpoint on the test split"
$python evaluate.py --workdir="$workdir" --checkpoint=averaged
echo "== 5/5 export the SavedModel of the averaged checkpoint"
$python export.py --workdir="$workdir" --checkpoint=averaged --output="$workdir/saved_model"
echo "Translate interactively:  $python translate.py --workdir=$workdir --checkpoint=averaged"
