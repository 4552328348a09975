"""Decorators describe a node on a plain function: any stacking order, the function untouched."""

from __future__ import annotations

import dataclasses
import logging
from typing import Any

import pytest

from graphbook import Registry, batch, event, output, param, prompt, resource, source, step
from graphbook.errors import NodeDefinitionError
from graphbook.spec import NodeSpec
from graphbook.steps import RouteError


class FakeCtx:
    """What a test passes as `ctx` when calling a decorated function directly."""

    def __init__(self, **params: Any) -> None:
        self.__dict__.update(params)
        self.logged: list[Any] = []

    def log(self, message: Any, level: str = "info") -> None:
        self.logged.append(message)


def route_by_size(ctx: Any, data: dict[str, Any]) -> str:
    return "big" if data["size"] >= ctx.threshold else "small"


def to_tensor(item: Any) -> Any:
    return [item]


@step("Models/Classify")
@batch(4, "images", load_fn=to_tensor)
@param("threshold", "number", default=0.5, description="cut-off")
@param("model", "resource")
@output("big", "small")
@event("route", route_by_size)
def classify_a(ctx: Any, tensors: list[Any], items: list[Any], data: list[Any]) -> None:
    """Classifies images."""


@event("route", route_by_size)
@output("big", "small")
@param("threshold", "number", default=0.5, description="cut-off")
@param("model", "resource")
@batch(4, "images", load_fn=to_tensor)
@step("Models/Classify")
def classify_b(ctx: Any, tensors: list[Any], items: list[Any], data: list[Any]) -> None:
    """Classifies images."""


@param("threshold", "number", default=0.5, description="cut-off")
@step("Models/Classify")
@event("route", route_by_size)
@param("model", "resource")
@output("big", "small")
@batch(4, "images", load_fn=to_tensor)
def classify_c(ctx: Any, tensors: list[Any], items: list[Any], data: list[Any]) -> None:
    """Classifies images."""


def comparable(spec: NodeSpec) -> NodeSpec:
    # The code hash covers the decorator lines too, so it differs when they are reordered.
    return dataclasses.replace(spec, code_hash="")


def test_stacking_order_does_not_change_the_spec() -> None:
    a, b, c = (Registry().add(fn) for fn in (classify_a, classify_b, classify_c))
    assert comparable(a) == comparable(b) == comparable(c)
    assert a.kind == "batch"
    assert [p.name for p in a.params] == ["batch_size", "item_key", "threshold", "model"]
    assert a.outputs == ("big", "small")
    defaults = {p.name: p.default for p in a.params}
    assert (defaults["batch_size"], defaults["item_key"]) == (4, "images")
    assert [p.name for p in a.params if p.is_resource] == ["model"]


@pytest.mark.parametrize("fn", [classify_a, classify_b, classify_c])
def test_every_stacking_order_builds_a_working_batch_step(fn: Any) -> None:
    node = Registry().add(fn).build({"threshold": 2, "model": None})
    assert (node.batch_size, node.item_key, node.threshold) == (4, "images", 2)
    assert node.load_fn("img") == ["img"]
    assert node.route({"size": 3}) == "big"
    assert node.route({"size": 1}) == "small"


def test_params_keep_the_order_they_are_written_in() -> None:
    @step("Ordered")
    @param("first", "string")
    @param("second", "number")
    @param("third", "boolean")
    def ordered(ctx: Any, data: Any) -> None: ...

    assert [p.name for p in Registry().add(ordered).params] == ["first", "second", "third"]


def test_decorated_function_stays_plain_and_callable() -> None:
    @step("Scale")
    @param("factor", "number", default=2)
    def scale(ctx: Any, data: dict[str, Any]) -> None:
        ctx.log("scaling")
        data["value"] *= ctx.factor

    ctx, data = FakeCtx(factor=10), {"value": 3}
    assert scale(ctx, data) is None
    assert data == {"value": 30}
    assert ctx.logged == ["scaling"]


def test_decorated_batch_function_is_callable_directly() -> None:
    data: list[dict[str, Any]] = [{"size": 1}]
    assert classify_a(FakeCtx(threshold=1), [[1]], [1], data) is None


def test_name_with_a_category_path() -> None:
    @step("Custom/Images/Load")
    def load(ctx: Any, data: Any) -> None: ...

    spec = Registry().add(load)
    assert (spec.name, spec.category) == ("Load", "Custom/Images")


def test_name_defaults_to_the_function_name() -> None:
    @step()
    def my_step(ctx: Any, data: Any) -> None: ...

    assert (Registry().add(my_step).name, Registry().add(my_step).category) == ("my_step", "")


