"""Step and Resource classes: the lifecycle, routing, sources, the built-ins, import paths."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

import pytest

from graphbook import Registry, Workflow, build_graph
from graphbook.nodes import library_registry
from graphbook.steps import GeneratorSourceStep, RouteError, SourceStep, Step

FIXTURES = Path(__file__).parent.parent / "fixtures"


class Recorder(Step):
    """Records every lifecycle call and routes where the dict's `to` says."""

    Outputs: ClassVar[list[str]] = ["A", "B"]

    def __init__(self, item_key: str | None = None) -> None:
        super().__init__(item_key=item_key)
        self.calls: list[tuple[Any, ...]] = []

    def on_data(self, data: dict[str, Any]) -> None:
        self.calls.append(("on_data", data["id"]))

    def on_item(self, item: Any, data: dict[str, Any]) -> None:
        self.calls.append(("on_item", item))

    def on_after_item(self, data: dict[str, Any]) -> None:
        self.calls.append(("on_after_item", data["id"]))

    def route(self, data: dict[str, Any]) -> Any:
        self.calls.append(("route", data["id"]))
        return data.get("to")


def test_lifecycle_runs_in_order_with_one_on_item_per_item() -> None:
    step = Recorder(item_key="paths")
    step({"id": 1, "paths": ["a", "b", "c"], "to": "A"})
    assert step.calls == [
        ("on_data", 1),
        ("on_item", "a"),
        ("on_item", "b"),
        ("on_item", "c"),
        ("on_after_item", 1),
        ("route", 1),
    ]


def test_a_single_value_under_item_key_is_one_item() -> None:
    step = Recorder(item_key="path")
    step({"id": 1, "path": "a.png", "to": "A"})
    assert ("on_item", "a.png") in step.calls


def test_without_item_key_on_item_is_not_called() -> None:
    step = Recorder()
    step({"id": 1, "to": "A"})
    assert [c[0] for c in step.calls] == ["on_data", "on_after_item", "route"]


def test_a_missing_item_key_says_which_keys_exist() -> None:
    with pytest.raises(Exception, match=r"item_key 'paths'.*keys: 'id'"):
        Recorder(item_key="paths")({"id": 1})


def test_route_returning_an_output_name() -> None:
    assert Recorder()({"id": 1, "to": "B"}) == {"B": [{"id": 1, "to": "B"}]}


def test_route_returning_a_mapping_of_outputs() -> None:
    first, second = {"n": 1}, {"n": 2}
    result = Recorder()({"id": 1, "to": {"A": [first, second], "B": first}})
    assert result == {"A": [first, second], "B": [first]}


def test_route_returning_none_drops_the_dict() -> None:
    assert Recorder()({"id": 1, "to": None}) == {}


def test_route_to_an_undeclared_output_is_a_clear_error() -> None:
    with pytest.raises(RouteError, match=r"Recorder routed a dict to output 'C'.*outputs: A, B"):
        Recorder()({"id": 1, "to": "C"})


def test_route_returning_something_unusable_is_a_clear_error() -> None:
    with pytest.raises(RouteError, match="route returned int; return an output name"):
        Recorder()({"id": 1, "to": 3})


def test_default_route_is_the_first_output() -> None:
    class Plain(Step):
        pass

    assert Plain()({"x": 1}) == {"out": [{"x": 1}]}


class TwoOutputSource(SourceStep):
    Outputs: ClassVar[list[str]] = ["out", "rest"]

    def __init__(self, result: Any) -> None:
        super().__init__()
        self.result = result

    def load(self) -> Any:
        return self.result


@pytest.mark.parametrize(
    ("loaded", "expected"),
    [
        ({"x": 1}, [("out", {"x": 1})]),
        ([{"x": 1}, {"x": 2}], [("out", {"x": 1}), ("out", {"x": 2})]),
        ({"out": [{"x": 1}], "rest": {"y": 2}}, [("out", {"x": 1}), ("rest", {"y": 2})]),
        ({"out": []}, []),
        (None, []),
    ],
    ids=["dict", "list", "mapping", "empty", "none"],
)
def test_source_outputs(loaded: Any, expected: list[Any]) -> None:
    assert list(TwoOutputSource(loaded).produce()) == [expected]


def test_generator_source_hands_on_every_yield() -> None:
    class Counter(GeneratorSourceStep):
        def load(self) -> Any:
            yield {"i": 0}
            yield [{"i": 1}, {"i": 2}]
            yield {"out": [{"i": 3}]}

    assert list(Counter().produce()) == [
        [("out", {"i": 0})],
        [("out", {"i": 1}), ("out", {"i": 2})],
        [("out", {"i": 3})],
    ]


def build(name: str, **params: Any) -> Any:
    """A built-in node, its parameters checked and typed as a workflow would."""
    workflow = Workflow()
    workflow.add(name, id="n", **params)
    node = build_graph(workflow, library_registry()).nodes["n"]
    return node.spec.build(node.params)


def test_split_routes_by_its_function() -> None:
    split = build("Split", split_fn="def f(d):\n    return d['score'] > 0.5\n")
    assert split({"score": 0.9}) == {"A": [{"score": 0.9}]}
    assert split({"score": 0.1}) == {"B": [{"score": 0.1}]}


