"""The rules the browser applies while editing, held to Python's by shared fixtures in
tests/fixtures/rules/, which web/src/__tests__/sharedRules.test.ts runs against the browser's
twins: the catalog a page gets (its type-fit table included), the problems graphbook/graph.py
finds in a workflow (web/src/workflow/validate.ts), and the wiring left once bypassed and muted
nodes are taken out (graphbook/modes.py, web/src/workflow/modes.ts)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from graphbook import protocol as p
from graphbook.errors import WorkflowError
from graphbook.graph import build_graph
from graphbook.modes import live_edges
from graphbook.nodes import library_registry
from graphbook.params import type_fits
from graphbook.registry import Registry
from graphbook.server.catalog import node_info
from graphbook.workflow import Edge, Workflow

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "rules"
CATALOG: dict[str, Any] = json.loads((FIXTURES / "catalog.json").read_text())
VALIDATE: list[dict[str, Any]] = json.loads((FIXTURES / "validate.json").read_text())
MODES: list[dict[str, Any]] = json.loads((FIXTURES / "modes.json").read_text())


def fixture_registry() -> Registry:
    """The built-in nodes the fixture catalog lists, and no others (suggestions depend on them)."""
    builtins = {spec.name: spec for spec in library_registry()}
    registry = Registry()
    for node in CATALOG["nodes"]:
        registry.add_spec(builtins[node["name"]])
    return registry


def test_the_fixture_catalog_is_what_the_server_sends() -> None:
    sent = p.to_json(p.Catalog(1, [node_info(spec) for spec in fixture_registry()], [], {}))
    for node in sent["nodes"]:  # the checks read neither; they change with every edit
        node["doc"] = node["code_hash"] = ""
    by_name = sorted(CATALOG["nodes"], key=lambda node: node["name"])
    assert sorted(sent["nodes"], key=lambda node: node["name"]) == by_name


def test_the_type_fits_are_the_servers() -> None:
    assert CATALOG["fits"] == type_fits()


@pytest.mark.parametrize("case", VALIDATE, ids=[c["about"] for c in VALIDATE])
def test_graph_finds_the_fixture_problems(case: dict[str, Any]) -> None:
    workflow = Workflow.loads(json.dumps(case["workflow"]))
    try:
        build_graph(workflow, fixture_registry())
        found: list[dict[str, Any]] = []
    except WorkflowError as error:
        found = [{"node": x.node_id, "message": x.message, "fix": x.fix} for x in error.problems]
    assert found == case["problems"]


def edge(raw: dict[str, str]) -> Edge:
    return Edge(raw["source"], raw["output"], raw["target"], raw["input"])


@pytest.mark.parametrize("case", MODES, ids=[c["about"] for c in MODES])
def test_modes_leave_the_fixture_wiring(case: dict[str, Any]) -> None:
    live = live_edges([edge(e) for e in case["edges"]], case["off"])
    assert live == [edge(e) for e in case["live"]]
