"""RunRequest: what a run is asked to do, one typed value whichever front end asks (the editor
and `POST /api/runs`, `POST /api/jobs` and the jobs the queue stores, MCP's `run_workflow`,
`graphbook run --set/--input`, `run_workflow(overrides=, inputs=)` in Python), carried as it
is to where the run executes (the server's run host gets it in its RunOrder).

check_run() is the one check of a request against its workflow and registry: its overrides and
inputs set on a copy of the workflow, the graph built (once), node files that stopped loading,
the node a run runs up to or again. It returns the problems, each naming its node (and
parameter) and how to fix it, or the run ready to go.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from graphbook.components import flatten
from graphbook.errors import GraphbookError, Problem, RunTargetError, WorkflowError
from graphbook.events import RunMode
from graphbook.graph import Graph, build_graph, target_problem
from graphbook.inputs import run_overrides
from graphbook.overrides import with_overrides
from graphbook.registry import Registry
from graphbook.workflow import Workflow


@dataclass(frozen=True)
class RunRequest:
    """A run of `workflow` (a path under the workflows folder, or a file's name).

    `mode`: `all` runs every node; `until` what `node` needs; `step` one unit of work at a time
    (of `node`, if given); `trigger` runs `node` again and what it feeds. `graph` is the
    editor's unsaved workflow document, run instead of the file's content (its cache is still
    the file's). `continue_on_error`: a node that fails on a dict reports it and the run goes on
    (as `graphbook run --continue-on-error`); by default the first error ends the run.
    `overrides`: `{node id or unique title: {parameter: value}}` set for this run only (as
    `graphbook run --set`), checked as the file's values are; the run record keeps them.
    `inputs`: `{input name: value}` for the workflow's inputs (as `graphbook run --input`),
    turned into overrides; one parameter given different values by both is refused.
    `retry_interrupted` (a job's): a job the server was running when it ended goes back to the
    head of the queue instead of ending `interrupted`. `app`: asked from the workflow's app
    page (docs/apps.md): the server writes the files its nodes write into the run's own folder
    and keeps the outputs the app shows there when it ends.
    """

    workflow: str
    mode: RunMode = "all"
    node: str | None = None
    graph: dict[str, Any] | None = None
    continue_on_error: bool = False
    overrides: dict[str, dict[str, Any]] | None = None
    inputs: dict[str, Any] | None = None
    retry_interrupted: bool = False
    app: bool = False

    @property
    def until(self) -> str | None:
        """The node the run runs up to: `until`'s, and `step`'s when it names one."""
        return self.node if self.mode in ("until", "step") else None

    @property
    def trigger(self) -> str | None:
        """The node the run runs again (`trigger`)."""
        return self.node if self.mode == "trigger" else None

    @property
    def stepping(self) -> str | None:
        """In step mode, the node to step ("" for the one the executor picks); else None."""
        return (self.node or "") if self.mode == "step" else None


@dataclass(frozen=True)
class CheckedRun:
    """A request checked against its workflow: what is wrong, or what runs."""

    request: RunRequest
    workflow: Workflow
    """What runs: components flattened, the overrides and inputs set; when there are problems,
    the workflow as given."""
    graph: Graph | None = None
    """The run's graph, built once; None when there are problems."""
    problems: list[Problem] = field(default_factory=list)
    """Everything wrong (empty: it can run)."""
    about: Literal["workflow", "request"] = "workflow"
    """What the problems are about: the workflow as the request sets it (its values, nodes and
    wires), or the request itself (its mode and node)."""

    @property
    def ok(self) -> bool:
        return not self.problems

    def error(self) -> GraphbookError:
        """The problems as the exception the engine raises for them."""
        if self.about == "request":
            return RunTargetError(self.problems[0].message)
        return WorkflowError(self.problems)


def check_run(request: RunRequest, workflow: Workflow, registry: Registry) -> CheckedRun:
    """The one check of a run: `request`'s overrides and inputs set on a copy of `workflow`
    (the file's content, or the request's `graph` read), its graph built against `registry`,
    its node files loading, its mode's node. Never raises for what the request or workflow
    holds: every problem is in the result."""
    try:
        overrides = run_overrides(workflow, registry, request.overrides, request.inputs)
        running = with_overrides(workflow, overrides)
        graph = build_graph(running, registry)
    except WorkflowError as exc:
        return CheckedRun(request, workflow, problems=exc.problems)
    except GraphbookError as exc:
        return CheckedRun(request, workflow, problems=[Problem(None, str(exc))])
    running = flatten(running)[0]  # what runs elsewhere is what was checked, its library read once
    broken = broken_files(graph, registry)
    if broken:
        return CheckedRun(request, workflow, problems=broken)
    wrong = target_problems(request, graph)
    if wrong:
        return CheckedRun(request, workflow, problems=wrong, about="request")
    return CheckedRun(request, running, graph)


def target_problems(request: RunRequest, graph: Graph) -> list[Problem]:
    """What is wrong with the node the request's mode names (graph.py's target_problem)."""
    node, mode = request.node, request.mode
    if mode in ("until", "trigger") and node is None:
        what = "to run up to" if mode == "until" else "to run again"
        return [Problem(None, f'mode "{mode}" needs the node {what}', "give its id as `node`")]
    problem = None if node is None else target_problem(graph, node, retrigger=mode == "trigger")
    return [] if problem is None else [Problem(node, problem)]


def broken_files(graph: Graph, registry: Registry) -> list[Problem]:
    """A problem for each node whose node file has stopped loading (a syntax error saved): it
    would run the last definition that loaded, not the file as it is now."""
    problems = []
    for node in graph.nodes.values():
        failure = registry.broken_file(node.spec.name)
        if failure is not None:
            message = (
                f"its node file {Path(failure.path).name} does not load ({failure.error}); "
                f"a run now would use the last {node.spec.name} that loaded"
            )
            fix = "fix the file (the palette shows its error); the run starts once it loads"
            problems.append(Problem(node.id, message, fix))
    return problems
