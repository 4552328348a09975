"""The command line: `graphbook` / `graphbook serve` (the editor), `graphbook run` (headless),
`graphbook nodes`, `graphbook convert`, and `graphbook runs` / `graphbook metrics` (the store).

Exit codes: 0 the run completed without errors; 1 a node failed; 2 a usage, file or
workflow error (nothing ran); 130 the run was stopped with Ctrl-C (143 with SIGTERM).
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterable, Sequence
from contextlib import closing
from dataclasses import asdict
from datetime import datetime
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any, NoReturn, TextIO, cast

from rich.console import Console
from rich.text import Text

from graphbook.about import version
from graphbook.cli.asking import prompter_for
from graphbook.cli.terminal import EncodableStream, JsonSink, TerminalSink
from graphbook.cli.train import add_train_parser
from graphbook.components import flatten
from graphbook.engine.executor import (
    Backend,
    RayBackend,
    RunControl,
    RunResult,
    make_pool,
    run_workflow,
)
from graphbook.engine.ray_pool import LOCAL as LOCAL_RAY
from graphbook.engine.ray_pool import connect as connect_ray
from graphbook.engine.ray_ship import shippable
from graphbook.errors import GraphbookError
from graphbook.inputs import parse_inputs
from graphbook.modes import OFF_WORDS
from graphbook.overrides import parse_settings
from graphbook.params import ParamSpec
from graphbook.registry import Registry
from graphbook.spec import NodeSpec
from graphbook.store import MOVE_FLAG, MetricRecord, RunRecord, Store, data_home
from graphbook.workflow import Workflow

if TYPE_CHECKING:
    from aiohttp import web

    from graphbook.loggers import MetricLogger
    from graphbook.server import ServerSettings

OK = 0
FAILED = 1
USAGE = 2
INTERRUPTED = 130
NODES_FOLDER = "custom_nodes"

Command = Callable[[argparse.Namespace], int]
Handler = Callable[[int, FrameType | None], Any] | int | signal.Handlers


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line with `argv` (default: `sys.argv[1:]`); returns the exit code."""
    parser = build_parser()
    typed = argv is None
    try:
        args = parser.parse_args(app_argv(list(sys.argv[1:] if argv is None else argv)))
    except SystemExit as exc:  # --help, --version and usage errors end parsing this way
        return exc.code if isinstance(exc.code, int) else USAGE
    if args.command is None and typed:  # `graphbook` typed bare starts the server
        args = parser.parse_args(["serve"])
    if args.command is None:  # `main([])` from code: show the commands
        parser.print_help()
        return OK
    configure_logging(args.verbose)
    return dispatch(args.command, args)


def entry() -> NoReturn:
    """The `graphbook` command and `python -m graphbook`: `main`, then the process's end.

    Before it ends, the objects still alive are left out of the cyclic garbage collector's last
    passes (`gc.freeze`): with torch and torchvision imported, Python's exit spent up to a
    second of CPU in them, depending on where the collector's generations stood (bench/README.md,
    start-up). Every object is still freed by reference counting as the modules are cleared."""
    code = main()
    gc.freeze()
    sys.exit(code)


def dispatch(command: Command, args: argparse.Namespace) -> int:
    """Run one subcommand, turning the errors a person can fix into messages and exit code 2."""
    err = error_console()
    try:
        return command(args)
    except BrokenPipeError:  # whoever read stdout went away (`graphbook run --json | head`)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return FAILED
    except (GraphbookError, OSError) as exc:  # WorkflowError lists every problem by node
        err.print(Text(f"error: {exc}", style="red"))
    except KeyboardInterrupt:
        err.print(Text("interrupted", style="yellow"))
        return INTERRUPTED
    return USAGE


# -- parser ------------------------------------------------------------------------------------
def app_argv(argv: list[str]) -> list[str]:
    """Graphbook 0.13's `graphbook [app] --flag ...` is `graphbook serve --flag ...`."""
    if argv[:1] == ["app"]:
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


