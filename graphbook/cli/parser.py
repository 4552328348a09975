"""The command line's arguments, every command's in one place; each command's function is
in the module named after it (run.py, serve.py, nodes.py, runs.py, new.py, convert.py)."""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from graphbook.about import version
from graphbook.cli.convert import cmd_convert
from graphbook.cli.folders import NODES_FOLDER
from graphbook.cli.metrics import EXPORTS, logger_spec
from graphbook.cli.new import cmd_new
from graphbook.cli.nodes import cmd_nodes
from graphbook.cli.run import actor_limits, cmd_run, cpus_count, seconds, workers_count
from graphbook.cli.runs import cmd_export, cmd_metrics, cmd_runs
from graphbook.cli.serve import IGNORED_013, cmd_app, cmd_mcp, cmd_openapi, cmd_serve
from graphbook.cli.train import add_train_parser
from graphbook.engine.ray.connection import LOCAL as LOCAL_RAY
from graphbook.engine.ray.detached import LEASE_SETTING, LINGER
from graphbook.engine.ray.nodes import DUMPS
from graphbook.engine.ray.stage import STAGES
from graphbook.store import MOVE_FLAG

if TYPE_CHECKING:
    pass


def app_argv(argv: list[str]) -> list[str]:
    """Graphbook 0.13's `graphbook [app] --flag ...` is `graphbook serve --flag ...`;
    `graphbook app WORKFLOW` opens that workflow's app."""
    if argv[:1] == ["app"] and not (argv[1:2] and not argv[1].startswith("-")):
        return ["serve", *argv[1:]]
    if argv and argv[0].startswith("-") and argv[0] not in ("-h", "--help", "--version"):
        return ["serve", *argv]
    return argv


class VersionAction(argparse.Action):
    """`--version`: the version this package was built as (graphbook/about.py), looked up only
    when asked, so that parsing other commands does not read the installed packages' metadata."""

    def __init__(self, option_strings: Sequence[str], dest: str, **_: Any) -> None:
        super().__init__(
            option_strings, argparse.SUPPRESS, nargs=0, default=argparse.SUPPRESS,
            help="show the version and exit",
        )  # fmt: skip

    def __call__(self, parser: argparse.ArgumentParser, *_: Any) -> NoReturn:
        print(f"graphbook {version()}")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="graphbook", description="Build, watch and run ML data pipelines."
    )
    parser.add_argument("--version", action=VersionAction)
    parser.set_defaults(command=None, verbose=False)
    commands = parser.add_subparsers(title="commands", metavar="COMMAND")
    nodes = argparse.ArgumentParser(add_help=False)
    nodes.add_argument(
        "--nodes",
        action="append",
        metavar="DIR",
        type=Path,
        help=f"a folder of node files (repeatable); default: {NODES_FOLDER}/ folders nearby",
    )
    nodes.add_argument(
        "-v", "--verbose", action="store_true", help="show tracebacks of node files that fail"
    )
    add_run_parser(commands, nodes)
    add_serve_parser(commands)
    add_mcp_parser(commands)
    add_store_parsers(commands)
    add_train_parser(commands)
    listing = commands.add_parser("nodes", parents=[nodes], help="list the node catalog")
    listing.add_argument(
        "--docs",
        type=Path,
        metavar="DIR",
        help="write a Markdown page per node pack into DIR (the library's, the examples' and "
        "installed packs'; with --nodes, node folders' too) instead of listing",
    )
    listing.set_defaults(command=cmd_nodes)
    convert = commands.add_parser("convert", help="write a workflow in the canonical format")
    convert.add_argument("input", type=Path, metavar="IN.json")
    convert.add_argument("output", type=Path, metavar="OUT.json")
    convert.set_defaults(command=cmd_convert)
    add_new_parser(commands)
    return parser


def add_new_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    new = commands.add_parser("new", help="write a new workflow, from a template or empty")
    new.add_argument("file", type=Path, nargs="?", metavar="FILE.json")
    new.add_argument("--template", "-t", metavar="NAME", help="a template (see --list)")
    new.add_argument("--list", action="store_true", help="list the templates, one a line")
    new.add_argument("--force", action="store_true", help="replace FILE if it exists")
    new.set_defaults(command=cmd_new)


