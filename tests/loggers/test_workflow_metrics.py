"""Metrics of workflow runs: what nodes report with `log_metric` (in the run's process and in
worker processes) and what the engine measures of each node and the run, kept in the run store
and written live through `graphbook run --logger`; `graphbook runs export` of such a run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from graphbook.store import Store
from graphbook.workflow import Workflow

from .readers import Rows, csv_rows, store_rows, tensorboard_rows

pytestmark = pytest.mark.timeout(300)
ROOT = Path(__file__).resolve().parents[2]
NODES = """
from typing import Any
from graphbook import batch, log_metric, log_metrics, source, step


def load(item: int) -> int:
    log_metric("loaded", item)  # in a worker process with --workers 2
    return item * 10


@step("Metered/MeteredCount")
@source()
def count(ctx: Any) -> Any:
    for i in range(6):
        log_metric("made", i)
        yield {"items": [i]}


@step("Metered/MeteredTrain")
@batch(2, "items", load_fn=load)
def train(ctx: Any, outputs: list[int], items: list[int], data: list[dict]) -> None:
    log_metrics({"loss": 1.0 / (1 + items[0]), "seen": sum(outputs)})
"""


@pytest.fixture(scope="module")
def metered(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with the node file and a workflow of a source and a batch step that report."""
    folder = tmp_path_factory.mktemp("metered")
    (folder / "custom_nodes").mkdir()
    (folder / "custom_nodes" / "metered.py").write_text(NODES)
    wf = Workflow()
    wf.connect(wf.add("MeteredCount", id="count"), wf.add("MeteredTrain", id="train"))
    wf.save(folder / "metered.json")
    return folder


def graphbook(*args: str, cwd: Path, home: Path) -> subprocess.CompletedProcess[str]:
    path = f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"
    return subprocess.run(
        [sys.executable, "-m", "graphbook", *args],
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": path, "GRAPHBOOK_HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )


@pytest.fixture(scope="module")
def cli_run(metered: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """`graphbook run --workers 2 --logger csv:... --logger tensorboard:...`, once."""
    out = tmp_path_factory.mktemp("out")
    home = out / "home"
    done = graphbook(
        "run", "metered.json", "--workers", "2", "--json",
        "--logger", f"csv:{out / 'csv'}", "--logger", f"tensorboard:{out / 'tb'}",
        cwd=metered, home=home,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    run_id = events[0]["run_id"]
    return {"out": out, "home": home, "run_id": run_id, "events": events}


REPORTED = {
    "count": [(i, {"made": float(i)}) for i in range(6)],
    "train": [
        (
            i,
            {"loaded": float(i)}
            | ({"loss": 1 / (1 + 2 * i), "seen": 40.0 * i + 10} if i < 3 else {}),
        )
        for i in range(6)
    ],
}
"""What the nodes report: the source a row per dict it makes, the batch step a loss per batch
of two and its load function (in the workers) a row per item, all at their own steps."""


def reported(rows: Rows) -> dict[str, list[tuple[int, dict[str, float]]]]:
    """Each node's own rows, merged by step (what a node reports at one step may come in two
    rows: its own call and its workers'), without the engine's figures."""
    merged: dict[str, dict[int, dict[str, float]]] = {}
    for group in ("count", "train"):
        for step, values in rows.get(group, []):
            own = {k: v for k, v in values.items() if k in ("made", "loaded", "loss", "seen")}
            if own:
                merged.setdefault(group, {}).setdefault(step, {}).update(own)
    return {group: sorted(steps.items()) for group, steps in merged.items()}


def test_the_store_holds_what_nodes_reported_in_the_main_process_and_in_workers(
    cli_run: dict[str, Any],
) -> None:
    rows = store_rows(cli_run["home"], cli_run["run_id"])
    assert reported(rows) == REPORTED
    record = Store(cli_run["home"] / "graphbook.sqlite").get_run(cli_run["run_id"])
    assert (record.kind, record.name, record.status) == ("workflow", "metered.json", "completed")


def test_the_engine_measures_each_node_and_the_run(cli_run: dict[str, Any]) -> None:
    rows = store_rows(cli_run["home"], cli_run["run_id"])
    [(step, count)] = [(s, v) for s, v in rows["count"] if "items_out" in v]
    assert step == 6, "after the node's own steps"
    assert count["items_out"] == 6 and count["errors"] == 0
    assert count["items_per_s"] == pytest.approx(6 / count["seconds"])
    [(_, run)] = rows["run"]
    assert run["items"] == 6 and run["errors"] == 0 and run["items_per_s"] > 0


def test_csv_files_hold_the_rows_live(cli_run: dict[str, Any]) -> None:
    written = csv_rows(cli_run["out"] / "csv")
    assert reported(written) == REPORTED
    assert written == store_rows(cli_run["home"], cli_run["run_id"])


def test_tensorboard_event_files_hold_the_scalars(cli_run: dict[str, Any]) -> None:
    pytest.importorskip("tensorboard")
    scalars = tensorboard_rows(cli_run["out"] / "tb")
    as_rows = {g: sorted(steps.items()) for g, steps in scalars.items()}
    as_float32 = {  # TensorBoard keeps 32-bit floats
        group: [
            (step, {k: float(np.float32(v)) for k, v in values.items()}) for step, values in rows
        ]
        for group, rows in REPORTED.items()
    }
    assert reported(as_rows) == as_float32
    assert scalars["run"][0]["items"] == 6


def test_runs_export_writes_the_workflow_runs_metrics(cli_run: dict[str, Any]) -> None:
    out = cli_run["out"] / "exported"
    done = graphbook(
        "runs", "export", cli_run["run_id"], "--to", "csv", str(out),
        cwd=cli_run["out"], home=cli_run["home"],
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert csv_rows(out) == csv_rows(cli_run["out"] / "csv")


def test_run_json_prints_the_metric_events(cli_run: dict[str, Any]) -> None:
    metrics = [e for e in cli_run["events"] if e["type"] == "node_metrics"]
    steps = [row["step"] for e in metrics if e["node_id"] == "count" for row in e["rows"]]
    assert steps == list(range(6))


def test_a_run_without_metrics_or_loggers_writes_no_store(tmp_path: Path) -> None:
    Workflow().save(tmp_path / "empty.json")
    done = graphbook("run", "empty.json", "--workers", "0", cwd=tmp_path, home=tmp_path / "home")
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / "home").exists()


def test_a_wrong_logger_is_a_usage_error(metered: Path, tmp_path: Path) -> None:
    done = graphbook("run", "metered.json", "--logger", "wandb:x", cwd=metered, home=tmp_path)
    assert done.returncode == 2
    assert "csv:DIR" in done.stderr and "'wandb:x'" in done.stderr
