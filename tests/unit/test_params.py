"""Parameters: falsy values survive, values are coerced to their declared types, and bad
values are refused with a message naming the parameter and what it expected."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest

from graphbook import Registry, Workflow, WorkflowError, build_graph, param, step
from graphbook.errors import ParamError
from graphbook.params import ParamSpec, coerce, normalize_type
from graphbook.steps import Step


@step("Falsy")
@param("shift", "number", default=5)
@param("flag", "boolean", default=True)
@param("text", "string", default="default text")
def falsy_step(ctx: Any, data: dict[str, Any]) -> None:
    data["seen"] = (ctx.shift, ctx.flag, ctx.text)


class FalsyClass(Step):
    Parameters: ClassVar[dict[str, Any]] = {
        "shift": {"type": "number", "default": 5},
        "flag": {"type": "boolean", "default": True},
        "text": {"type": "string", "default": "default text"},
    }


FALSY = {"shift": 0, "flag": False, "text": ""}


@pytest.mark.parametrize("node", [falsy_step, FalsyClass], ids=["decorator", "class"])
def test_falsy_values_are_kept_when_building_a_node(node: Any) -> None:
    instance = Registry().add(node).build(FALSY)
    assert (instance.shift, instance.flag, instance.text) == (0, False, "")


@pytest.mark.parametrize("node", [falsy_step, FalsyClass], ids=["decorator", "class"])
def test_falsy_values_are_kept_through_build_graph(node: Any) -> None:
    workflow = Workflow()
    workflow.add(node, id="n", **FALSY)
    graph = build_graph(workflow, Registry())
    instance = graph.nodes["n"].spec.build(graph.nodes["n"].params)
    assert (instance.shift, instance.flag, instance.text) == (0, False, "")


@pytest.mark.parametrize("node", [falsy_step, FalsyClass], ids=["decorator", "class"])
def test_parameters_left_out_get_their_defaults(node: Any) -> None:
    instance = Registry().add(node).build({"flag": False})
    assert (instance.shift, instance.flag, instance.text) == (5, False, "default text")


def test_a_decorated_step_sees_its_parameters_on_ctx() -> None:
    instance = Registry().add(falsy_step).build(FALSY)
    assert instance({"x": 1}) == {"out": [{"x": 1, "seen": (0, False, "")}]}


def spec(type_: str, name: str = "p") -> ParamSpec:
    return ParamSpec(name, normalize_type(type_))


@pytest.mark.parametrize(
    ("type_", "raw", "value"),
    [
        ("number", 3, 3),
        ("number", 2.5, 2.5),
        ("number", "7", 7),
        ("number", "0.5", 0.5),
        ("number", 0, 0),
        ("int", "12", 12),
        ("int", 4.0, 4),
        ("float", 2, 2.0),
        ("boolean", False, False),
        ("bool", "true", True),
        ("boolean", "False", False),
        ("string", "", ""),
        ("string", 3, "3"),
        ("list[number]", ["1", 2], [1, 2]),
        ("list[string]", ("a", "b"), ["a", "b"]),
        ("list[boolean]", [True, "false"], [True, False]),
        ("list", [1, "a"], [1, "a"]),
        ("dict", {"a": 1}, {"a": 1}),
        ("dict", [], {}),
    ],
)
def test_values_are_coerced_to_their_declared_type(type_: str, raw: Any, value: Any) -> None:
    result = coerce(spec(type_), raw)
    assert result == value
    assert type(result) is type(value)


@pytest.mark.parametrize(
    ("type_", "raw", "expected"),
    [
        ("number", "abc", "expects a number, got str 'abc'"),
        ("number", True, "expects a number, got bool True"),
        ("number", [1], "expects a number, got list [1]"),
        ("int", "2.5", "expects a whole number, got str '2.5'"),
        ("int", "x", "expects a whole number, got str 'x'"),
        ("boolean", "yes", "expects true or false, got str 'yes'"),
        ("boolean", 1, "expects true or false, got int 1"),
        ("string", ["a"], "expects a string, got list ['a']"),
        ("list[number]", 5, "expects a list of numbers, got int 5"),
        ("dict", "a=1", "expects a dict, got str 'a=1'"),
        ("function", 42, "expects Python source of a function"),
    ],
)
def test_a_wrong_value_names_the_parameter_and_what_it_expected(
    type_: str, raw: Any, expected: str
) -> None:
    with pytest.raises(ParamError) as caught:
        coerce(spec(type_, name="threshold"), raw)
    assert "'threshold'" in str(caught.value)
    assert expected in str(caught.value)


def test_a_wrong_list_element_is_named_by_its_position() -> None:
    with pytest.raises(ParamError, match=r"parameter 'sizes\[1\]' expects a number, got str 'x'"):
        coerce(spec("list[number]", name="sizes"), [1, "x"])


def test_a_def_becomes_a_callable() -> None:
    fn = coerce(spec("function"), "def keep(d):\n    return d['score'] > 0.5\n")
    assert fn({"score": 0.9}) is True
    assert fn({"score": 0.1}) is False


def test_a_lambda_becomes_a_callable() -> None:
    fn = coerce(spec("function"), "lambda d: d['x'] * 2")
    assert fn({"x": 21}) == 42


def test_function_source_may_import_and_define_helpers() -> None:
    source = (
        "import math\n\ndef helper(v):\n    return math.sqrt(v)\n\n"
        "def f(d):\n    return helper(d)\n"
    )
    assert coerce(spec("function"), source)(16) == 4.0


def test_a_callable_is_passed_through() -> None:
    assert coerce(spec("function"), len)("abc") == 3


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("def f(d) return d", "syntax error at line 1"),
        ("def f(d):\n    return (", "syntax error at line 2"),
        ("", "the function source is empty"),
        ("x = 1", "defines no function"),
        ("42", "evaluates to int, not a function"),
        ("undefined_name", "name 'undefined_name' is not defined"),
    ],
)
def test_bad_function_source_gives_a_clear_error(source: str, expected: str) -> None:
    with pytest.raises(ParamError) as caught:
        coerce(spec("function", name="split_fn"), source)
    assert "'split_fn'" in str(caught.value)
    assert expected in str(caught.value)


def test_graphbook_dict_rows_become_a_dict() -> None:
    rows = [["string", "name", "cat"], ["number", "size", 3], ["boolean", "ok", False]]
    assert coerce(spec("dict"), rows) == {"name": "cat", "size": 3, "ok": False}


def test_graphbook_dict_rows_are_typed_by_their_row_type() -> None:
    assert coerce(spec("dict"), [["number", "size", "3"]]) == {"size": 3}
    with pytest.raises(ParamError, match=r"'opts\[size\]' expects a number"):
        coerce(spec("dict", name="opts"), [["number", "size", "big"]])


@pytest.mark.parametrize(
    ("declared", "canonical"),
    [
        ("str", "string"),
        ("bool", "boolean"),
        ("Number", "number"),
        ("list[str]", "list[string]"),
        ("list[int]", "list[int]"),
        ("resource", "resource"),
        ("torch.nn.Module", "resource"),  # unknown types are resource pins, as in Graphbook
    ],
)
def test_declared_type_names_are_normalized(declared: str, canonical: str) -> None:
    assert normalize_type(declared) == canonical


def test_a_wrong_typed_value_in_a_workflow_is_reported_on_its_node() -> None:
    workflow = Workflow()
    workflow.add(falsy_step, id="n", shift="lots")
    with pytest.raises(WorkflowError) as caught:
        build_graph(workflow, Registry())
    [problem] = caught.value.problems
    assert problem.node_id == "n"
    assert "parameter 'shift' expects a number, got str 'lots'" in problem.message
    assert problem.fix == "give 'shift' a number"


def test_an_expression_parameter_must_compile_before_a_run() -> None:
    @step("Keep")
    @param("test", "string", required=True, expression=True)
    def keep(ctx: Any, data: dict[str, Any]) -> None:
        pass

    registry = Registry()
    registry.add(keep)
    wf = Workflow()
    wf.add("Keep", id="keep", test="x >")
    with pytest.raises(WorkflowError) as refused:
        build_graph(wf, registry)
    (problem,) = refused.value.problems
    assert problem.node_id == "keep" and "'x >' is not a Python expression" in problem.message
    spec = ParamSpec("test", "string", expression=True)
    assert coerce(spec, "x > 1") == "x > 1"
    with pytest.raises(ParamError, match="got an empty one"):
        coerce(spec, "  ")