def test_docstring_becomes_the_doc() -> None:
    @step("Documented")
    def documented(ctx: Any, data: Any) -> None:
        """Adds a label.

        Args:
            label: what to add
        """

    assert Registry().add(documented).doc == "Adds a label.\n\nArgs:\n    label: what to add"


def test_staticmethod_gets_only_the_data() -> None:
    @step("Static")  # type: ignore[misc]
    @staticmethod
    def mark(data: dict[str, Any]) -> None:
        data["marked"] = True

    assert Registry().add(mark).build({})({"a": 1}) == {"out": [{"a": 1, "marked": True}]}


def test_staticmethod_outermost_also_gets_only_the_data() -> None:
    @staticmethod  # type: ignore[misc]
    @step("StaticOuter")
    def mark(data: dict[str, Any]) -> None:
        data["marked"] = True

    assert Registry().add(mark).build({})({"a": 1}) == {"out": [{"a": 1, "marked": True}]}


def test_seed_style_batch_step_with_static_load_fn() -> None:
    @staticmethod  # type: ignore[misc]
    def convert(item: dict[str, Any]) -> str:
        return f"tensor({item['value']})"

    @step("LoadImages")  # type: ignore[misc]
    @batch(8, "image_paths", load_fn=convert)
    @staticmethod
    def on_load_images(tensors: list[Any], items: list[Any], data: list[Any]) -> None:
        for tensor, d in zip(tensors, data, strict=True):
            d.setdefault("tensor", []).append(tensor)

    node = Registry().add(on_load_images).build({})
    assert node.load_fn({"value": "a.png"}) == "tensor(a.png)"
    data: list[dict[str, Any]] = [{}]
    node.on_item_batch(["t"], [{"value": "a.png"}], data)
    assert data == [{"tensor": ["t"]}]


def test_ctx_carries_params_and_log(caplog: pytest.LogCaptureFixture) -> None:
    seen: list[Any] = []

    @step("WithCtx")
    @param("label", "string", default="cat")
    def with_ctx(ctx: Any, data: dict[str, Any]) -> None:
        seen.append(ctx.label)
        ctx.log(f"labelled {data['id']}")

    node = Registry().add(with_ctx).build({"label": "dog"})
    with caplog.at_level(logging.INFO):
        node({"id": 7})
    assert seen == ["dog"]
    assert "labelled 7" in caplog.text


def test_event_route_with_declared_outputs() -> None:
    def route(ctx: Any, data: dict[str, Any]) -> str:
        return "A" if data["x"] > 0 else "B"

    @step("Router")
    @output("A", "B")
    @event("route", route)
    def router(ctx: Any, data: dict[str, Any]) -> None:
        data["seen"] = True

    node = Registry().add(router).build({})
    assert node({"x": 1}) == {"A": [{"x": 1, "seen": True}]}
    assert node({"x": -1}) == {"B": [{"x": -1, "seen": True}]}


def test_event_init_receives_the_params() -> None:
    def init(ctx: Any, **params: Any) -> None:
        ctx.table = {name: value * 2 for name, value in params.items()}

    @step("Init")
    @param("size", "int", default=3)
    @event("__init__", init)
    def initialised(ctx: Any, data: dict[str, Any]) -> None:
        data["table"] = ctx.table

    node = Registry().add(initialised).build({"size": 0})
    assert node.table == {"size": 0}
    assert node({}) == {"out": [{"table": {"size": 0}}]}


def test_event_on_start_runs_with_ctx() -> None:
    def on_start(ctx: Any) -> None:
        ctx.count = 0

    @step("Counter")
    @event("on_start", on_start)
    def counter(ctx: Any, data: dict[str, Any]) -> None:
        ctx.count += 1
        data["n"] = ctx.count

    node = Registry().add(counter).build({})
    node.on_start()
    assert node({}) == {"out": [{"n": 1}]}
    assert node({}) == {"out": [{"n": 2}]}


def test_event_load_fn_is_called_without_ctx() -> None:
    def load(item: int) -> int:
        return item + 100

    @step("Loader")
    @batch(2, "items")
    @event("load_fn", load)
    def loader(ctx: Any, outputs: list[Any], items: list[Any], data: list[Any]) -> None: ...

    assert Registry().add(loader).build({}).load_fn(1) == 101


def test_step_event_picks_the_lifecycle_hook() -> None:
    @step("PerItem", event="on_item")
    @param("item_key", "string", default="words")
    def per_item(ctx: Any, item: str, data: dict[str, Any]) -> None:
        data.setdefault("upper", []).append(item.upper())

    node = Registry().add(per_item).build({})
    assert node({"words": ["a", "b"]}) == {"out": [{"words": ["a", "b"], "upper": ["A", "B"]}]}


def test_returning_the_data_passes_it_on() -> None:
    @step("Returns")
    def returns(ctx: Any, data: dict[str, Any]) -> dict[str, Any]:
        data["x"] = 1
        return data

    assert Registry().add(returns).build({})({}) == {"out": [{"x": 1}]}


