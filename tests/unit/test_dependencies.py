"""What the bench and the package import is installed by the README's set-up (`scripts/install`:
`pip install -e '.[dev,ray,hf,onnx,mcp,tensorboard,mlflow]'`)."""

from __future__ import annotations

import ast
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LOCAL = {"graphbook", "bench", "graphbook_nodes", "cluster_procs"}
"""Modules of this repository (cluster_procs: tests/ray_cluster/, which bench.ray_stages uses)."""
INSTALLED = ("dev", "ray", "hf", "onnx", "mcp", "tensorboard", "mlflow")
"""The extras scripts/install installs."""


def declared() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    specs = [*project["dependencies"], *(spec for extra in INSTALLED for spec in extras[extra])]
    names = set()
    for spec in specs:
        name = spec.split(";")[0]
        for mark in "<>=!~[ ":
            name = name.split(mark)[0]
        names.add(name.lower().replace("_", "-"))
    return names


def top_level_imports(folder: Path) -> set[str]:
    found: set[str] = set()
    for path in folder.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                found.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                found.add(node.module.split(".")[0])
    return found - LOCAL - set(sys.stdlib_module_names)


@pytest.mark.parametrize("folder", ["bench", "graphbook"])
def test_every_module_imported_is_a_declared_dependency(folder: str) -> None:
    distributions = packages_distributions()
    needed = {
        dist.lower().replace("_", "-")
        for module in top_level_imports(ROOT / folder)
        for dist in distributions.get(module, [module])
    }
    missing = needed - declared() - {"pytorch-triton"}
    assert not missing, f"add {sorted(missing)} to pyproject.toml's dependencies (or an extra)"


def test_the_extras_checked_are_the_ones_scripts_install_installs() -> None:
    install = (ROOT / "scripts" / "install").read_text()
    assert f"-e '.[{','.join(INSTALLED)}]'" in install