# -- graphbook new -----------------------------------------------------------------------------
def add_new_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    new = commands.add_parser("new", help="write a new workflow, from a template or empty")
    new.add_argument("file", type=Path, nargs="?", metavar="FILE.json")
    new.add_argument("--template", "-t", metavar="NAME", help="a template (see --list)")
    new.add_argument("--list", action="store_true", help="list the templates, one a line")
    new.add_argument("--force", action="store_true", help="replace FILE if it exists")
    new.set_defaults(command=cmd_new)


def cmd_new(args: argparse.Namespace) -> int:
    from graphbook import templates

    out = output_console()
    if args.list:
        width = max(len(t.name) for t in templates.TEMPLATES)
        for known in templates.TEMPLATES:
            out.print(Text(f"{known.name:<{width}}  {known.title}: {known.description}"))
        return OK
    if args.file is None:
        raise GraphbookError("name the file to write: graphbook new FILE.json [--template NAME]")
    if args.template is None:
        if args.file.exists() and not args.force:
            raise GraphbookError(f"{args.file} exists; choose another name or add --force")
        Workflow().save(args.file)
        out.print(Text(f"wrote {args.file} (an empty workflow; --list shows the templates)"))
        return OK
    created = templates.create(args.template, args.file, Path.cwd(), overwrite=args.force)
    out.print(Text(f"wrote {created.workflow} from template {args.template!r}"))
    for sample in created.samples:
        out.print(Text(f"wrote sample data {sample}"))
    out.print(Text(f"run it: graphbook run {created.workflow}"))
    return OK


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
    shown = run.add_mutually_exclusive_group()
    shown.add_argument("--quiet", "-q", action="store_true", help="show only errors and summary")
    shown.add_argument("--json", action="store_true", help="print every event as a JSON line")
    run.set_defaults(command=cmd_run)


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


# -- output ------------------------------------------------------------------------------------
def output_console() -> Console:
    stream = cast(TextIO, EncodableStream(sys.stdout))
    return Console(file=stream, highlight=False, emoji=False, markup=False, soft_wrap=True)


def error_console() -> Console:
    stream = cast(TextIO, EncodableStream(sys.stderr))
    return Console(file=stream, highlight=False, emoji=False, markup=False, soft_wrap=True)


def configure_logging(verbose: bool) -> None:
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    # The CLI reports node files that fail to import itself, from `registry.failures`.
    logging.getLogger("graphbook.registry").setLevel(logging.ERROR)


# -- node folders ------------------------------------------------------------------------------
def node_folders(given: Iterable[Path] | None, workflow: Path | None = None) -> list[Path]:
    """The folders given, or else every existing `custom_nodes` in the current folder, the
    workflow file's folder and that folder's parent (each once)."""
    if given:
        return list(given)
    places = [Path.cwd()]
    if workflow is not None:
        here = workflow.resolve().parent
        places += [here, here.parent]
    folders: dict[Path, Path] = {}
    for place in places:
        folder = place / NODES_FOLDER
        if folder.is_dir():
            folders.setdefault(folder.resolve(), folder)
    return list(folders.values())


def load_registry(
    folders: Iterable[Path], err: Console, verbose: bool, workflow: Workflow | None = None
) -> Registry:
    """Built-in nodes plus every folder's (or only the files defining the kinds `workflow`
    uses, see `Registry.load_needed`); a file that fails to import is a warning."""
    registry = Registry.with_builtins()
    if workflow is None:
        for folder in folders:
            registry.load_folder(folder)
    else:
        needed = {node.type for node in workflow.nodes.values()} - workflow.code.keys()
        modules = {node.type: node.module for node in workflow.nodes.values() if node.module}
        registry.load_needed(folders, needed, modules)
    for failure in registry.failures.values():
        err.print(
            Text(f"warning: could not load node file {failure.path}: {failure.error}", "yellow")
        )
        if verbose:
            err.print(Text(failure.traceback.rstrip(), style="yellow"))
    return registry