def add_run_parser(
    commands: argparse._SubParsersAction[argparse.ArgumentParser], parent: argparse.ArgumentParser
) -> None:
    run = commands.add_parser("run", parents=[parent], help="run a workflow headless")
    run.add_argument("workflow", type=Path, metavar="WORKFLOW.json|SCRIPT.py")
    run.add_argument(
        "--workers",
        type=workers_count,
        metavar="N",
        help="worker processes for load and dump functions (0: run them inline; default "
        "auto: one per core, started only for a step that has a load or dump function); with "
        "--ray, Ray actors per kind (default and 0: one per CPU of the cluster)",
    )
    add_ray_run_options(run)
    add_run_changes(run)
    add_run_output(run)
    run.set_defaults(command=cmd_run)


def add_ray_run_options(run: argparse.ArgumentParser) -> None:
    """`--ray [ADDRESS]` and how a run uses it: retries, what is shipped, the actors kept."""
    run.add_argument(
        "--ray",
        nargs="?",
        const=LOCAL_RAY,
        metavar="ADDRESS",
        help="run load and dump functions on Ray: alone, a local Ray started for this run; "
        "'auto' or ray://HOST:PORT, an existing cluster (needs pip install 'graphbook[ray]')",
    )
    run.add_argument(
        "--retries",
        type=workers_count,
        default=0,
        metavar="N",
        help="with --ray, run a task again (up to N times) when its actor dies",
    )
    add_ray_ship(run)
    run.add_argument(
        "--ray-keep",
        type=seconds,
        default=None,
        metavar="SECONDS",
        help="with --ray ADDRESS, keep the load and dump actors this long after the run, so "
        "that the next run of the same node code attaches to them warm (default "
        f"${LEASE_SETTING}, else {LINGER:.0f}; 0: end them with the run)",
    )


def add_run_changes(run: argparse.ArgumentParser) -> None:
    """What a run changes for itself: its values (`--set`, `--input`), how far it goes."""
    run.add_argument(
        "--continue-on-error",
        action="store_true",
        help="keep running after a node raises (the exit code is still 1)",
    )
    run.add_argument("--until", metavar="NODE_ID", help="run only what this node needs")
    run.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NODE.PARAM=VALUE",
        help="set a parameter for this run only (repeatable; NODE an id or a unique title; "
        "VALUE read as the parameter's type: lists and dicts as JSON); the file is not changed",
    )
    run.add_argument(
        "--input",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="give the workflow input NAME for this run (repeatable; VALUE read as its "
        "parameter's type, as --set reads it); the file's inputs list what it takes",
    )


def add_run_output(run: argparse.ArgumentParser) -> None:
    """Where a run's events and metrics go: the terminal (`--quiet`, `--json`), loggers."""
    run.add_argument(
        "--logger",
        action="append",
        default=[],
        type=logger_spec,
        metavar="KIND:DEST",
        help="write the run's metrics live through a metric logger (repeatable): csv:DIR, "
        "tensorboard:DIR, mlflow:DIR or mlflow:URI; the run and its metrics are kept in the run "
        "store too (as they are without --logger once a node reports metrics)",
    )
    run.add_argument(
        "--trace",
        type=Path,
        metavar="FILE",
        help="write where the run's time went as a Chrome/Perfetto trace (JSON: open it in "
        "ui.perfetto.dev or chrome://tracing): each node's turns, batches, the time a batch "
        "step waited for input, each worker's loads and dumps",
    )
    shown = run.add_mutually_exclusive_group()
    quiet = "show only errors, warnings and the summary"
    shown.add_argument("--quiet", "-q", action="store_true", help=quiet)
    shown.add_argument("--json", action="store_true", help="print every event as a JSON line")


