"""Dependencies point one way (the README's Layout): each package imports its own modules and
the layers below it, never a layer beside or above it.

    common  <-  transformer, data_pipeline  <-  decoding  <-  rundir  <-  training | inference
        <-  cli, configs  <-  the scripts, benchmarks

training and inference sit side by side and never import each other. serving (the server of
serve.py) imports only itself and the CTranslate2 runtime (``inference.ctranslate2_translator``,
which imports no TensorFlow): a SavedModel or a CTranslate2 export is all it needs.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
# Each package's rank: it may import packages of a lower rank (and itself).
RANKS = {
    "common": 0,
    "transformer": 1,
    "data_pipeline": 1,
    "decoding": 2,
    "rundir": 3,
    "training": 4,
    "inference": 4,
    "cli": 5,
    "configs": 5,
    "benchmarks": 6,
}
SERVING = "serving"
PACKAGES = (*RANKS, SERVING)
# The one module outside serving/ that serving may import (with what it imports in turn).
SERVING_MAY_IMPORT = "inference.ctranslate2_translator"
SCRIPTS = sorted(path.name for path in REPO_ROOT.glob("*.py"))


def imported_modules(path: Path) -> set[str]:
    """The project modules a file imports, anywhere in it (lazy imports too)."""
    imported = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            imported.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            imported.add(node.module)
    return {name for name in imported if name.split(".")[0] in PACKAGES}


def project_imports(path: Path) -> set[str]:
    """The top-level project packages a file imports."""
    return {name.split(".")[0] for name in imported_modules(path)}


def allowed(importer: str, imported: str) -> bool:
    """Whether package ``importer`` (or ``"script"``) may import module or package ``imported``."""
    package = imported.split(".")[0]
    if importer == package:
        return True
    if importer == SERVING:
        return imported == SERVING_MAY_IMPORT
    if package == SERVING:
        return importer == "script"
    rank = RANKS[importer] if importer in RANKS else max(RANKS.values()) + 1  # a script
    return RANKS[package] < rank


@pytest.mark.parametrize("package", PACKAGES)
def test_each_package_imports_only_the_layers_below_it(package):
    files = sorted((REPO_ROOT / package).rglob("*.py"))
    assert files
    violations = [
        f"{path.relative_to(REPO_ROOT)} imports {name}"
        for path in files
        for name in sorted(imported_modules(path))
        if not allowed(package, name)
    ]
    assert not violations, violations


@pytest.mark.parametrize("script", SCRIPTS)
def test_each_script_imports_the_layers_below_it(script):
    violations = sorted(
        name for name in project_imports(REPO_ROOT / script) if not allowed("script", name)
    )
    assert not violations, f"{script} imports {violations}"


def test_every_package_of_the_repository_has_a_layer():
    directories = {
        path.parent.name for path in REPO_ROOT.glob("*/__init__.py") if path.parent.name != "tests"
    }
    assert directories | {"benchmarks"} == set(PACKAGES)


def test_the_rules_catch_imports_that_point_the_wrong_way(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("from inference.evaluation import evaluate_split\nimport decoding.beam\n")
    assert project_imports(bad) == {"inference", "decoding"}
    assert not allowed("training", "inference") and not allowed("inference", "training")
    assert not allowed("decoding", "rundir") and not allowed("common", "data_pipeline")
    assert not allowed("serving", "inference.export") and not allowed("cli", "serving")
    assert not allowed("serving", "decoding.translator")
    assert allowed("serving", "inference.ctranslate2_translator")
    assert allowed("inference", "rundir") and allowed("script", "serving")


def test_serve_py_needs_the_serving_package_and_the_quiet_start_only():
    assert project_imports(REPO_ROOT / "serve.py") <= {SERVING, "cli"}
