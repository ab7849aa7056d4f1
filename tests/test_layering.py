"""Dependencies point one way (the README's Layout): each package imports its own modules and
the packages :data:`MAY_IMPORT` lists for it, nothing else, and no exceptions.

    common  <-  transformer, data_pipeline  <-  decoding  <-  exports, rundir
        <-  training | inference  <-  cli, configs  <-  the scripts, benchmarks
    common, exports  <-  serving  <-  the scripts, benchmarks

training and inference sit side by side and never import each other. serving (the server of
serve.py) imports the export contract and the runtimes that read exports (``exports``) and
nothing of ``inference``: an exported SavedModel or CTranslate2 export is all it needs.
"""

from __future__ import annotations

import ast
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
_BELOW_TRAINING = {"common", "transformer", "data_pipeline", "decoding", "rundir"}
# The packages each package may import directly (besides itself): a graph without cycles.
MAY_IMPORT = {
    "common": set(),
    "transformer": {"common"},
    "data_pipeline": {"common"},
    "decoding": {"common", "transformer", "data_pipeline"},
    "exports": {"common", "decoding"},
    "rundir": {"common", "transformer", "data_pipeline"},
    "training": _BELOW_TRAINING,
    "inference": _BELOW_TRAINING | {"exports"},
    "serving": {"common", "exports"},
    "cli": _BELOW_TRAINING | {"exports", "training", "inference"},
    "configs": {"common", "decoding"},
    "benchmarks": _BELOW_TRAINING
    | {"exports", "training", "inference", "serving", "cli", "configs"},
}
PACKAGES = tuple(MAY_IMPORT)
SCRIPT = "script"  # the top-level *.py scripts: they may import any package
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
    """Whether package ``importer`` (or a script) may import module or package ``imported``."""
    package = imported.split(".")[0]
    return importer in (package, SCRIPT) or package in MAY_IMPORT[importer]


def test_the_allowed_imports_form_a_graph_without_cycles():
    try:
        order = list(TopologicalSorter(MAY_IMPORT).static_order())
    except CycleError as error:
        pytest.fail(f"the layers import each other in a cycle: {error.args[1]}")
    assert set(order) == set(PACKAGES)


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
        name for name in project_imports(REPO_ROOT / script) if not allowed(SCRIPT, name)
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
    assert not allowed("serving", "decoding.translator") and not allowed("exports", "inference")
    assert not allowed("decoding", "exports.contract")
    assert allowed("serving", "exports.ctranslate2") and allowed("inference", "exports.contract")
    assert allowed("inference", "rundir") and allowed(SCRIPT, "serving")


def test_serve_py_needs_the_serving_package_and_the_quiet_start_only():
    assert project_imports(REPO_ROOT / "serve.py") <= {"serving", "cli"}
