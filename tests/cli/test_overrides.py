"""Overrides: `graphbook run --set NODE.PARAM=VALUE` and `run_workflow(overrides=...)` give the
outputs the same values saved in the file give; bad overrides are clear errors that change
nothing."""

from __future__ import annotations

import json
import textwrap
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from graphbook.cli import main
from graphbook.engine.executor import run_workflow
from graphbook.errors import GraphbookError, ParamError, WorkflowError
from graphbook.nodes import library_registry
from graphbook.overrides import parse_setting, parse_value, with_overrides
from graphbook.params import ParamSpec
from graphbook.workflow import Workflow

NODES = textwrap.dedent(
    """
    import json

    from graphbook import param, source, step


    @step("Over/OverMake")
    @source()
    @param("count", "int", default=2)
    @param("scale", "float", default=1.0)
    @param("flag", "boolean", default=False)
    @param("tags", "list[str]", default=[])
    @param("extra", "dict", default={})
    @param("name", "string", default="x")
    @param("keep", "function", default="lambda i: True")
    def make(ctx):
        for i in range(ctx.count):
            if ctx.keep(i):
                yield {"i": i, "v": i * ctx.scale, "flag": ctx.flag, "tags": ctx.tags,
                       "extra": ctx.extra, "name": ctx.name}


    @step("Over/OverWrite")
    @param("path", "string", default="out.jsonl")
    def write(ctx, data):
        with open(ctx.path, "a") as f:
            f.write(json.dumps(data, sort_keys=True) + "\\n")
    """
)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "custom_nodes").mkdir()
    (tmp_path / "custom_nodes" / "nodes.py").write_text(NODES)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def workflow(
    make: dict[str, Any] | None = None, out: str = "out.jsonl", label: str = "maker"
) -> dict[str, Any]:
    return {
        "format": "graphbook.workflow",
        "version": 1,
        "nodes": [
            {"id": "m", "type": "OverMake", "label": label, "params": make or {}},
            {"id": "w", "type": "OverWrite", "params": {"path": out}},
        ],
        "edges": [{"source": "m", "output": "out", "target": "w"}],
    }


def save(path: Path, data: dict[str, Any]) -> Path:
    path.write_text(json.dumps(data))
    return path


SAVED = {
    "count": 4,
    "scale": 2.5,
    "flag": True,
    "tags": ["a", "b"],
    "extra": {"k": 1},
    "name": "hello",
    "keep": "lambda i: i % 2 == 0",
}
SETS = [
    "m.count=4",
    "maker.scale=2.5",
    "m.flag=yes",
    'm.tags=["a", "b"]',
    'm.extra={"k": 1}',
    "m.name=hello",
    "m.keep=lambda i: i % 2 == 0",
]


def test_cli_set_gives_the_outputs_of_the_same_values_saved_in_the_file(project: Path) -> None:
    saved = save(project / "saved.json", workflow(SAVED, out="saved.jsonl"))
    plain = save(project / "plain.json", workflow(out="set.jsonl"))
    before = plain.read_text()
    assert main(["run", str(saved), "--quiet", "--workers", "0"]) == 0
    args = [a for s in SETS for a in ("--set", s)]
    assert main(["run", str(plain), "--quiet", "--workers", "0", *args]) == 0
    expected = (project / "saved.jsonl").read_text()
    assert expected.count("\n") == 2  # the function kept 0 and 2
    assert (project / "set.jsonl").read_text() == expected
    assert plain.read_text() == before  # the file is not changed


def test_python_overrides_give_the_outputs_of_the_same_values_saved(project: Path) -> None:
    saved = save(project / "saved.json", workflow(SAVED))
    plain = save(project / "plain.json", workflow())
    nodes = [project / "custom_nodes"]
    expected = run_workflow(saved, nodes=nodes, collect=True).output("m")
    result = run_workflow(plain, nodes=nodes, collect=True, overrides={"maker": SAVED})
    assert result.ok and result.output("m") == expected and len(expected) == 2
    loaded = Workflow.load(plain)
    run_workflow(loaded, nodes=nodes, overrides={"m": {"count": 1}})
    assert loaded.nodes["m"].params == {}  # the workflow given is not changed


