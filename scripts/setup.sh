#!/usr/bin/env bash
# Creates (or reuses) the virtualenv at .venv/ in the repository root and installs the pinned
# requirements. Re-running it is cheap: it reinstalls only when a requirements file changed.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
python="${PYTHON:-python3.11}"
command -v "$python" >/dev/null 2>&1 || python=python3
if ! "$python" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))'; then
  echo "error: Python 3.11 is required ($python is $("$python" --version 2>&1))." >&2
  echo "       Install Python 3.11, or set PYTHON=/path/to/python3.11." >&2
  exit 1
fi
[ -x .venv/bin/python ] || "$python" -m venv .venv
stamp=".venv/.requirements.sha256"
want="$(cat requirements.txt requirements-dev.txt | sha256sum | cut -d' ' -f1)"
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "Installing pinned requirements into .venv/ (first run takes a few minutes)..."
  .venv/bin/python -m pip install --disable-pip-version-check -q --upgrade pip >/dev/null
  .venv/bin/python -m pip install --disable-pip-version-check -q -r requirements-dev.txt
  echo "$want" > "$stamp"
fi
