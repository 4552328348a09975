"""Components: their file format, flattening (nested too), problems by path, the library and
its versions, and unpacking."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from graphbook import Workflow, build_graph, param, source, step
from graphbook.components import Library, component, flatten, loads, unpack
from graphbook.errors import WorkflowError, WorkflowFormatError
from graphbook.nodes import library_registry
from graphbook.workflow import COMPONENT, ComponentBody, ComponentRef, Edge, Node
from graphbook.workflow_codec import body_json


@step("Comp/Numbers")
@source()
@param("n", "int", default=3)
def numbers(ctx: Any) -> Any:
    for i in range(ctx.n):
        yield {"x": i}


@step("Comp/Add")
@param("add", "int", default=1)
def add(ctx: Any, data: dict[str, Any]) -> None:
    data["x"] += ctx.add


def adder(first: int = 1, second: int = 10) -> ComponentBody:
    """a -> b inside; `in` feeds a, `out` is b's, `first`/`second` set a's and b's `add`."""
    inner = Workflow()
    a = inner.add(add, id="a", add=first)
    b = inner.add(add, id="b", add=second)
    inner.connect(a, b)
    return component(
        inner,
        inputs={"in": a},
        outputs={"out": b},
        params={"first": (a, "add"), "second": (b, "add")},
    )


def outer(body: ComponentBody | ComponentRef, **values: Any) -> Workflow:
    wf = Workflow()
    src = wf.add(numbers, id="src")
    comp = wf.add(body, id="comp", **values)
    end = wf.add(add, id="end", add=0)
    wf.connect(src, comp)
    wf.connect(comp, end)
    return wf


def test_a_component_round_trips_through_the_file_readably() -> None:
    wf = outer(adder(), first=5)
    text = wf.dumps()
    data = json.loads(text)
    node = next(n for n in data["nodes"] if n["id"] == "comp")
    assert node["type"] == COMPONENT
    assert node["params"] == {"first": 5}
    assert node["component"]["inputs"] == {"in": {"node": "a", "input": "in"}}
    assert node["component"]["outputs"] == {"out": {"node": "b", "output": "out"}}
    assert node["component"]["params"]["second"] == {"node": "b", "param": "add"}
    assert [n["id"] for n in node["component"]["nodes"]] == ["a", "b"]
    assert '"component": {\n' in text  # indented, not one long line
    again = Workflow.loads(text)
    assert again.nodes["comp"].component == wf.nodes["comp"].component
    assert again.dumps() == text


def test_flattening_gives_inner_nodes_path_ids_and_the_values_set_on_the_component() -> None:
    flat, problems = flatten(outer(adder(), first=5))
    assert problems == []
    assert set(flat.nodes) == {"src", "comp/a", "comp/b", "end"}
    assert flat.nodes["comp/a"].params == {"add": 5}
    assert flat.nodes["comp/b"].params == {"add": 10}
    assert {(e.source, e.target) for e in flat.edges} == {
        ("src", "comp/a"),
        ("comp/a", "comp/b"),
        ("comp/b", "end"),
    }


def test_nested_components_flatten_to_nested_paths() -> None:
    middle = Workflow()
    inside = middle.add(adder(), id="inner", second=7)
    last = middle.add(add, id="last", add=100)
    middle.connect(inside, last)
    body = component(
        middle,
        inputs={"in": ("inner", "in")},
        outputs={"out": last},
        params={"x": (inside, "first")},
    )
    flat, problems = flatten(outer(body, x=2))
    assert problems == []
    assert set(flat.nodes) == {"src", "comp/inner/a", "comp/inner/b", "comp/last", "end"}
    assert flat.nodes["comp/inner/a"].params == {"add": 2}
    assert flat.nodes["comp/inner/b"].params == {"add": 7}
    graph = build_graph(outer(body, x=2), library_registry())
    assert list(graph.nodes) == ["src", "comp/inner/a", "comp/inner/b", "comp/last", "end"]


def test_a_problem_inside_a_component_names_the_inner_node_by_its_path() -> None:
    body = adder()
    broken = replace(body, nodes={**body.nodes, "b": Node("b", "Comp/Nope")})
    with pytest.raises(WorkflowError) as caught:
        build_graph(outer(broken), library_registry())
    assert [p.node_id for p in caught.value.problems] == ["comp/b"]
    assert "unknown node type 'Comp/Nope'" in str(caught.value)


def test_a_wrong_value_on_an_exposed_parameter_is_reported_on_the_inner_node() -> None:
    with pytest.raises(WorkflowError) as caught:
        build_graph(outer(adder(), first="many"), library_registry())
    assert [p.node_id for p in caught.value.problems] == ["comp/a"]


