"""The node-writing guide an agent reads before it writes a node file: a resource
(graphbook://guide/nodes) and a prompt (write_node) that hands it over with the task."""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from pydantic import Field

URI = "graphbook://guide/nodes"
GUIDE = '''# Writing a Graphbook node

A node file is a Python file in the nodes folder (write it with write_node_file, change it with
edit_node_file). It is imported at once: the answer names the node types it defines, or its
import error with the traceback (node_failures lists every file that did not import).

The unit of data is a plain dict. Decorate plain functions; the first argument is `ctx`: its
attributes are the node's parameters (`ctx.threshold`), `ctx.log("...")` logs a line,
`ctx.log_metric("loss", 0.3)` reports a number.

```python
from graphbook import step, source, batch, prompt, resource, param, output
from graphbook.prompts import selection_prompt
```

## The roles and what each function is called with

- `@step("Cat/Name")`: `def f(ctx, data)` changes `data` in place; the dict goes on to `out`.
- `@step(...)` with `@output("a", "b")`: `def f(ctx, data)` returns `"a"` or `"b"` (or
  `{"a": [d1], "b": [d2]}`) to route the dict.
- `@step(...)` with `@source()`: `def f(ctx)` yields (or returns a list of) dicts; no input.
- `@step(...)` with `@batch(size, "key", load_fn=g)`: `def f(ctx, outputs, items, data)`
  gets three aligned lists: `g(item)` ran on each item in worker processes (`outputs`), the
  items under each dict's `"key"` (`items`) and their dicts (`data`).
- `@step(...)` with `@prompt(get_prompt)`: `def f(ctx, data, response)` gets the person's
  answer about each dict; `get_prompt(ctx, data)` returns the question (graphbook.prompts:
  `selection_prompt(data, ["a", "b"])`, `bool_prompt(data)`, `text_prompt(data)`).
- `@resource("Cat/Name")`: `def f(ctx)` returns a value (a model, a number) given to the
  steps wired to it.

A function that cannot take these arguments is refused when the file is imported, with the
signature to write. `@param(name, type, default=..., required=..., description=...)` declares
a parameter (types: `string`, `int`, `float`, `number`, `boolean`, `function`, `list[...]`,
`dict`, `resource`; `path=True` for a file or folder, `expression=True` for a Python expression
checked before a run). The docstring is the node's help page (describe_node shows it).

## A worked example

```python
from graphbook import output, param, source, step


@step("Demo/Numbers")
@source()
@param("n", "int", default=5, description="how many dicts")
def numbers(ctx):
    """Yields `n` dicts {"x": i}."""
    for i in range(ctx.n):
        yield {"x": i}


@step("Demo/Threshold")
@output("high", "low")
@param("at", "float", default=2.5, description="the threshold")
def threshold(ctx, data):
    """Sends dicts whose x is at least `at` to high, the others to low."""
    ctx.log(f"x={data['x']}")
    return "high" if data["x"] >= ctx.at else "low"
```

Then: list_nodes(search="Demo") shows them; edit_workflow adds them (`{"op": "add_node",
"type": "Numbers", "id": "n"}`, `{"op": "connect", "source": "n", "target": "t"}`);
validate_workflow checks the workflow as a run would; run_workflow and wait_for_job run it;
node_output(node="t", job_id=..., output="high") shows what went where; job_status gives a
failing node's error and traceback, and edit_node_file fixes the file.

Classes work too (`from graphbook.steps import Step, SourceStep, BatchStep, PromptStep`;
`from graphbook.resources import Resource`) with `Parameters`, `Outputs`, `Category` and the
methods `on_start`, `on_data(data)`, `route(data)`, `on_end`, `load()` (sources),
`on_item_batch(outputs, items, data)`, `value()` (resources).
'''


def guide() -> str:
    """How a node is written: decorators, each role's signature, a worked example."""
    return GUIDE


def write_node(
    task: Annotated[str, Field(description="what the node should do")],
) -> str:
    """Write a Graphbook node file for a task, following the node-writing guide."""
    return (
        f"{GUIDE}\n---\n\nWrite a node file for this task: {task}\n"
        "Write it with write_node_file, then check its answer: the node types it defines, or "
        "the import error to fix."
    )


def register(server: MCPServer[Any]) -> None:
    server.resource(URI, mime_type="text/markdown", name="node-writing guide")(guide)
    server.prompt(name="write_node")(write_node)
