"""Front end: `graphbook train SCRIPT` runs a training script (with --hparam values), and with
`--grid CONFIG` (or `--search CONFIG`) a grid or random search over hyperparameters, printing
each trial and the best."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from graphbook.errors import GraphbookError

if TYPE_CHECKING:  # the trainer imports torch: only when a training command runs
    from graphbook.trainer.search import SearchResult


def add_train_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    train = commands.add_parser(
        "train", help="run a training script, or a hyperparameter search over it"
    )
    train.add_argument(
        "script",
        type=Path,
        nargs="?",
        metavar="SCRIPT.py",
        help="the training script (default: the config's entrypoint_script)",
    )
    config = train.add_mutually_exclusive_group()
    config.add_argument(
        "--grid",
        type=Path,
        metavar="CONFIG.yaml",
        help="search the config's hyperparameters (its searcher: grid/random)",
    )
    config.add_argument("--search", type=Path, metavar="CONFIG.yaml", help="the same as --grid")
    train.add_argument(
        "--hparam",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a hyperparameter (repeatable; VALUE is JSON or text)",
    )
    train.add_argument(
        "--parallel",
        type=int,
        default=1,
        metavar="N",
        help="trials at a time, each in its own process (default 1)",
    )
    train.add_argument(
        "--start-over",
        action="store_true",
        help="start new runs instead of resuming unfinished ones",
    )
    train.add_argument("--name", help="the run's (or search's) name, to resume it by")
    train.set_defaults(command=cmd_train)


def parse_hparams(items: list[str]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for item in items:
        name, sep, text = item.partition("=")
        if not sep or not name:
            raise GraphbookError(f"--hparam takes NAME=VALUE, got {item!r}")
        try:
            values[name] = json.loads(text)
        except json.JSONDecodeError:
            values[name] = text
    return values


def cmd_train(args: argparse.Namespace) -> int:
    from graphbook.trainer.errors import EXIT_PREEMPTED
    from graphbook.trainer.search import load_config, run_search

    hparams = parse_hparams(args.hparam)
    config_path = args.grid or args.search
    if config_path is None:
        if args.script is None:
            raise GraphbookError("give the training SCRIPT.py (or --grid CONFIG.yaml)")
        return run_once(args.script, hparams, args.start_over, args.name)
    config = load_config(config_path, args.script, hparams)
    console = Console(stderr=True)
    result = run_search(
        config,
        name=args.name,
        parallel=args.parallel,
        start_over=args.start_over,
        notify=lambda line: console.print(Text(line)),
    )
    Console().print(table(result))
    if result.stopped:
        return EXIT_PREEMPTED
    return 0 if all(t.status == "completed" for t in result.trials) else 1


def run_once(script: Path, hparams: dict[str, Any], start_over: bool, name: str | None) -> int:
    from graphbook.trainer.runs import HPARAMS_ENV, RUN_NAME_ENV, START_OVER_ENV

    if not script.is_file():
        raise GraphbookError(f"no training script at {script}")
    env = dict(os.environ)
    if hparams:
        env[HPARAMS_ENV] = json.dumps(hparams)
    if start_over:
        env[START_OVER_ENV] = "1"
    if name:
        env[RUN_NAME_ENV] = name
    return run_until_stopped([sys.executable, str(script)], env)


def run_until_stopped(command: list[str], env: dict[str, str]) -> int:
    """Run the training process to its end. SIGINT or SIGTERM here is passed on to it (Ctrl-C
    reaches it anyway; it ignores repeats) and this waits while it checkpoints and exits 75,
    instead of dying first and leaving it behind (or killing it mid-checkpoint, as
    `subprocess.run` does on Ctrl-C)."""
    from graphbook.durable.signals import StopSignals

    with StopSignals() as stop:
        child = subprocess.Popen(command, env=env)
        while (code := child.poll()) is None:
            stop.pass_on([child])
            time.sleep(0.05)
    return code


def table(result: SearchResult) -> Table:
    metric = result.metric or "-"
    view = Table(title=f"search {result.search_id}: best by {metric}")
    for column in ("trial", "run", "status", metric, "hyperparameters"):
        view.add_column(column)
    for trial in result.trials:
        value = trial.validation.get(metric)
        mark = " *" if result.best is not None and trial.index == result.best.index else ""
        view.add_row(
            f"{trial.index}{mark}",
            trial.run_id or "-",
            trial.status + (f": {trial.error[-120:]}" if trial.error else ""),
            f"{value:.6g}" if isinstance(value, int | float) else "-",
            json.dumps(trial.hparams, sort_keys=True),
        )
    return view