def test_copy_sends_an_independent_deep_copy_to_b() -> None:
    copy = build("Copy")
    data = {"tags": ["a"], "meta": {"n": 1}}
    result = copy(data)
    original, duplicate = result["A"][0], result["B"][0]
    assert original is data and duplicate == data
    duplicate["tags"].append("b")
    duplicate["meta"]["n"] = 2
    assert data == {"tags": ["a"], "meta": {"n": 1}}


def test_jsonl_dump_then_load_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "rows.jsonl"
    rows = [{"id": 1, "text": "héllo"}, {"id": 2, "tags": ["x"], "ok": False}]
    dump = build("DumpJSONL", jsonl_path=str(path))
    dump.on_start()
    for row in rows:
        assert dump(dict(row)) == {"out": [row]}
    dump.ended_as = "done"  # the file takes its place once the run completes
    dump.on_end()
    assert [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()] == rows
    load = build("LoadJSONL", jsonl_path=str(path))
    assert [d for chunk in load.produce() for _, d in chunk] == rows
    skip = build("LoadJSONL", jsonl_path=str(path), start_from=1)
    assert [d for chunk in skip.produce() for _, d in chunk] == rows[1:]


def test_dump_jsonl_appends_when_not_overwriting(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text('{"id": 0}\n', encoding="utf-8")
    dump = build("DumpJSONL", jsonl_path=str(path), overwrite=False)
    dump.on_start()
    dump({"id": 1})
    dump.ended_as = "done"
    dump.on_end()
    assert path.read_text(encoding="utf-8").splitlines() == ['{"id": 0}', '{"id": 1}']


@pytest.mark.parametrize(
    ("name", "val", "expected"),
    [
        ("Number", 0, 0),
        ("Number", "2.5", 2.5),
        ("Text", "", ""),
        ("Text", "hello", "hello"),
        ("List", [1, "a"], [1, "a"]),
        ("Dict", {"a": 1}, {"a": 1}),
        ("Dict", [["string", "a", "x"], ["number", "b", 2]], {"a": "x", "b": 2}),
    ],
)
def test_builtin_resources_give_their_value(name: str, val: Any, expected: Any) -> None:
    assert build(name, val=val).value() == expected


def test_function_resource_gives_a_callable() -> None:
    assert build("Function", val="lambda d: d * 3").value()(2) == 6
    assert build("Function", val="def f(d):\n    return -d\n").value()(2) == -2


def test_function_resource_wired_into_split() -> None:
    workflow = Workflow()
    fn = workflow.add("Function", id="fn", val="lambda d: d['keep']")
    workflow.add("Split", id="split", split_fn=fn)
    graph = build_graph(workflow, library_registry())
    value = graph.nodes["fn"].spec.build(graph.nodes["fn"].params).value()
    split = graph.nodes["split"].spec.build({**graph.nodes["split"].params, "split_fn": value})
    assert split({"keep": True}) == {"A": [{"keep": True}]}
    assert graph.nodes["split"].resources == {"split_fn": "fn"}


def test_graphbook_013_and_seed_import_paths() -> None:
    from graphbook import batch, event, output, param, prompt, resource, source, step
    from graphbook.core.resources import (
        DictResource,
        FunctionResource,
        ListResource,
        NumberResource,
        Resource,
    )
    from graphbook.core.steps import (
        BatchStep,
        Copy,
        DumpJSONL,
        GeneratorSourceStep,
        LoadJSONL,
        PromptStep,
        SourceStep,
        Split,
        Step,
    )
    from graphbook.resources import Resource as SeedResource
    from graphbook.steps import BatchStep as SeedBatchStep

    assert SeedBatchStep is BatchStep and SeedResource is Resource
    assert all(issubclass(c, Step) for c in (SourceStep, GeneratorSourceStep, PromptStep))
    assert all(issubclass(c, Step) for c in (Split, Copy, LoadJSONL, DumpJSONL))
    resources = (NumberResource, FunctionResource, ListResource, DictResource)
    assert all(issubclass(c, Resource) for c in resources)
    assert all(callable(d) for d in (batch, event, output, param, prompt, resource, source, step))


def test_a_graphbook_013_node_file_loads_unchanged() -> None:
    registry = Registry()
    specs = {s.name: s for s in registry.load_file(FIXTURES / "graphbook013_nodes.py")}
    assert not registry.failures
    assert set(specs) == {"MyFirstSource", "MyFirstStep", "AddLabel", "Multiplier"}
    source, first, label = specs["MyFirstSource"], specs["MyFirstStep"], specs["AddLabel"]
    assert (source.kind, source.inputs, source.category) == ("source", (), "Custom")
    assert [(p.name, p.default) for p in source.params] == [
        ("message", "Hello, World!"),
        ("amount", 10),
    ]
    assert (first.category, first.outputs) == ("Custom", ("A", "B"))
    assert [p.name for p in first.params if p.is_resource] == ["prob"]
    assert label.doc == "Writes `label` into every dict."
    assert specs["Multiplier"].kind == "resource"

    chunk = next(source.build({"amount": 3}).produce())
    assert [d["num"] for _, d in chunk] == [0, 1, 2]
    step = first.build({"prob": 0.15})
    assert step({"message": "hi", "num": 1}) == {"A": [{"message": "hi", "num": 1}]}
    assert step({"message": "hi", "num": 5}) == {"B": [{"message": "hi", "num": 5}]}
    assert label.build({"label": ""})({"x": 1}) == {"out": [{"x": 1, "label": ""}]}
    assert specs["Multiplier"].build({"factor": 0}).value()(5) == 0
