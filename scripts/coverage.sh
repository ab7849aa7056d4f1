#!/usr/bin/env bash
# Runs the test suite (scripts/test.sh; extra arguments go to pytest) under coverage, the scripts
# and servers the tests start included, then prints line and branch coverage per package.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
rm -f .coverage .coverage.*
bash scripts/test.sh --cov --cov-report= "$@"
.venv/bin/coverage json -q -o .coverage.json
.venv/bin/python - <<'EOF'
import collections, json

files = json.load(open(".coverage.json"))["files"]
totals = collections.defaultdict(collections.Counter)
for path, data in files.items():
    package = path.split("/")[0] if "/" in path else "scripts (*.py at the top)"
    for group in (package, "all"):
        totals[group].update(data["summary"])
print(f"| package | lines | covered | line % | branches | covered | branch % |")
print("| --- | --- | --- | --- | --- | --- | --- |")
for package, s in sorted(totals.items(), key=lambda item: (item[0] == "all", item[0])):
    lines, branches = s["num_statements"], s["num_branches"]
    print(
        f"| {package} | {lines} | {s['covered_lines']} | {100 * s['covered_lines'] / lines:.1f} "
        f"| {branches} | {s['covered_branches']} "
        f"| {100 * s['covered_branches'] / max(branches, 1):.1f} |"
    )
EOF
