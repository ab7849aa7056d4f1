"""Dependencies point one way: each package imports only the packages below it.

transformer, data_pipeline, common  <-  decoding  <-  training, inference  <-  cli, scripts
(inference may use training's builders, checkpoints and config, never its loop or data).
serving (the server of serve.py) imports nothing of the project: a SavedModel is all it needs.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
PACKAGES = (
    "transformer",
    "data_pipeline",
    "common",
    "decoding",
    "training",
    "inference",
    "serving",
)
ALLOWED = {
    "transformer": {"transformer"},
    "data_pipeline": {"data_pipeline"},
    "common": {"common"},
    "decoding": {"decoding", "transformer", "data_pipeline"},
    "training": {"training", "transformer", "data_pipeline", "common", "decoding"},
    "inference": {
        "inference",
        "transformer",
        "data_pipeline",
        "common",
        "decoding",
        "training.builders",
        "training.checkpoints",
        "training.config",
    },
    "serving": {"serving"},
}


def project_imports(path: Path) -> set[str]:
    """The project modules a file imports (``a.b`` for ``from a.b import c``)."""
    imported = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            imported.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            imported.add(node.module)
            imported.update(f"{node.module}.{alias.name}" for alias in node.names)
    return {name for name in imported if name.split(".")[0] in PACKAGES}


def allowed(name: str, rules: set[str]) -> bool:
    return any(name == rule or name.startswith(rule + ".") for rule in rules) or (
        # `from training import config` names the module training.config.
        name in PACKAGES and name in {rule.split(".")[0] for rule in rules}
    )


@pytest.mark.parametrize("package", PACKAGES)
def test_each_package_imports_only_the_packages_below_it(package):
    violations = [
        f"{path.relative_to(REPO_ROOT)} imports {name}"
        for path in sorted((REPO_ROOT / package).rglob("*.py"))
        for name in sorted(project_imports(path))
        if not allowed(name, ALLOWED[package])
    ]
    assert not violations, violations


def test_the_rules_catch_a_training_module_importing_inference(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("from inference.evaluation import evaluate_split\nfrom training import step\n")
    names = project_imports(bad)
    assert sorted(name for name in names if not allowed(name, ALLOWED["training"])) == [
        "inference.evaluation",
        "inference.evaluation.evaluate_split",
    ]
    assert not allowed("training.trainer", ALLOWED["inference"])


def test_serve_py_needs_the_serving_package_only():
    assert {name.split(".")[0] for name in project_imports(REPO_ROOT / "serve.py")} == {"serving"}