def test_a_library_component_is_read_at_its_current_version(tmp_path: Path) -> None:
    library = Library(tmp_path / "components")
    ref = library.save("adder", adder())
    assert ref.version and len(ref.version) == 12
    wf = outer(ref, second=20)
    wf.library = library.folder
    flat = flatten(wf)[0]
    assert flat.nodes["comp/b"].params == {"add": 20}
    library.save("adder", adder(first=3))  # edited in the library: the workflow gets it
    assert flatten(wf)[0].nodes["comp/a"].params == {"add": 3}


def test_a_port_gone_from_the_library_component_is_a_clear_problem(tmp_path: Path) -> None:
    library = Library(tmp_path / "components")
    made_from = library.save("adder", adder())
    wf = outer(made_from, second=2)
    wf.library = library.folder
    edited = adder()
    library.save("adder", ComponentBody(edited.nodes, edited.edges, edited.inputs, {}, {}))
    with pytest.raises(WorkflowError) as caught:
        build_graph(wf, library_registry())
    text = str(caught.value)
    assert "node 'comp'" in text
    assert "has no output 'out'" in text and "has no parameter 'second'" in text
    assert "components/adder.json" in text and f"made from {made_from.version}" in text


def test_a_missing_library_component_names_the_node_and_the_file(tmp_path: Path) -> None:
    wf = outer(ComponentRef("gone", "abc"))
    wf.library = tmp_path
    with pytest.raises(WorkflowError) as caught:
        build_graph(wf, library_registry())
    assert caught.value.problems[0].node_id == "comp"
    assert "library component 'gone'" in str(caught.value)


def test_a_workflow_file_finds_the_library_beside_its_folder(tmp_path: Path) -> None:
    Library(tmp_path / "components").save("adder", adder())
    wf = outer(ComponentRef("adder"))
    wf.save(tmp_path / "workflows" / "w.json")
    loaded = Workflow.load(tmp_path / "workflows" / "w.json")
    assert loaded.library == (tmp_path / "components").resolve()
    assert "comp/a" in flatten(loaded)[0].nodes


def test_library_files_refuse_a_wrong_format_and_a_path_outside() -> None:
    with pytest.raises(WorkflowFormatError, match="not a component file"):
        loads('{"format": "graphbook.workflow", "version": 1}', "x.json")
    with pytest.raises(WorkflowFormatError, match="not a component name"):
        Library(Path("/tmp")).path("../etc/passwd")


def test_unpacking_restores_plain_nodes_wired_as_before() -> None:
    wf = outer(adder(), first=5)
    plain = unpack(wf, "comp")
    assert set(plain.nodes) == {"src", "a", "b", "end"}
    assert plain.nodes["a"].params == {"add": 5}
    assert set(plain.edges) == {
        Edge("src", "out", "a"),
        Edge("a", "out", "b"),
        Edge("b", "out", "end"),
    }
    assert build_graph(plain, library_registry()).nodes.keys() == {"src", "a", "b", "end"}


def test_a_component_made_from_nodes_not_in_it_is_refused() -> None:
    with pytest.raises(ValueError, match="not in it"):
        component(Workflow(), outputs={"out": ("ghost", "out")})


DOC = Path(__file__).parents[2] / "docs" / "workflow-format.md"


def doc_block(language: str, after: str = "") -> str:
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index("## Components") :]
    section = section[section.index(after) :]
    start = section.index(f"```{language}\n") + len(f"```{language}\n")
    return section[start : section.index("```", start)]


def test_the_documented_component_is_what_the_documented_python_builds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, Any] = {}
    exec(doc_block("python", "In Python:"), namespace)
    built = namespace["wf"].nodes["clean"]
    documented = json.loads(doc_block("json"))
    built_json, documented_json = body_json(built.component), documented["component"]
    for data in (built_json, documented_json):
        for node in data["nodes"]:
            node.pop("position")
    assert built_json == documented_json
    assert built.params == documented["params"]
    graph = build_graph(namespace["wf"], library_registry())
    assert {"clean/keep", "clean/tidy", "clean2/keep", "clean2/tidy"} <= set(graph.nodes)
    assert graph.nodes["clean2/keep"].params["expression"] == "score > 0.9"
    assert set(namespace["plain"].nodes) == {"rows", "keep", "tidy", "clean2"}


def test_the_shared_fixture_is_canonical() -> None:
    """The browser's tests read the same file and write it byte for byte (components.test.ts)."""
    path = Path(__file__).parents[1] / "fixtures" / "component_workflow.json"
    text = path.read_text(encoding="utf-8")
    assert Workflow.loads(text).dumps() == text
