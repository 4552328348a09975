"""0.13 node files and plugins in the catalog: a plugin package's `export()` and `web()`; a
class with no docstring of its own shows no help, not Graphbook's base-class docstring."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from graphbook import Registry
from graphbook.cli import main
from graphbook.core.steps import Step


def test_a_class_without_a_docstring_shows_no_help(project: Path) -> None:
    registry = Registry()
    registry.load_folder(project / "custom_nodes")
    assert registry.get("Filter").doc == "", "the filter guide's class has none"
    assert registry.get("Rows").doc.startswith("Yields `count` rows")


class Documented(Step):
    """Counts things."""


class Inherits(Documented):
    pass


def test_a_docstring_is_inherited_from_the_node_authors_own_base() -> None:
    registry = Registry()
    assert registry.add(Inherits).doc == "Counts things."


def test_a_013_plugin_package_exports_its_nodes_and_says_web_is_not_loaded(
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A 0.13 workflow names the plugin's module; importing it runs the package's
    `__init__` (`from graphbook.plugins import export, web`), whose exports are the nodes."""
    monkeypatch.syspath_prepend(str(project))  # shout_plugin is an installed package
    assert main(["run", "Shout.json"]) == 0
    err = capsys.readouterr().err
    assert "module shout_plugin" not in err, "the plugin imported"
    said = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert any("shout_plugin: web('" in m and "0.13 browser plugins" in m for m in said)
    shouts = [json.loads(line) for line in (project / "shouts.jsonl").read_text().splitlines()]
    assert [s["text"] for s in shouts] == ["HEY!!!", "YOU!!!"]


def test_exports_are_registered_under_their_exported_names(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(project))
    registry = Registry()
    names = {spec.name for spec in registry.load_module("shout_plugin.sources")}
    assert {"Words", "Shout", "Volume"} <= names
    assert registry.get("Shout").doc.startswith("Upper-cases `text`")
    assert registry.get("Volume").is_resource


def test_the_plugin_api_under_0_13s_paths() -> None:
    from graphbook.core import plugins as core_plugins
    from graphbook.plugins import export, web

    assert core_plugins.export is export and core_plugins.web is web
    with pytest.raises(ValueError, match="Only Step and Resource classes can be exported"):
        export("Nothing", object)
