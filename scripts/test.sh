#!/usr/bin/env bash
# Sets up .venv/ and runs ruff (check, format --check) and the test suite in two processes
# (pytest-xdist). Exits non-zero when anything fails. Arguments go to pytest: -m "not slow" (the
# quick part), -n 0 (one process), a file or -k EXPRESSION.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash scripts/setup.sh
# The demo page's browser test (tests/serving/test_demo_page.py) drives Debian's Chromium.
if [ ! -x /usr/bin/chromium ] && [ "$(id -u)" = 0 ]; then
  echo "Installing Debian's chromium for the browser test..."
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi
export MULTI30K_DIR="${MULTI30K_DIR:-$root/../shared/data/multi30k}"
export TF_CPP_MIN_LOG_LEVEL="${TF_CPP_MIN_LOG_LEVEL:-2}"
.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/python -m pytest -q -n 2 --dist worksteal "$@"