def add_serve_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    serve = commands.add_parser("serve", help="start the server and web app (the default)")
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on")
    serve.add_argument("--port", type=int, default=8005, help="port to listen on (0: any free one)")
    add_folder_options(serve)
    serve.add_argument("--allow-origin", action="append", default=[], metavar="URL")
    serve.add_argument("-v", "--verbose", action="store_true")
    add_013_options(serve)
    serve.set_defaults(command=cmd_serve)
    app = commands.add_parser(
        "app", help="serve one workflow's app (a form over its inputs) and open it in the browser"
    )
    app.add_argument("workflow", type=Path, help="the workflow file")
    app.add_argument("--host", default="127.0.0.1", help="address to listen on")
    app.add_argument("--port", type=int, default=8005, help="port to listen on (0: any free one)")
    app.add_argument("--no-browser", action="store_true", help="print its address only")
    add_folder_options(app)
    app.set_defaults(command=cmd_app, allow_origin=[])
    openapi = commands.add_parser("openapi", help="print the server's OpenAPI document (JSON)")
    openapi.set_defaults(command=cmd_openapi)


def add_ray_ship(parser: argparse.ArgumentParser) -> None:
    """How work is laid out on Ray, for `run`, `serve` and `mcp`: the code shipped
    (`--ray-ship DIR`), where dumps run (`--ray-dumps`), the actors, the stages."""
    parser.add_argument(
        "--ray-ship",
        action="append",
        default=[],
        type=Path,
        metavar="DIR",
        help="with --ray, a folder of Python modules to send to every Ray node, besides the "
        "nodes folders (repeatable)",
    )
    parser.add_argument(
        "--ray-dumps",
        choices=DUMPS,
        default=None,
        help="with --ray, where dump functions run: 'driver' (the default: on this machine's "
        "Ray node, so the files they write land here) or 'anywhere' (every node: for outputs "
        "on shared storage or remote URIs)",
    )
    add_ray_actors(parser)
    add_ray_stages(parser)


def add_ray_actors(parser: argparse.ArgumentParser) -> None:
    """How many load and dump actors, and what each reserves."""
    parser.add_argument(
        "--ray-actors",
        type=actor_limits,
        default=None,
        metavar="MIN:MAX",
        help="with --ray, the fewest and most actors of each kind (load, dump): the pool starts "
        "MIN and adds one at a time while work waits for its actors, up to MAX (default 1:, "
        "MAX the cluster's CPUs, read again as nodes join); --workers N is exactly N",
    )
    parser.add_argument(
        "--ray-actor-cpus",
        type=cpus_count,
        default=None,
        metavar="CPUS",
        help="with --ray, the CPUs each load and dump actor reserves, so that an autoscaler "
        "adds nodes for actors that do not fit (default 1; 0: none)",
    )


def add_ray_stages(parser: argparse.ArgumentParser) -> None:
    """Where batch steps' models run: stage actors, and how many replicas."""
    parser.add_argument(
        "--ray-stages",
        choices=STAGES,
        default=None,
        help="with --ray, where batch steps' on_item_batch (the model) runs: 'on' stage actors "
        "with a replica of the step each, fed the loads where they were made; 'off' this "
        "process; 'auto' (the default) stage actors on a cluster of several nodes",
    )
    parser.add_argument(
        "--ray-replicas",
        type=workers_count,
        default=None,
        metavar="N",
        help="with --ray, stage actors per batch step at most (default: one per node, one per "
        "GPU on GPU nodes)",
    )


