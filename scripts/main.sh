#!/usr/bin/env bash
# Sets up .venv/ and runs the main job on the default configuration: train configs/multi30k_de_en.py,
# evaluate BLEU on test2016, export the SavedModel, and print how to translate with it.
# Rerunning it resumes an interrupted training (or skips a finished one).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash scripts/setup.sh
export MULTI30K_DIR="${MULTI30K_DIR:-$root/../shared/data/multi30k}"
export TF_CPP_MIN_LOG_LEVEL="${TF_CPP_MIN_LOG_LEVEL:-2}"
config="${CONFIG:-configs/multi30k_de_en.py}"
workdir="${WORKDIR:-runs/$(basename "$config" .py)}"
python=.venv/bin/python
echo "== 1/3 train $config in $workdir"
$python train.py --config="$config" --workdir="$workdir" "$@"
echo "== 2/3 evaluate on the test split"
$python evaluate.py --workdir="$workdir"
echo "== 3/3 export the SavedModel"
$python export.py --workdir="$workdir" --output="$workdir/saved_model"
echo "Translate interactively:  $python translate.py --workdir=$workdir"
