"""`graphbook serve` (the editor, also 0.13's `graphbook app` and its options), `graphbook mcp`
(the MCP tools on stdio) and `graphbook openapi`: the server's settings from the arguments."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import signal
import webbrowser
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from rich.text import Text

from graphbook.cli.consoles import OK, error_console, output_console
from graphbook.cli.folders import NODES_FOLDER
from graphbook.cli.run import sizing_of
from graphbook.engine.ray.connection import LOCAL as LOCAL_RAY
from graphbook.engine.ray.connection import connect as connect_ray
from graphbook.engine.ray.nodes import DRIVER
from graphbook.engine.ray.ship import shippable
from graphbook.engine.ray.stage import AUTO
from graphbook.errors import GraphbookError
from graphbook.store import data_home

if TYPE_CHECKING:
    from aiohttp import web

    from graphbook.server.settings import ServerSettings


def cmd_openapi(args: argparse.Namespace) -> int:
    """The document GET /api/openapi.json answers, without starting a server."""
    from graphbook.server.app import API
    from graphbook.server.openapi import document

    print(json.dumps(document(API), indent=2, ensure_ascii=False))
    return 0


def server_settings(args: argparse.Namespace, **more: Any) -> ServerSettings:
    """The settings the folder options (and `more`) give."""
    from graphbook.server.settings import ServerSettings

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
        ray_dumps=args.ray_dumps or DRIVER,
        **{f"ray_{key}": value for key, value in sizing_of(args).items()},
        ray_stages=args.ray_stages or AUTO,
        ray_replicas=args.ray_replicas or 0,
        token=args.token,
        cache_budget=args.cache_mb << 20,
        import_limit=args.import_limit,
        watch=not args.no_watch,
        move_damaged_store=args.move_damaged_store,
        apps_only=args.apps,
        **more,
    )


def cmd_serve(args: argparse.Namespace) -> int:
    from graphbook.server.app import create_app

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


def cmd_app(args: argparse.Namespace) -> int:
    """`graphbook app WORKFLOW`: serve apps only, its folder the workflows folder, and open
    the workflow's app page."""
    from graphbook.server.app import create_app
    from graphbook.workflow import Workflow

    file: Path = args.workflow
    if not file.is_file():
        raise GraphbookError(f"no workflow file {file}; give the path of a .json workflow")
    folder = (args.workflows or file.parent).resolve()
    if not file.resolve().is_relative_to(folder):
        raise GraphbookError(f"{file} is not inside the workflows folder {folder}")
    Workflow.load(file)  # a file that is not a workflow is said now, not in the browser
    name = file.resolve().relative_to(folder).as_posix()
    args.workflows = folder
    settings = server_settings(args, host=args.host, port=args.port)
    settings = dataclasses.replace(settings, apps_only=True)
    app = create_app(settings)
    out = output_console()

    def ready(urls: list[str]) -> None:
        page = f"{urls[0]}app/{quote(name)}"
        out.print(Text(f"The app {name} is at {page}  (Ctrl-C to stop)"))
        if not args.no_browser:
            webbrowser.open(page)

    import asyncio

    asyncio.run(serve(app, args.host, args.port, ready))
    return OK


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