# -- graphbook run -----------------------------------------------------------------------------
def cmd_run(args: argparse.Namespace) -> int:
    err = error_console()
    workflow = load_workflow(args.workflow)
    print_notes(workflow, err)
    folders = node_folders(args.nodes, args.workflow)
    flat = flatten(workflow)[0]  # nodes inside components by their paths (`comp/inner`)
    registry = load_registry(folders, err, args.verbose, flat)
    if args.until is not None and args.until not in flat.nodes:
        known = ", ".join(flat.nodes) or "none"
        raise GraphbookError(f"--until {args.until!r}: no such node; the nodes are: {known}")
    if args.until is not None and flat.nodes[args.until].mode != "active":
        word = OFF_WORDS[flat.nodes[args.until].mode]
        raise GraphbookError(f"--until {args.until!r}: the node is {word}, so it does not run")
    overrides = parse_settings(workflow, registry, args.set)
    inputs = parse_inputs(workflow, registry, args.input) if args.input else None
    backend = backend_of(args, folders)
    pool = make_pool(workers_of(args.workers, backend), backend)
    if isinstance(backend, RayBackend) and backend.address is not None:
        describe = getattr(pool, "describe", lambda: "")
        err.print(Text(f"note: on the Ray cluster at {backend.address}: {describe()}"))
    sink = make_sink(args, err, getattr(pool, "stats", None))
    control = RunControl()
    prompter = prompter_for(sink, output_console(), err)
    with closing(pool), closing(sink), StopOnSignal(control) as stopper:
        result = run_workflow(
            workflow,
            registry=registry,
            sink=sink,
            continue_on_error=args.continue_on_error,
            until=args.until,
            control=control,
            pool=pool,
            prompter=prompter,
            overrides=overrides,
            inputs=inputs,
        )
    return exit_code(result, stopper)


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
        if args.retries or args.ray_ship:
            flag = "--retries" if args.retries else "--ray-ship"
            raise GraphbookError(f"{flag} applies to Ray actors: add --ray")
        return "local"
    address = None if args.ray == LOCAL_RAY else args.ray
    ship = shippable([*nodes, *args.ray_ship])
    return RayBackend(address, retries=args.retries, ship=ship)


def make_sink(
    args: argparse.Namespace, err: Console, pool_stats: Callable[[], Any] | None = None
) -> JsonSink | TerminalSink:
    if args.json:
        return JsonSink(sys.stdout)
    return TerminalSink(output_console(), err, quiet=args.quiet, pool_stats=pool_stats)


def exit_code(result: RunResult, stopper: StopOnSignal) -> int:
    if result.status == "stopped":
        return stopper.exit_code()
    return OK if result.ok else FAILED


class StopOnSignal:
    """While active, Ctrl-C (SIGINT) or SIGTERM stops the run: it sets `control` and interrupts
    whatever node code is running, which the executor turns into a stopped run that still calls
    every node's `on_end`. A second signal interrupts that clean-up too."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self, control: RunControl) -> None:
        self.control = control
        self.signum: int | None = None
        self._previous: dict[int, Handler] = {}

    def __enter__(self) -> StopOnSignal:
        if threading.current_thread() is threading.main_thread():
            for signum in self.SIGNALS:
                previous = signal.getsignal(signum)
                if previous is not signal.SIG_IGN:  # ignored (nohup, `&`): not ours to handle
                    self._previous[signum] = signal.SIG_DFL if previous is None else previous
                    signal.signal(signum, self._stop)
        return self

    def __exit__(self, *exc_info: object) -> None:
        for signum, previous in self._previous.items():
            signal.signal(signum, previous)

    def _stop(self, signum: int, frame: FrameType | None) -> None:
        if self.signum is None:
            self.signum = signum
            self.control.stop()
        raise KeyboardInterrupt

    def exit_code(self) -> int:
        """128 + the signal's number, as shells report it: 130 for Ctrl-C, 143 for SIGTERM."""
        return 128 + (self.signum or signal.SIGINT)


# -- graphbook nodes ---------------------------------------------------------------------------
def cmd_nodes(args: argparse.Namespace) -> int:
    registry = load_registry(node_folders(args.nodes), error_console(), args.verbose)
    out = output_console()
    if args.docs is not None:
        from graphbook.cli.nodedocs import write_pack_docs

        kinds = ["builtin", "example", "pack", *(["custom"] if args.nodes else [])]
        for path in write_pack_docs(registry, args.docs, kinds):
            out.print(Text(f"wrote {path}"))
        return OK
    for heading, specs in by_pack(registry):
        out.print(Text(heading, style="bold"))
        category: str | None = None
        for spec in specs:
            if spec.category != category:
                category = spec.category
                out.print(Text(f"  {category or '(no category)'}", style="bold"))
            for line in spec_lines(spec):
                out.print(Text(line))
    return OK