def test_returning_an_output_name_routes_there() -> None:
    @step("Picks")
    @output("keep", "drop")
    def picks(ctx: Any, data: dict[str, Any]) -> str:
        return "keep" if data["ok"] else "drop"

    node = Registry().add(picks).build({})
    assert node({"ok": True}) == {"keep": [{"ok": True}]}
    assert node({"ok": False}) == {"drop": [{"ok": False}]}


def test_routing_to_an_undeclared_output_names_the_node_and_output() -> None:
    @step("Custom/Sorter")
    @output("A", "B")
    def sorter(ctx: Any, data: dict[str, Any]) -> str:
        return "C"

    with pytest.raises(RouteError, match=r"Sorter routed a dict to output 'C'.*outputs: A, B"):
        Registry().add(sorter).build({})({})


def test_resource_returns_its_value() -> None:
    @resource("Models/Threshold")
    @param("base", "number", default=0.5)
    def threshold(ctx: Any) -> float:
        """A threshold shared by steps."""
        return float(ctx.base) * 2

    spec = Registry().add(threshold)
    assert (spec.kind, spec.name, spec.category) == ("resource", "Threshold", "Models")
    assert spec.outputs == ("resource",) and spec.inputs == ()
    assert spec.doc == "A threshold shared by steps."
    assert spec.build({"base": 0}).value() == 0.0
    assert spec.build({}).value() == 1.0


def test_source_yields_dicts() -> None:
    @step("Numbers")
    @source()
    @param("count", "int", default=3)
    def numbers(ctx: Any) -> Any:
        for i in range(ctx.count):
            yield {"i": i}

    spec = Registry().add(numbers)
    assert spec.kind == "source" and spec.inputs == ()
    chunks = list(spec.build({"count": 2}).produce())
    assert chunks == [[("out", {"i": 0})], [("out", {"i": 1})]]


def test_prompt_step_gets_the_answer() -> None:
    def ask(ctx: Any, data: dict[str, Any]) -> dict[str, Any]:
        return {"type": "boolean", "msg": f"Keep {data['id']}?", "def": True}

    @step("Review")
    @prompt(ask)
    def review(ctx: Any, data: dict[str, Any], response: Any) -> None:
        data["keep"] = response

    spec = Registry().add(review)
    node = spec.build({})
    assert spec.kind == "prompt"
    assert node.get_prompt({"id": 3})["msg"] == "Keep 3?"
    data: dict[str, Any] = {"id": 3}
    node.on_prompt_response(data, False)
    assert data == {"id": 3, "keep": False}


def test_a_node_cannot_be_two_kinds() -> None:
    @resource("Both")
    @batch(2, "x")
    def both(ctx: Any) -> None: ...

    with pytest.raises(NodeDefinitionError, match="@batch and @resource cannot be combined"):
        Registry().add(both)


def test_a_function_with_no_step_decorator_is_not_a_node() -> None:
    @param("x", "number")
    def helper(ctx: Any) -> None: ...

    with pytest.raises(NodeDefinitionError, match="is not a node"):
        Registry().add(helper)


@pytest.mark.parametrize("name", ["log", "route", "id"])
def test_a_parameter_cannot_hide_part_of_ctx(name: str) -> None:
    @step("Clash")
    @param(name, "string")
    def clash(ctx: Any, data: Any) -> None: ...

    with pytest.raises(NodeDefinitionError, match=f"cannot be called '{name}'.*rename"):
        Registry().add(clash)


def test_a_resource_parameter_cannot_be_called_value() -> None:
    @resource("Clash")
    @param("value", "number")
    def clash(ctx: Any) -> Any: ...

    with pytest.raises(NodeDefinitionError, match="cannot be called 'value'"):
        Registry().add(clash)


def test_a_function_that_cannot_take_what_it_is_called_with_is_refused_at_once() -> None:
    def question(ctx: Any, data: dict[str, Any]) -> dict[str, Any]:
        return {"type": "bool"}

    @step("Ask")
    @prompt(question)
    def ask(data: dict[str, Any]) -> None:
        pass

    with pytest.raises(NodeDefinitionError) as refused:
        Registry().add(ask)
    message = str(refused.value)
    assert "a prompt function is called as ask(ctx, data, response)" in message
    line = ask.__code__.co_firstlineno + 2  # the two decorators above its def
    assert f"test_decorators.py, line {line})" in message
    assert "write `def ask(ctx, data, response):`" in message

    @step("Many")
    @batch(2, "x")
    def many(ctx: Any, *values: Any) -> None:  # takes anything: accepted
        pass

    assert Registry().add(many).kind == "batch"