@pytest.mark.parametrize(
    ("sets", "words"),
    [
        (["m.count=many"], ["'m'", "'count'", "whole number", "int"]),
        (["m.flag=maybe"], ["'m'", "'flag'", "true or false", "boolean"]),
        (["m.tags=[a"], ["'m'", "'tags'", "JSON", "list[string]"]),
        (['m.tags={"a": 1}'], ["'m'", "'tags'", "a list of strings"]),
        (["m.extra=[1]"], ["'m'", "'extra'", "dict"]),
        (["m.keep=def ("], ["'m'", "'keep'", "syntax error"]),
        (["m.nope=1"], ["'m'", "no parameter 'nope'", "count", "scale"]),
        (["ghost.count=1"], ["'ghost'", "'m' (maker)", "'w' (OverWrite)"]),
        (["m.count"], ["NODE.PARAM=VALUE"]),
        (["count=1"], ["NODE.PARAM=VALUE"]),
        (["m.=1"], ["NODE.PARAM=VALUE"]),
    ],
)
def test_bad_sets_exit_2_naming_what_is_wrong_and_run_nothing(
    project: Path, capsys: pytest.CaptureFixture[str], sets: list[str], words: list[str]
) -> None:
    path = save(project / "wf.json", workflow())
    before = path.read_text()
    args = [a for s in sets for a in ("--set", s)]
    assert main(["run", str(path), "--quiet", "--workers", "0", *args]) == 2
    err = " ".join(capsys.readouterr().err.split())
    for word in words:
        assert word in err, err
    assert not (project / "out.jsonl").exists()
    assert path.read_text() == before


def test_an_ambiguous_title_lists_the_ids(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = workflow()
    data["nodes"].append({"id": "m2", "type": "OverMake", "label": "maker"})
    path = save(project / "wf.json", data)
    assert main(["run", str(path), "--set", "maker.count=1", "--workers", "0"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "'maker'" in err and "'m', 'm2'" in err
    assert not (project / "out.jsonl").exists()


def test_a_title_with_dots_and_a_value_with_equals_signs(project: Path) -> None:
    path = save(project / "wf.json", workflow(label="v1.2 maker"))
    assert main(["run", str(path), "--set", "v1.2 maker.name=a=b", "--workers", "0", "-q"]) == 0
    rows = [json.loads(line) for line in (project / "out.jsonl").read_text().splitlines()]
    assert [r["name"] for r in rows] == ["a=b", "a=b"]


def test_python_overrides_of_a_wrong_type_are_problems_naming_node_param_and_type(
    project: Path,
) -> None:
    path = save(project / "wf.json", workflow())
    nodes = [project / "custom_nodes"]
    with pytest.raises(WorkflowError) as raised:
        run_workflow(path, nodes=nodes, overrides={"m": {"count": "many", "bogus": 1}})
    text = str(raised.value)
    assert "node 'm'" in text and "'count' expects a whole number" in text
    assert "no parameter 'bogus'" in text and "its parameters are" in text
    assert not (project / "out.jsonl").exists()


def test_with_overrides_finds_nodes_by_id_then_unique_title() -> None:
    wf = Workflow()
    wf.add("Split", id="a")
    wf.add("Split", id="b")
    wf.add("Split", id="c")
    wf.nodes["b"] = replace(wf.nodes["b"], label="a")
    changed = with_overrides(wf, {"a": {"x": 1}})  # the id wins over b's title
    assert changed.nodes["a"].params == {"x": 1} and changed.nodes["b"].params == {}
    with pytest.raises(WorkflowError, match="2 nodes have that title") as raised:
        with_overrides(wf, {"Split": {"x": 1}})
    assert "'a', 'c'" in str(raised.value)
    with pytest.raises(WorkflowError, match="give an object"):
        with_overrides(wf, {"a": 3})  # type: ignore[dict-item]
    assert wf.nodes["a"].params == {}
    assert with_overrides(wf, None) is wf


def test_parse_value_reads_each_declared_type() -> None:
    assert parse_value(ParamSpec("n", "int"), "3") == 3
    assert parse_value(ParamSpec("n", "number"), "3.5") == 3.5
    assert parse_value(ParamSpec("n", "float"), "2") == 2.0
    assert [parse_value(ParamSpec("b", "boolean"), t) for t in ("1", "No", "TRUE")] == [
        True,
        False,
        True,
    ]
    assert parse_value(ParamSpec("s", "string"), " spaced ") == " spaced "
    assert parse_value(ParamSpec("l", "list[int]"), "[1, 2]") == [1, 2]
    assert parse_value(ParamSpec("f", "function"), "lambda x: x") == "lambda x: x"
    with pytest.raises(ParamError, match="resource"):
        parse_value(ParamSpec("r", "resource"), "x")
    assert parse_setting("a.b.c=d=e") == ("a.b", "c", "d=e")
    with pytest.raises(GraphbookError):
        parse_setting("abc")


def test_registry_is_not_needed_for_python_overrides() -> None:
    wf = Workflow()
    wf.add("Split", id="s")
    assert with_overrides(wf, {"s": {"fn": "lambda d: True"}}).nodes["s"].params
    assert library_registry()  # the registry is only needed to build the graph
