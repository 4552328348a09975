"""The command line, run in-process through `main` and for real as `python -m graphbook`."""

from __future__ import annotations

import io
import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from graphbook import __version__
from graphbook.cli import main
from graphbook.cli.terminal import TerminalSink, json_safe
from graphbook.engine.processes import ProcessPool
from graphbook.events import NodeFinished, NodeLog, NodeStarted, NodeTitle, RunFinished, RunStarted

ROOT = Path(__file__).resolve().parents[2]

NODES = textwrap.dedent(
    '''
    import time
    from pathlib import Path

    from graphbook import batch, output, param, source, step
    from graphbook.steps import GeneratorSourceStep


    @step("Test/Numbers")
    @source()
    @param("count", "int", default=10)
    def numbers(ctx):
        for i in range(ctx.count):
            yield {"x": i}


    @step("Test/Explode")
    @param("bad", "int", default=-1)
    @output("out")
    def explode(ctx, data):
        ctx.log(f"saw {data['x']}")
        if data["x"] == ctx.bad:
            raise ValueError(f"bad item {data['x']}")


    def double(item):
        return item * 2


    @step("Test/Doubler")
    @batch(4, "x", load_fn=double)
    def doubler(ctx, outputs, items, data):
        for d, o in zip(data, outputs):
            d["doubled"] = o


    class Forever(GeneratorSourceStep):
        """Yields a dict every few milliseconds until stopped."""

        Parameters = {"marker": {"type": "string", "required": True}}

        def on_start(self):
            Path(self.marker + ".started").write_text("started")

        def load(self):
            i = 0
            while True:
                time.sleep(0.01)
                yield {"x": i}
                i += 1

        def on_end(self):
            Path(self.marker).write_text("on_end ran")
    '''
)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder with `custom_nodes/nodes.py` and an empty `workflows/`; the current folder."""
    (tmp_path / "custom_nodes").mkdir()
    (tmp_path / "custom_nodes" / "nodes.py").write_text(NODES)
    (tmp_path / "workflows").mkdir()
    monkeypatch.chdir(tmp_path)
    return tmp_path


def node(id: str, type: str, **params: Any) -> dict[str, Any]:
    return {"id": id, "type": type, "params": params}


def edge(source: str, target: str, output: str = "out") -> dict[str, str]:
    return {"source": source, "output": output, "target": target, "input": "in"}


def write_workflow(
    project: Path, nodes: list[dict[str, Any]], edges: list[dict[str, str]], name: str = "wf"
) -> Path:
    path = project / "workflows" / f"{name}.json"
    data = {"format": "graphbook.workflow", "version": 1, "nodes": nodes, "edges": edges}
    path.write_text(json.dumps(data))
    return path


def explode_workflow(project: Path, count: int = 10, bad: int = -1) -> Path:
    """Numbers -> Explode (raises on x == bad) -> DumpJSONL into out.jsonl."""
    nodes = [
        node("0", "Numbers", count=count),
        node("1", "Explode", bad=bad),
        node("2", "DumpJSONL", jsonl_path=str(project / "out.jsonl")),
    ]
    return write_workflow(project, nodes, [edge("0", "1"), edge("1", "2")])


def graphbook(*args: str, cwd: Path, **popen: Any) -> subprocess.Popen[str]:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    command = [sys.executable, "-m", "graphbook", *args]
    return subprocess.Popen(
        command,
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **popen,
    )


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


# -- graphbook run -----------------------------------------------------------------------------
def test_a_good_run_exits_0_and_summarises_counts_per_output(project: Path) -> None:
    nodes = [
        node("0", "Numbers", count=7),
        node("1", "Split", split_fn="lambda d: d['x'] % 2 == 0"),
        node("2", "DumpJSONL", jsonl_path=str(project / "even.jsonl")),
    ]
    path = write_workflow(project, nodes, [edge("0", "1"), edge("1", "2", "A")])

    process = graphbook("run", str(path), cwd=project)
    out, err = process.communicate(timeout=60)

    assert process.returncode == 0, err
    assert "run completed" in out
    assert "0 error(s)" in out
    summary = out[out.index("run completed") :]
    assert re.search(r"0  Numbers +out=7\n", summary)
    assert re.search(r"1  Split +A=4  B=3\n", summary)
    assert [d["x"] for d in lines(project / "even.jsonl")] == [0, 2, 4, 6]


@pytest.mark.parametrize("workers", [0, 2])
def test_workers_run_load_functions(
    project: Path, workers: int, capsys: pytest.CaptureFixture[str]
) -> None:
    dump = str(project / "doubled.jsonl")
    nodes = [
        node("0", "Numbers", count=9),
        node("1", "Doubler"),
        node("2", "DumpJSONL", jsonl_path=dump),
    ]
    path = write_workflow(project, nodes, [edge("0", "1"), edge("1", "2")])

    assert main(["run", str(path), "--workers", str(workers), "--quiet"]) == 0, capsys.readouterr()

    assert [d["doubled"] for d in lines(Path(dump))] == [2 * x for x in range(9)]


def test_run_reads_a_library_component_beside_the_workflows_folder(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dump = str(project / "doubled.jsonl")
    library = {
        "format": "graphbook.component",
        "version": 1,
        "inputs": {"in": {"node": "double", "input": "in"}},
        "outputs": {},
        "params": {"path": {"node": "dump", "param": "jsonl_path"}},
        "nodes": [node("double", "Doubler"), node("dump", "DumpJSONL")],
        "edges": [edge("double", "dump")],
    }
    (project / "components").mkdir()
    (project / "components" / "save_doubled.json").write_text(json.dumps(library))
    comp = node("1", "Component", path=dump) | {"component": {"library": "save_doubled"}}
    path = write_workflow(project, [node("0", "Numbers", count=5), comp], [edge("0", "1")])

    assert main(["run", str(path), "--workers", "2", "--quiet"]) == 0, capsys.readouterr()
    assert [d["doubled"] for d in lines(Path(dump))] == [0, 2, 4, 6, 8]
    assert re.search(r"1/double +Doubler +out=5", capsys.readouterr().out)

    comp["params"] = {"path": dump, "depth": 3}
    path = write_workflow(project, [node("0", "Numbers", count=5), comp], [edge("0", "1")])
    assert main(["run", str(path), "--until", "1/double"]) == 2
    err = capsys.readouterr().err
    assert "node '1'" in err and "components/save_doubled.json" in err and "'depth'" in err


def test_plain_output_shows_node_logs_and_finished_nodes(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", str(explode_workflow(project, count=3))]) == 0

    out = capsys.readouterr().out
    assert "[1] saw 0" in out
    assert "[1] Explode: done  out=3" in out
    assert "\x1b[" not in out  # not a terminal: no colours, no animation


def test_quiet_prints_only_the_summary(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", str(explode_workflow(project, count=3)), "--quiet"]) == 0

    out = capsys.readouterr().out
    assert out.startswith("run completed")
    assert "saw" not in out


def test_an_unknown_node_type_exits_2_naming_the_node_and_a_fix(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_workflow(project, [node("0", "Numbers"), node("7", "Splitt")], [edge("0", "7")])

    assert main(["run", str(path)]) == 2

    captured = capsys.readouterr()
    assert "node '7'" in captured.err
    assert "did you mean 'Split'?" in captured.err
    assert captured.out == ""


def test_a_missing_workflow_file_exits_2(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "missing.json"]) == 2
    assert "missing.json" in capsys.readouterr().err


def test_a_missing_nodes_folder_exits_2(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", str(explode_workflow(project)), "--nodes", "nowhere"]) == 2
    assert "nowhere" in capsys.readouterr().err


def test_a_node_that_raises_exits_1_with_its_id_and_traceback_on_stderr(project: Path) -> None:
    process = graphbook("run", str(explode_workflow(project, bad=3)), cwd=project)
    out, err = process.communicate(timeout=60)

    assert process.returncode == 1
    assert "[1] Explode failed: ValueError: bad item 3" in err
    assert "Traceback (most recent call last)" in err
    assert 'raise ValueError(f"bad item' in err
    assert "run failed" in out


def test_continue_on_error_lets_the_other_dicts_through_and_still_exits_1(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = explode_workflow(project, count=10, bad=3)

    assert main(["run", str(path), "--continue-on-error"]) == 1

    assert [d["x"] for d in lines(project / "out.jsonl")] == [0, 1, 2, 4, 5, 6, 7, 8, 9]
    assert "bad item 3" in capsys.readouterr().err


def test_a_broken_node_file_is_reported_and_the_others_still_load(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = (
        "from graphbook.steps import Step\nraise RuntimeError('boom')\nclass Broken(Step): ...\n"
    )
    (project / "custom_nodes" / "broken.py").write_text(broken)

    assert main(["run", str(explode_workflow(project, count=2))]) == 0
    assert "broken.py" not in capsys.readouterr().err, "run imports only the files it needs"

    assert main(["nodes"]) == 0
    out, err = capsys.readouterr()
    assert "broken.py" in err and "RuntimeError: boom" in err
    assert "Traceback" not in err
    assert "Explode" in out, "the other files still load"

    uses_broken = write_workflow(project, [node("0", "Numbers"), node("1", "Broken")], [])
    assert main(["run", str(uses_broken), "--verbose"]) == 2
    err = capsys.readouterr().err
    assert "RuntimeError: boom" in err and "Traceback" in err
    assert "unknown node type 'Broken'" in err


def test_json_prints_only_events_one_per_line(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", str(explode_workflow(project, count=3, bad=1)), "--json"]) == 1

    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    kinds = [e["type"] for e in events]
    assert kinds[0] == "run_started"
    assert kinds[-1] == "run_finished"
    assert {"node_started", "node_log", "node_error", "node_finished"} <= set(kinds)
    failed = next(e for e in events if e["type"] == "node_error")
    assert failed["node_id"] == "1"
    assert failed["error"]["type"] == "ValueError"
    assert events[-1]["status"] == "failed"
    assert events[-1]["counts"]["0"] == {"out": 3}


def test_until_runs_only_what_the_node_needs(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = explode_workflow(project, count=3)

    assert main(["run", str(path), "--until", "1", "--quiet"]) == 0
    assert not (project / "out.jsonl").exists()
    assert "DumpJSONL" not in capsys.readouterr().out

    assert main(["run", str(path), "--until", "9"]) == 2
    assert "'9'" in capsys.readouterr().err


def test_a_bypassed_node_does_not_run_and_a_muted_one_lets_nothing_through(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = explode_workflow(project, count=3, bad=1)
    data = json.loads(path.read_text())
    data["nodes"][1]["mode"] = "bypass"  # Explode would fail on x == 1
    path.write_text(json.dumps(data))
    assert main(["run", str(path), "--quiet"]) == 0
    rows = (project / "out.jsonl").read_text().splitlines()
    assert [json.loads(r) for r in rows] == [{"x": 0}, {"x": 1}, {"x": 2}]

    assert main(["run", str(path), "--until", "1"]) == 2
    assert "node '1' is bypassed, so it does not run" in capsys.readouterr().err

    data["nodes"][1]["mode"] = "mute"
    path.write_text(json.dumps(data))
    (project / "out.jsonl").unlink()
    assert main(["run", str(path), "--quiet"]) == 0
    assert (project / "out.jsonl").read_text() == ""


def test_node_folders_are_found_beside_the_workflow_or_given(
    project: Path, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = explode_workflow(project, count=2)
    monkeypatch.chdir(tmp_path_factory.mktemp("elsewhere"))
    assert main(["run", str(path), "--quiet"]) == 0  # ../custom_nodes of the workflow file

    moved = project / "my_nodes"
    (project / "custom_nodes").rename(moved)
    assert main(["run", str(path), "--quiet"]) == 2
    assert main(["run", str(path), "--quiet", "--nodes", str(moved)]) == 0


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_ctrl_c_stops_the_run_and_on_end_runs(project: Path, signum: int, code: int) -> None:
    marker = project / "ended"
    path = write_workflow(
        project, [node("0", "Forever", marker=str(marker)), node("1", "Explode")], [edge("0", "1")]
    )
    process = graphbook("run", str(path), cwd=project)
    deadline = time.monotonic() + 30
    while not Path(f"{marker}.started").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.2)

    process.send_signal(signum)
    out, err = process.communicate(timeout=30)

    assert process.returncode == code, err
    assert marker.read_text() == "on_end ran"
    assert "run stopped" in out


# -- graphbook nodes, convert, --version -------------------------------------------------------
def test_nodes_lists_the_catalog(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["nodes"]) == 0

    out = capsys.readouterr().out
    assert "Split (step) -> A, B" in out
    assert "split_fn: function (required)" in out
    assert "Numbers (source) -> out" in out
    assert "count: int = 10" in out


def test_convert_turns_a_graphbook_file_into_a_canonical_one_that_runs(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dump = str(project / "converted.jsonl")
    old = {
        "version": "0",
        "type": "workflow",
        "nodes": [
            graphbook_node("0", "Numbers", {"count": {"type": "number", "value": 4}}),
            graphbook_node("1", "DumpJSONL", {"jsonl_path": {"type": "string", "value": dump}}),
        ],
        "edges": [{"source": "0", "sourceHandle": "out", "target": "1", "targetHandle": "in"}],
    }
    source, target = project / "workflows" / "old.json", project / "workflows" / "new.json"
    source.write_text(json.dumps(old))

    assert main(["convert", str(source), str(target)]) == 0

    canonical = json.loads(target.read_text())
    assert canonical["format"] == "graphbook.workflow"
    assert [n["type"] for n in canonical["nodes"]] == ["Numbers", "DumpJSONL"]
    assert main(["run", str(target), "--quiet"]) == 0
    assert len(lines(Path(dump))) == 4
    assert "wrote" in capsys.readouterr().out


def graphbook_node(id: str, name: str, parameters: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": id,
        "type": "step",
        "position": {"x": 10 * int(id), "y": 0},
        "data": {"name": name, "parameters": parameters, "category": "Test", "label": name},
    }


def test_convert_of_a_broken_file_exits_2(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "bad.json").write_text("{not json")
    assert main(["convert", "bad.json", "out.json"]) == 2
    assert "not valid JSON" in capsys.readouterr().err
    assert not (project / "out.json").exists()


def test_version_and_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert __version__ in capsys.readouterr().out
    assert main([]) == 0
    assert "run" in capsys.readouterr().out
    assert main(["run", "wf.json", "--workers", "-1"]) == 2


def test_json_safe_keeps_events_serialisable() -> None:
    value = {"n": float("nan"), "t": (1, 2), "o": object()}
    encoded = json.loads(json.dumps(json_safe(value)))
    assert encoded["n"] == "nan"
    assert encoded["t"] == [1, 2]
    assert encoded["o"].startswith("<object")


def test_on_a_terminal_the_sink_draws_a_live_table_and_then_the_summary() -> None:
    out = Console(file=io.StringIO(), force_terminal=True, width=100)
    sink = TerminalSink(out, Console(file=io.StringIO()))

    sink(RunStarted("r1", "", "all", None, [NodeTitle("0", "Numbers")], 0.0))
    sink(NodeStarted("r1", "0"))
    assert sink.live is not None and sink.live.is_started
    sink(NodeLog("r1", "0", "info", "hello [from] the node"))
    sink(NodeFinished("r1", "0", "done", {"out": 3}, 0, 0.5))
    node = sink.view.node("0")
    assert node is not None and node.rate == 6.0
    sink(RunFinished("r1", "completed", 0.5, {"0": {"out": 3}}, 0))

    assert sink.live is None
    text = out.file.getvalue()
    assert "[0] hello [from] the node" in text
    assert "items/s" in text
    assert "run completed" in text


def test_a_warning_in_a_run_s_log_says_so_on_stderr_even_when_quiet() -> None:
    """A log line at the warning level (Ray spilling, a node struck off) is prefixed
    `warning:` and shown with --quiet; information stays on stdout, left out by --quiet."""
    for quiet in (False, True):
        shown_io, said_io = io.StringIO(), io.StringIO()
        sink = TerminalSink(Console(file=shown_io), Console(file=said_io), quiet=quiet)
        sink(RunStarted("r1", "", "all", None, [NodeTitle("0", "Numbers")], 0.0))
        sink(NodeLog("r1", "0", "warning", "the object store spilled"))
        sink(NodeLog("r1", "0", "info", "dump functions run on the driver's node"))
        said, shown = said_io.getvalue(), shown_io.getvalue()
        assert "warning: [0] the object store spilled" in said
        assert "spilled" not in shown
        assert ("[0] dump functions run" in shown) is not quiet
        assert "dump functions" not in said


def test_the_live_view_shows_the_worker_pools_queues() -> None:
    shown = io.StringIO()
    out = Console(file=shown, force_terminal=True, width=120)
    pool = ProcessPool(2)
    try:
        lane = pool.lane(time.sleep, capacity=8)
        for _ in range(3):
            lane.submit(None, (2.0,))
        pool.wait(0)  # hands the queued tasks to the workers
        sink = TerminalSink(out, Console(file=io.StringIO()), pool_stats=pool.stats)
        out.print(sink._render())
    finally:
        pool.close()
    text = shown.getvalue()
    assert "worker pool: 2 per kind" in text
    assert re.search(r"load \d queued, 3 in workers \(2 alive\)", text), text
    assert "dump 0 queued, 0 in workers" in text


def test_trace_writes_where_the_time_went_and_the_summary_shows_the_wait(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    nodes = [node("0", "Numbers", count=9), node("1", "Doubler")]
    path = write_workflow(project, nodes, [edge("0", "1")])
    trace = project / "out" / "run.json"

    assert main(["run", str(path), "--workers", "2", "--trace", str(trace)]) == 0

    shown = capsys.readouterr()
    assert "3 batches: waited for input" in shown.out
    assert f"trace written to {trace}" in shown.err
    categories = {e.get("cat") for e in json.loads(trace.read_text())["traceEvents"]}
    assert {"node", "batch", "load"} <= categories