PACK_ORDER = {"builtin": 0, "pack": 1, "example": 2, "custom": 3}
PACK_WORDS = {
    "builtin": "built-in",
    "pack": "installed node pack",
    "example": "examples",
    "custom": "node folder",
}


def by_pack(registry: Registry) -> list[tuple[str, list[NodeSpec]]]:
    """The registry's nodes grouped by pack: the library's first (core, then its packs in
    order), then installed packs, the examples, and node folders; each by category."""
    from graphbook.nodes import PACKS

    library = ("core", *PACKS)
    groups: dict[tuple[str, str], list[NodeSpec]] = {}
    for spec in registry:
        groups.setdefault((spec.pack_kind, spec.pack), []).append(spec)

    def order(key: tuple[str, str]) -> tuple[int, int, str]:
        kind, pack = key
        place = library.index(pack) if kind == "builtin" and pack in library else len(library)
        return PACK_ORDER.get(kind, 9), place, pack

    return [
        (f"{pack or 'custom nodes'} ({PACK_WORDS[kind]})", groups[(kind, pack)])
        for kind, pack in sorted(groups, key=order)
    ]


def spec_lines(spec: NodeSpec) -> list[str]:
    outputs = ", ".join(spec.outputs) or "none"
    return [f"    {spec.name} ({spec.kind}) -> {outputs}", *(param_line(p) for p in spec.params)]


def param_line(param: ParamSpec) -> str:
    line = f"        {param.name}: {param.type}"
    if param.default is not None and not callable(param.default):
        line += f" = {param.default!r}"
    if param.required:
        line += " (required)"
    return line + (f"  {param.description}" if param.description else "")


# -- graphbook serve ---------------------------------------------------------------------------
def add_serve_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    serve = commands.add_parser("serve", help="start the server and web app (the default)")
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on")
    serve.add_argument("--port", type=int, default=8005, help="port to listen on (0: any free one)")
    add_folder_options(serve)
    serve.add_argument("--allow-origin", action="append", default=[], metavar="URL")
    serve.add_argument("-v", "--verbose", action="store_true")
    add_013_options(serve)
    serve.set_defaults(command=cmd_serve)
    openapi = commands.add_parser("openapi", help="print the server's OpenAPI document (JSON)")
    openapi.set_defaults(command=cmd_openapi)


