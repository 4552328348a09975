"""`graphbook runs`, `graphbook runs export` and `graphbook metrics`: the run store read from
the command line."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from datetime import datetime
from pathlib import Path

from rich.text import Text

from graphbook.cli.consoles import OK, error_console, output_console
from graphbook.cli.metrics import exporter
from graphbook.errors import GraphbookError
from graphbook.store import MetricRecord, RunRecord, Store, data_home


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
