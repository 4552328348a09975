"""The registry: node folders, broken files, reloading, and unknown names."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from graphbook import Registry
from graphbook.errors import GraphbookError
from graphbook.nodes import library_registry
from graphbook.registry import UnknownNodeError


def write(path: Path, source: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    return path


def step_file(name: str, value: str = "1") -> str:
    return f"""
        from graphbook import step

        @step("Test/{name}")
        def {name.lower()}(ctx, data):
            data["value"] = {value}
    """


def class_file(name: str) -> str:
    return f"""
        from graphbook.steps import Step

        class {name}(Step):
            Category = "Test"
    """


def test_load_folder_loads_every_python_file_below_it(tmp_path: Path) -> None:
    write(tmp_path / "a.py", step_file("Alpha"))
    write(tmp_path / "nested" / "deeper" / "b.py", class_file("Beta"))
    write(tmp_path / "notes.txt", "not python")
    registry = Registry()
    loaded = registry.load_folder(tmp_path)
    assert sorted(s.name for s in loaded) == ["Alpha", "Beta"]
    assert "Alpha" in registry and "Beta" in registry
    assert not registry.failures


def test_load_folder_skips_pycache_and_dotfiles(tmp_path: Path) -> None:
    write(tmp_path / "real.py", step_file("Real"))
    write(tmp_path / "__pycache__" / "cached.py", step_file("Cached"))
    write(tmp_path / ".hidden.py", step_file("Hidden"))
    write(tmp_path / ".git" / "hook.py", step_file("Hook"))
    registry = Registry()
    registry.load_folder(tmp_path)
    assert [s.name for s in registry] == ["Real"]


def test_nodes_a_file_imports_are_not_registered_again(tmp_path: Path) -> None:
    write(tmp_path / "uses_builtins.py", "from graphbook.core.steps import Split, Step\n")
    registry = Registry()
    assert registry.load_folder(tmp_path) == []


def test_a_broken_file_is_recorded_and_the_others_still_load(tmp_path: Path) -> None:
    write(tmp_path / "good.py", step_file("Good"))
    broken = write(
        tmp_path / "broken.py",
        """
        from graphbook import step

        raise RuntimeError("model weights missing")
        """,
    )
    write(tmp_path / "syntax.py", "def oops(:\n")
    registry = Registry()
    registry.load_folder(tmp_path)
    assert "Good" in registry
    failure = registry.failures[str(broken.resolve())]
    assert failure.error == "RuntimeError: model weights missing"
    assert "Traceback" in failure.traceback
    assert str(broken) in failure.traceback and "model weights missing" in failure.traceback
    assert any("SyntaxError" in f.error for f in registry.failures.values())


def test_fixing_a_broken_file_clears_its_failure(tmp_path: Path) -> None:
    path = write(tmp_path / "node.py", "import not_a_module_anywhere\n")
    registry = Registry()
    assert registry.load_file(path) == []
    assert "ModuleNotFoundError" in registry.failures[str(path.resolve())].error
    write(path, step_file("Fixed"))
    registry.load_file(path)
    assert "Fixed" in registry and not registry.failures


def test_reloading_a_changed_file_replaces_the_node(tmp_path: Path) -> None:
    path = write(tmp_path / "node.py", step_file("Changing", value="1"))
    registry = Registry()
    registry.load_file(path)
    first = registry.get("Changing")
    write(path, step_file("Changing", value="2"))  # same size, same second: no stale bytecode
    registry.load_file(path)
    second = registry.get("Changing")
    assert second.code_hash != first.code_hash
    assert second.build({})({}) == {"out": [{"value": 2}]}
    assert first.build({})({}) == {"out": [{"value": 1}]}


def test_reloading_drops_nodes_the_file_no_longer_defines(tmp_path: Path) -> None:
    path = write(tmp_path / "node.py", step_file("Old"))
    registry = Registry()
    registry.load_file(path)
    write(path, step_file("New"))
    registry.load_file(path)
    assert "New" in registry and "Old" not in registry


def test_a_failed_reload_keeps_the_nodes_that_worked(tmp_path: Path) -> None:
    path = write(tmp_path / "node.py", step_file("Kept"))
    registry = Registry()
    registry.load_file(path)
    write(path, "this is not python\n")
    registry.load_file(path)
    assert "Kept" in registry
    assert str(path.resolve()) in registry.failures


def test_unloading_a_deleted_file_forgets_its_nodes(tmp_path: Path) -> None:
    path = write(tmp_path / "node.py", step_file("Gone"))
    registry = library_registry()
    registry.load_file(path)
    assert registry.unload_file(path) == ["Gone"]
    assert "Gone" not in registry and "Split" in registry


def test_node_files_can_import_their_siblings(tmp_path: Path) -> None:
    write(tmp_path / "helpers_for_sibling_test.py", "FACTOR = 7\n")
    write(
        tmp_path / "uses_sibling.py",
        """
        from graphbook import step
        from helpers_for_sibling_test import FACTOR

        @step("Sibling")
        def sibling(ctx, data):
            data["factor"] = FACTOR
        """,
    )
    registry = Registry()
    registry.load_folder(tmp_path)
    assert registry.get("Sibling").build({})({}) == {"out": [{"factor": 7}]}


def test_unknown_name_suggests_a_close_match() -> None:
    registry = library_registry()
    with pytest.raises(
        UnknownNodeError, match=r"unknown node type 'LoadJSON'; did you mean 'LoadJSONL'"
    ):
        registry.get("LoadJSON")
    assert registry.suggest("split") == "did you mean 'Split'?"


def test_unknown_name_with_nothing_close_says_where_nodes_come_from() -> None:
    with pytest.raises(UnknownNodeError, match="load the file that defines it"):
        library_registry().get("Zebra")


def test_builtins_are_listed_by_category() -> None:
    names = [(s.category, s.name) for s in library_registry()]
    assert names == sorted(names)
    assert {n for _, n in names} >= {"Split", "Copy", "LoadJSONL", "DumpJSONL", "Number", "Text"}


def test_a_missing_folder_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(GraphbookError, match="does not exist"):
        Registry().load_folder(tmp_path / "nope")


def test_two_steps_with_one_python_name_both_register(tmp_path: Path) -> None:
    write(
        tmp_path / "same_name.py",
        """
        from graphbook import step

        @step("First")
        def on_data(ctx, data):
            data["first"] = True

        @step("Second")
        @staticmethod
        def on_data(data):
            data["second"] = True
        """,
    )
    registry = Registry()
    registry.load_folder(tmp_path)
    assert registry.get("First").build({})({}) == {"out": [{"first": True}]}
    assert registry.get("Second").build({})({}) == {"out": [{"second": True}]}


def test_a_staticmethod_around_a_step_is_registered_once(tmp_path: Path) -> None:
    write(
        tmp_path / "outer.py",
        """
        from graphbook import step

        @staticmethod
        @step("Outer")
        def mark(data):
            data["marked"] = True
        """,
    )
    registry = Registry()
    assert [s.name for s in registry.load_folder(tmp_path)] == ["Outer"]
    assert registry.get("Outer").build({})({}) == {"out": [{"marked": True}]}
