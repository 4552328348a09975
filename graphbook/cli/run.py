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
from graphbook.engine.ray.connection import LOCAL as LOCAL_RAY
from graphbook.engine.ray.detached import LINGER, setting
from graphbook.engine.ray.nodes import DRIVER
from graphbook.engine.ray.ship import shippable
from graphbook.engine.ray.sizing import Limits, parse_limits
from graphbook.engine.ray.stage import AUTO
from graphbook.errors import GraphbookError
from graphbook.inputs import parse_inputs
from graphbook.overrides import parse_settings
from graphbook.run_request import RunRequest
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
    request = RunRequest(
        args.workflow.name,
        "until" if args.until is not None else "all",
        args.until,
        continue_on_error=args.continue_on_error,
        overrides=parse_settings(workflow, registry, args.set),
        inputs=parse_inputs(workflow, registry, args.input) if args.input else None,
    )
    backend = backend_of(args, folders)
    pool = make_pool(workers_of(args.workers, backend), backend)
    if isinstance(backend, RayBackend) and backend.address is not None:
        print_cluster(backend, pool, err)
    sink = make_sink(args, err, getattr(pool, "stats", None))
    _, code = run_here(
        workflow, request, pool, sink, registry=registry, loggers=args.logger, trace=args.trace
    )
    if args.trace is not None:
        err.print(f"trace written to {args.trace} (open it in ui.perfetto.dev)")
    return code


def print_cluster(backend: RayBackend, pool: Any, err: Console) -> None:
    """What the run joined, whether it found warm actors there, and how long it keeps its own."""
    describe = getattr(pool, "describe", lambda: "")()
    kept = backend.keep_after
    if kept:
        describe += f"; actors kept {kept:g} s after the run (--ray-keep 0: not kept)"
    err.print(Text(f"note: on the Ray cluster at {backend.address}: {describe}"))
    attached = getattr(pool, "attached", 0)
    if attached:
        actors = "actor" if attached == 1 else "actors"
        err.print(Text(f"note: attached to {attached} warm {actors} on {backend.address}"))


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


def seconds(text: str) -> float:
    """A number of seconds, 0 or more."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds, got {text!r}") from None
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"expected 0 or more seconds, got {text}")
    return value


def actor_limits(text: str) -> Limits:
    """`--ray-actors MIN:MAX` (graphbook/engine/ray/sizing.py)."""
    limits = parse_limits(text)
    if isinstance(limits, str):
        raise argparse.ArgumentTypeError(limits)
    return limits


def cpus_count(text: str) -> float:
    """A number of CPUs, 0 or more (fractions too)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of CPUs, got {text!r}") from None
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"expected 0 or more CPUs, got {text}")
    return value


def sizing_of(args: argparse.Namespace) -> dict[str, Any]:
    """`RayBackend`'s actor limits and reservation from `--ray-actors`, `--ray-actor-cpus`:
    `--workers N` (exactly N) and `--ray-actors` (limits to grow within) are one or the other."""
    sizing: dict[str, Any] = {}
    if args.ray_actors is not None:
        if getattr(args, "workers", None):
            raise GraphbookError(
                "--workers N runs exactly N actors of each kind and --ray-actors MIN:MAX lets "
                "their number grow between limits: give one of them"
            )
        sizing["actors"] = args.ray_actors
    if args.ray_actor_cpus is not None:
        sizing["actor_cpus"] = args.ray_actor_cpus
    return sizing


def backend_of(args: argparse.Namespace, nodes: Iterable[Path] = ()) -> Backend:
    """Local, or Ray with the nodes folders and `--ray-ship` folders shipped to its actors; on
    a cluster, its actors kept warm for the next run (`--ray-keep`)."""
    keep = getattr(args, "ray_keep", None)
    if args.ray is None:
        given = {"--retries": args.retries, "--ray-ship": args.ray_ship}
        given["--ray-dumps"] = args.ray_dumps
        given["--ray-actors"] = args.ray_actors
        given["--ray-actor-cpus"] = args.ray_actor_cpus is not None
        given["--ray-stages"] = args.ray_stages
        given["--ray-replicas"] = args.ray_replicas is not None
        given["--ray-keep"] = keep is not None
        flag = next((flag for flag, value in given.items() if value), None)
        if flag is not None:
            raise GraphbookError(f"{flag} applies to Ray actors: add --ray")
        return "local"
    address = None if args.ray == LOCAL_RAY else args.ray
    if address is None and keep:
        raise GraphbookError(
            "--ray-keep keeps actors on a Ray cluster (--ray ADDRESS or --ray auto); "
            "the local Ray that plain --ray starts ends with the run"
        )
    return RayBackend(
        address,
        retries=args.retries,
        ship=shippable([*nodes, *args.ray_ship]),
        keep_after=None if address is None else kept_for(keep),
        dumps=args.ray_dumps or DRIVER,
        stages=args.ray_stages or AUTO,
        replicas=args.ray_replicas or 0,
        **sizing_of(args),
    )


def kept_for(given: float | None) -> float:
    """Seconds a cluster run keeps its actors: `--ray-keep`, else $GRAPHBOOK_RAY_LEASE, else
    graphbook.engine.ray.detached.LINGER."""
    if given is not None:
        return given
    try:
        return setting(LINGER)
    except ValueError as exc:
        raise GraphbookError(f"{exc} (or give --ray-keep SECONDS)") from None


def make_sink(
    args: argparse.Namespace, err: Console, pool_stats: Callable[[], Any] | None = None
) -> JsonSink | TerminalSink:
    if args.json:
        return JsonSink(sys.stdout)
    return TerminalSink(output_console(), err, quiet=args.quiet, pool_stats=pool_stats)
