"""What a Ray actor imports as it starts (graphbook/engine/ray/preload.py): the slow modules the
workflow's code uses, whatever the driver has imported besides (torch takes each actor seconds
of CPU to import, for nothing when its tasks never use it)."""

from __future__ import annotations

import sys
import types
from collections.abc import Iterator

import pytest

from graphbook.engine.ray.preload import of_node_files, of_pickle
from graphbook.registry import NODES_PACKAGE

ray = pytest.importorskip("ray", reason="Ray is not installed: pip install 'graphbook[ray]'")

USES_TORCH = """
import torch

def load(item):
    return torch.zeros(item)
"""
PLAIN = """
import torch  # the file imports it, and the function sent to the actors does not use it

def load(item):
    return item + 1
"""
USES_NUMPY = """
import numpy as np

def load(item):
    return np.zeros(item)
"""


@pytest.fixture
def node_files(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, types.ModuleType]]:
    """Node files as the driver loads them (under NODES_PACKAGE, sent to actors by value), with
    torch imported: the only node files, in a plain script."""
    import torch  # noqa: F401  (the driver has imported it)

    for name in list(sys.modules):
        if name == NODES_PACKAGE or name.startswith(NODES_PACKAGE + "."):
            monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "__main__", types.ModuleType("__main__"))
    files = {}
    for name, source in (("uses_torch", USES_TORCH), ("plain", PLAIN), ("numpy", USES_NUMPY)):
        module = types.ModuleType(f"{NODES_PACKAGE}.{name}")
        exec(compile(source, f"{name}.py", "exec"), module.__dict__)
        monkeypatch.setitem(sys.modules, module.__name__, module)
        ray.cloudpickle.register_pickle_by_value(module)
        files[name] = module
    yield files
    for module in files.values():
        ray.cloudpickle.unregister_pickle_by_value(module)


def test_a_function_is_preloaded_what_it_uses(node_files: dict[str, types.ModuleType]) -> None:
    """A function that uses torch has its actors import torch; one that does not, nothing,
    though the driver and even the function's file imported torch."""
    assert of_pickle(ray.cloudpickle.dumps(node_files["uses_torch"].load)) == ["torch"]
    assert of_pickle(ray.cloudpickle.dumps(node_files["numpy"].load)) == ["numpy"]
    assert of_pickle(ray.cloudpickle.dumps(node_files["plain"].load)) == []


def test_a_function_by_reference_is_preloaded_what_its_module_imports() -> None:
    """A function that travels by reference imports its module on the actor, and with it what
    the module imports at its top."""
    import torch

    assert "torch" in of_pickle(ray.cloudpickle.dumps(torch.nn.functional.relu))
    assert of_pickle(ray.cloudpickle.dumps(len)) == []


def test_the_pools_actors_preload_what_the_node_files_use(
    node_files: dict[str, types.ModuleType], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Started before any run, the pool's actors import what the node files use; with no node
    file using torch, not torch, though the driver has imported it."""
    assert of_node_files() == ["numpy", "torch"]
    monkeypatch.delitem(sys.modules, node_files["uses_torch"].__name__)
    monkeypatch.delitem(sys.modules, node_files["plain"].__name__)
    assert of_node_files() == ["numpy"]