def add_ray_ship(parser: argparse.ArgumentParser) -> None:
    """`--ray-ship DIR`, for `run`, `serve` and `mcp`."""
    parser.add_argument(
        "--ray-ship",
        action="append",
        default=[],
        type=Path,
        metavar="DIR",
        help="with --ray, a folder of Python modules to send to every Ray node, besides the "
        "nodes folders (repeatable)",
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
    parser.add_argument("--no-watch", action="store_true", help="do not watch the nodes folder")
    parser.add_argument(
        MOVE_FLAG,
        action="store_true",
        help="if the run store is damaged, move it aside (kept) and start a new, empty one",
    )


def cmd_openapi(args: argparse.Namespace) -> int:
    """The document GET /api/openapi.json answers, without starting a server."""
    from graphbook.server.app import API
    from graphbook.server.openapi import document

    print(json.dumps(document(API), indent=2, ensure_ascii=False))
    return 0


def server_settings(args: argparse.Namespace, **more: Any) -> ServerSettings:
    """The settings the folder options (and `more`) give."""
    from graphbook.server import ServerSettings

    media = args.media if args.media is not None else [Path("data")]
    workflows, nodes = serve_folders(args)
    return ServerSettings(
        workflows=workflows,
        nodes=nodes,
        data=args.data or data_home(),
        media=tuple(media),
        workers=args.workers,
        ray=args.ray,
        ray_ship=tuple(map(Path, shippable(args.ray_ship))),
        token=args.token,
        cache_budget=args.cache_mb << 20,
        watch=not args.no_watch,
        move_damaged_store=args.move_damaged_store,
        **more,
    )


def cmd_serve(args: argparse.Namespace) -> int:
    from graphbook.server import create_app

    settings = server_settings(
        args, host=args.host, port=args.port, allowed_origins=tuple(args.allow_origin)
    )
    for note in ignored_013_options(args):
        error_console().print(Text(f"note: {note}", style="yellow"))
    if args.ray is not None:  # the server holds Ray; the pools its runs make only add actors
        connect_ray(None if args.ray == LOCAL_RAY else args.ray)
    app = create_app(settings)
    out = output_console()

    def ready(urls: list[str]) -> None:
        out.print(Text(f"Graphbook is serving on {' and '.join(urls)}  (Ctrl-C to stop)"))

    import asyncio  # here, not at the top: `graphbook run` does without it

    asyncio.run(serve(app, args.host, args.port, ready))
    return OK


# -- graphbook mcp -----------------------------------------------------------------------------
def add_mcp_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    mcp = commands.add_parser(
        "mcp", help="serve the MCP tools on stdin/stdout, for a desktop agent (docs/automation.md)"
    )
    add_folder_options(mcp)
    mcp.add_argument("-v", "--verbose", action="store_true", help="log more (on stderr)")
    mcp.set_defaults(command=cmd_mcp)


def cmd_mcp(args: argparse.Namespace) -> int:
    from graphbook.cli.mcp import serve_stdio

    return serve_stdio(server_settings(args), error_console())


IGNORED_013 = {
    "web_dir": "the editor is built into graphbook (web/, `npm run build`)",
    "no_sample": "no sample workflow is ever written",
    "spawn": "worker processes are started the same way on every system",
    "isolate_users": "every client shares one session; run one server per person instead",
    "copy_outputs": "each branch already gets its own copy of a dict's containers",
    "continue_on_failure": "use `graphbook run --continue-on-error` or the editor's setting",
    "start_media_server": "the server itself shows images under --media folders",
    "media_port": "the server itself shows images under --media folders",
    "config": (
        "its plugins are not imported when the server starts; a workflow that names a plugin's "
        "module (data.module) imports it and its export() calls register the nodes, or put "
        "the plugin's node files in the --nodes folder"
    ),
    "docs_dir": "a workflow's docs are read from docs/<Workflow>.md beside the workflow file",
}
"""Graphbook 0.13 options `serve` accepts that change nothing here, and why."""


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


def serve_folders(args: argparse.Namespace) -> tuple[Path, Path]:
    """The workflow and node folders: as given, else under --root_dir, else the defaults."""
    root: Path | None = getattr(args, "root_dir", None)  # a 0.13 option, of `serve` only
    workflows = args.workflows or (root if root is not None else Path("workflows"))
    nodes = args.nodes or (root / NODES_FOLDER if root is not None else Path(NODES_FOLDER))
    return workflows, nodes


def ignored_013_options(args: argparse.Namespace) -> list[str]:
    """A line for each 0.13 option given that has no effect here."""
    given = [name for name in IGNORED_013 if getattr(args, name, None) not in (None, False)]
    return [f"--{name} (Graphbook 0.13) has no effect: {IGNORED_013[name]}" for name in given]


async def serve(
    app: web.Application, host: str, port: int, ready: Callable[[list[str]], None]
) -> None:
    """Serve `app` until SIGINT or SIGTERM; `ready` gets the URLs it listens on (the port the
    system chose for port 0) once it listens."""
    from aiohttp import web

    runner = web.AppRunner(app, handle_signals=False)
    await runner.setup()
    try:
        await web.TCPSite(runner, host, port).start()
        ready([bound_url(address) for address in runner.addresses])
        await _signalled()
    finally:
        await runner.cleanup()


def bound_url(address: Any) -> str:
    """`http://HOST:PORT/` for a socket address (an IPv6 host in brackets)."""
    host, port = address[0], address[1]
    return f"http://[{host}]:{port}/" if ":" in host else f"http://{host}:{port}/"


async def _signalled() -> None:
    import asyncio

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        # Where the loop cannot take signals (Windows), Ctrl-C raises KeyboardInterrupt instead.
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(signum, stop.set)
    await stop.wait()


# -- graphbook convert -------------------------------------------------------------------------
def cmd_convert(args: argparse.Namespace) -> int:
    workflow = Workflow.load(args.input)
    print_notes(workflow, error_console())
    path = workflow.save(args.output)
    nodes, edges = len(workflow.nodes), len(workflow.edges)
    output_console().print(Text(f"wrote {path} ({nodes} node(s), {edges} edge(s))"))
    return OK


# -- graphbook runs / graphbook metrics ------------------------------------------------------
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


def open_store(home: Path | None) -> Store | None:
    """The run store under `home` (or the default data directory); None if there is none."""
    path = (home if home is not None else data_home()) / "graphbook.sqlite"
    return Store(path) if path.exists() else None


def cmd_runs(args: argparse.Namespace) -> int:
    store = open_store(args.home)
    out = output_console()
    records = store.list_runs(args.kind, args.limit) if store is not None else []
    for record in records:
        out.print(Text(json.dumps(asdict(record)) if args.json else run_line(record)))
    if not records and not args.json:
        error_console().print(Text("no runs yet"))
    return OK


EXPORTS = ("csv", "mlflow", "tensorboard")
"""The formats `graphbook runs export --to` writes, each through its metric logger."""


def exporter(kind: str, destination: str) -> MetricLogger:
    """The metric logger that writes `kind` to `destination` (imported only for an export)."""
    from graphbook.loggers import CSVLogger, MLflowLogger, TensorBoardLogger

    if kind == "csv":
        return CSVLogger(destination)
    if kind == "tensorboard":
        return TensorBoardLogger(destination)
    uri = destination if "://" in destination else Path(destination).resolve().as_uri()
    return MLflowLogger(uri)


def cmd_export(args: argparse.Namespace) -> int:
    """`graphbook runs export RUN --to csv|tensorboard|mlflow DIR`: what the loggers write
    while a run runs, written from the store afterwards."""
    store = open_store(args.home)
    if store is None:
        raise GraphbookError("no run store yet: nothing has run with this data directory")
    try:
        store.get_run(args.run)
    except KeyError:
        raise GraphbookError(f"no run {args.run!r}: `graphbook runs` lists them") from None
    from graphbook.loggers import export_run

    count = export_run(store, args.run, [exporter(args.to, args.destination)])
    error_console().print(
        Text(f"exported {count} metric row(s) of run {args.run} to {args.destination}")
    )
    return OK


def run_line(run: RunRecord) -> str:
    started = datetime.fromtimestamp(run.started).strftime("%Y-%m-%d %H:%M:%S")
    done, total = run.counts.get("batches_completed"), run.counts.get("total_batches")
    progress = f"  {done}/{total if total is not None else '?'} batches" if done is not None else ""
    return f"{run.id}  {run.kind:<8} {run.status:<9}  {started}  {run.name}{progress}"


def cmd_metrics(args: argparse.Namespace) -> int:
    store = open_store(args.home)
    if store is None:
        raise GraphbookError("no run store yet: nothing has run with this data directory")
    try:
        records = select_metrics(store, args)
    except KeyError as exc:
        raise GraphbookError(str(exc.args[0] if exc.args else exc)) from None
    out = output_console()
    for record in records:
        out.print(Text(json.dumps(asdict(record)) if args.json else metric_line(record)))
    return OK


def select_metrics(store: Store, args: argparse.Namespace) -> list[MetricRecord]:
    if args.checkpoint is not None:
        store.get_checkpoint(args.checkpoint)
        return store.checkpoint_metrics(args.checkpoint, args.group)
    if args.model is not None:
        versions = store.model_versions(args.model)
        if not versions:
            raise KeyError(f"no model named {args.model!r}")
        version = versions[-1].version if args.version == -1 else args.version
        store.model_version_checkpoint(args.model, version)
        return store.model_version_metrics(args.model, version, args.group)
    if args.run is None:
        raise GraphbookError("give a RUN_ID, --checkpoint UUID or --model NAME")
    store.get_run(args.run)
    return store.metrics([args.run], args.group)


def metric_line(record: MetricRecord) -> str:
    values = " ".join(f"{k}={metric_value(v)}" for k, v in record.metrics.items())
    return f"{record.run_id}  {record.group:<10} {record.steps_completed:>6}  {values}"


def metric_value(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    text = value if isinstance(value, str) else json.dumps(value)
    return text if len(text) <= 60 else text[:57] + "..."
