"""`graphbook run WORKFLOW.json|SCRIPT.py`: a workflow run headless, shown in the terminal
(running.py) or printed as JSON lines."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.text import Text

from graphbook.cli.consoles import error_console, output_console
from graphbook.cli.folders import load_registry, node_folders
from graphbook.cli.running import run_here
from graphbook.cli.terminal import JsonSink, TerminalSink
from graphbook.engine.executor import Backend, RayBackend, make_pool
from graphbook.engine.ray_nodes import DRIVER
from graphbook.engine.ray_pool import LOCAL as LOCAL_RAY
from graphbook.engine.ray_ship import shippable
from graphbook.errors import GraphbookError
from graphbook.inputs import parse_inputs
from graphbook.overrides import parse_settings
from graphbook.workflow import Workflow

if TYPE_CHECKING:
    pass


def workers_count(text: str) -> int:
    """A count of 0 or more, or `auto`: one per core this process may run on."""
    if text == "auto":
        affinity = getattr(os, "sched_getaffinity", None)
        return len(affinity(0)) if affinity else os.cpu_count() or 1
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected 0 or more workers, got {value}")
    return value


def cmd_run(args: argparse.Namespace) -> int:
    err = error_console()
    workflow = load_workflow(args.workflow)
    print_notes(workflow, err)
    folders = node_folders(args.nodes, args.workflow)
    registry = load_registry(folders, err, args.verbose, workflow)
    overrides = parse_settings(workflow, registry, args.set)
    inputs = parse_inputs(workflow, registry, args.input) if args.input else None
    backend = backend_of(args, folders)
    pool = make_pool(workers_of(args.workers, backend), backend)
    if isinstance(backend, RayBackend) and backend.address is not None:
        describe = getattr(pool, "describe", lambda: "")
        err.print(Text(f"note: on the Ray cluster at {backend.address}: {describe()}"))
    sink = make_sink(args, err, getattr(pool, "stats", None))
    _, code = run_here(
        workflow,
        pool,
        sink,
        registry=registry,
        until=args.until,
        continue_on_error=args.continue_on_error,
        overrides=overrides,
        inputs=inputs,
        name=args.workflow.name,
        loggers=args.logger,
    )
    return code


def print_notes(workflow: Workflow, err: Console) -> None:
    """What reading the file left out (of a Graphbook 0.13 file), one line each."""
    for note in workflow.notes:
        err.print(Text(f"note: {note}", style="yellow"))


def load_workflow(path: Path) -> Workflow:
    """A workflow file, or a Python script that builds one (Graphbook 0.13's `Graph`)."""
    if path.suffix == ".py":
        from graphbook.compat013.script import load_script

        return load_script(path)
    return Workflow.load(path)


def workers_of(given: int | None, backend: Backend) -> int:
    """`--workers` as given; without it, one per core of this machine, or on Ray 0 (the pool
    then starts one actor per kind per CPU of the cluster, which it knows once connected)."""
    if given is not None:
        return given
    return workers_count("auto") if backend == "local" else 0


def backend_of(args: argparse.Namespace, nodes: Iterable[Path] = ()) -> Backend:
    """Local, or Ray with the nodes folders and `--ray-ship` folders shipped to its actors."""
    if args.ray is None:
        given = {"--retries": args.retries, "--ray-ship": args.ray_ship}
        given["--ray-dumps"] = args.ray_dumps
        flag = next((flag for flag, value in given.items() if value), None)
        if flag is not None:
            raise GraphbookError(f"{flag} applies to Ray actors: add --ray")
        return "local"
    address = None if args.ray == LOCAL_RAY else args.ray
    ship = shippable([*nodes, *args.ray_ship])
    return RayBackend(address, retries=args.retries, ship=ship, dumps=args.ray_dumps or DRIVER)


def make_sink(
    args: argparse.Namespace, err: Console, pool_stats: Callable[[], Any] | None = None
) -> JsonSink | TerminalSink:
    if args.json:
        return JsonSink(sys.stdout)
    return TerminalSink(output_console(), err, quiet=args.quiet, pool_stats=pool_stats)