def add_folder_options(parser: argparse.ArgumentParser) -> None:
    """What `serve` and `mcp` share: the folders, the run store, workers and the token."""
    parser.add_argument("--workflows", "--workflow_dir", type=Path, default=None, metavar="DIR")
    parser.add_argument("--nodes", "--nodes_dir", type=Path, default=None, metavar="DIR")
    parser.add_argument("--data", type=Path, default=None, metavar="DIR", help="run store folder")
    parser.add_argument(
        "--media",
        "--media_dir",
        type=Path,
        action="append",
        default=None,
        metavar="DIR",
        help="a folder whose images the browser may show (repeatable; default: ./data)",
    )
    parser.add_argument("--workers", "--num_workers", type=workers_count, default=0, metavar="N")
    parser.add_argument(
        "--ray",
        nargs="?",
        const=LOCAL_RAY,
        metavar="ADDRESS",
        help="run load and dump functions on Ray (as graphbook run --ray)",
    )
    add_ray_ship(parser)
    parser.add_argument(
        "--token",
        default=os.environ.get("GRAPHBOOK_TOKEN"),
        help="require this token (needed off 127.0.0.1; default: $GRAPHBOOK_TOKEN)",
    )
    parser.add_argument("--cache-mb", type=int, default=1024, metavar="MB")
    parser.add_argument(
        "--import-limit",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="how long one node file may take to import before it is listed as failed",
    )
    parser.add_argument("--no-watch", action="store_true", help="do not watch the nodes folder")
    parser.add_argument(
        "--apps",
        action="store_true",
        help="serve apps only (docs/apps.md): the apps list and app pages; workflows read-only, "
        "node files not writable",
    )
    parser.add_argument(
        MOVE_FLAG,
        action="store_true",
        help="if the run store is damaged, move it aside (kept) and start a new, empty one",
    )


def add_mcp_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    mcp = commands.add_parser(
        "mcp", help="serve the MCP tools on stdin/stdout, for a desktop agent (docs/automation.md)"
    )
    add_folder_options(mcp)
    mcp.add_argument("-v", "--verbose", action="store_true", help="log more (on stderr)")
    mcp.set_defaults(command=cmd_mcp)


def add_013_options(serve: argparse.ArgumentParser) -> None:
    """Graphbook 0.13's `graphbook app` options (its examples start with `--root_dir DIR`)."""
    ignored = ", ".join(f"--{name}" for name in IGNORED_013)
    group = serve.add_argument_group(
        "Graphbook 0.13 options", f"also accepted, with a note that they change nothing: {ignored}"
    )
    group.add_argument(
        "--root_dir",
        type=Path,
        metavar="DIR",
        help="workflows in DIR and nodes in DIR/custom_nodes",
    )
    valued = ("web_dir", "media_port", "config", "docs_dir")
    for name in valued:
        group.add_argument(f"--{name}", metavar="VALUE", help=argparse.SUPPRESS)
    for name in sorted(IGNORED_013.keys() - set(valued)):
        group.add_argument(f"--{name}", action="store_true", help=argparse.SUPPRESS)


def add_store_parsers(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    store = argparse.ArgumentParser(add_help=False)
    store.add_argument(
        "--home",
        type=Path,
        metavar="DIR",
        help="the data directory (default: $GRAPHBOOK_HOME or ./.graphbook)",
    )
    store.add_argument("--json", action="store_true", help="print JSON lines")
    runs = commands.add_parser("runs", parents=[store], help="list runs from the run store")
    runs.add_argument(
        "--kind", choices=["workflow", "batch", "train", "search"], help="only this kind"
    )
    runs.add_argument("--limit", type=workers_count, default=50, metavar="N", help="at most N")
    runs.set_defaults(command=cmd_runs)
    export = runs.add_subparsers(dest="runs_command", metavar="export").add_parser(
        "export",
        parents=[store],
        help="write a run's metrics and hyperparameters as TensorBoard events, CSV or MLflow",
    )
    export.add_argument("run", metavar="RUN_ID")
    export.add_argument("--to", required=True, choices=EXPORTS, help="the format")
    export.add_argument(
        "destination",
        metavar="DIR",
        help="the folder to write (for mlflow: a folder, or a tracking URI such as sqlite:///m.db)",
    )
    export.set_defaults(command=cmd_export)
    metrics = commands.add_parser("metrics", parents=[store], help="show metrics of runs")
    metrics.add_argument("run", nargs="?", metavar="RUN_ID", help="a run's metrics")
    chosen = metrics.add_mutually_exclusive_group()
    chosen.add_argument("--checkpoint", metavar="UUID", help="of the runs that used it")
    chosen.add_argument("--model", metavar="NAME", help="of the runs that used its --version")
    metrics.add_argument("--version", type=int, default=-1, help="model version (default: latest)")
    metrics.add_argument("--group", help="only this metrics group")
    metrics.set_defaults(command=cmd_metrics)
