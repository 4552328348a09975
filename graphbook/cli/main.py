"""The command line's entry: `graphbook` / `graphbook serve` (the editor), `graphbook run`
(headless), `graphbook nodes`, `graphbook convert`, and `graphbook runs` / `graphbook metrics`
(the store); the arguments are parser.py's, each command its own module.

Exit codes: 0 the run completed without errors; 1 a node failed; 2 a usage, file or
workflow error (nothing ran); 130 the run was stopped with Ctrl-C (143 with SIGTERM).
"""

from __future__ import annotations

import argparse
import gc
import logging
import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, NoReturn

from rich.text import Text

from graphbook.cli.consoles import FAILED, INTERRUPTED, OK, USAGE, error_console
from graphbook.cli.parser import app_argv, build_parser
from graphbook.errors import GraphbookError

if TYPE_CHECKING:
    pass


Command = Callable[[argparse.Namespace], int]


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


def configure_logging(verbose: bool) -> None:
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    # The CLI reports node files that fail to import itself, from `registry.failures`.
    logging.getLogger("graphbook.registry").setLevel(logging.ERROR)
