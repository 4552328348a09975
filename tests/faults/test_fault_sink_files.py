"""`graphbook run` killed mid-run never spoils a sink's file: SIGTERM and SIGINT leave every
sink's target as the run before wrote it (DumpJSONL too, whole or nothing), kill -9 leaves
them as they were and only hidden temporaries, which the next run that writes there removes."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from fault_procs import env, reaping, wait_until

NODES = '''"""A source slow enough to be killed in the middle of."""

import time
from pathlib import Path

from graphbook import param, source, step


@step("Faults/Trickle")
@source()
@param("n", "int", default=3)
@param("mark", "string", default="")
def trickle(ctx):
    for i in range(ctx.n):
        if i == 20 and ctx.mark:
            Path(ctx.mark).write_text("midway")
        yield {"i": i, "text": "x" * 50}
        time.sleep(0.01 if ctx.n > 3 else 0)
'''
SINKS = {
    "dump": ("DumpJSONL", "jsonl_path", "dump.jsonl"),
    "csv": ("WriteCSV", "path", "table.csv"),
    "jsonl": ("WriteJSONL", "path", "table.jsonl"),
}


def setup(folder: Path) -> Path:
    (folder / "nodes").mkdir()
    (folder / "nodes" / "trickle.py").write_text(NODES)
    nodes = [{"id": "src", "type": "Trickle", "params": {"n": 3}}]
    edges = []
    for node_id, (kind, key, name) in SINKS.items():
        nodes.append({"id": node_id, "type": kind, "params": {key: str(folder / "out" / name)}})
        edges.append({"source": "src", "output": "out", "target": node_id, "input": "in"})
    document = {"format": "graphbook.workflow", "version": 1, "nodes": nodes, "edges": edges}
    (folder / "wf.json").write_text(json.dumps(document))
    return folder / "wf.json"


def run(folder: Path, *more: str) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "graphbook", "run", str(folder / "wf.json"), "--quiet"]
    command += ["--nodes", str(folder / "nodes"), *more]
    where = {**env(), "GRAPHBOOK_HOME": str(folder / "data")}
    return subprocess.Popen(command, cwd=folder, env=where, stderr=subprocess.PIPE)


def contents(folder: Path) -> dict[str, bytes]:
    return {name: (folder / "out" / name).read_bytes() for _, _, name in SINKS.values()}


def temporaries(folder: Path) -> list[str]:
    return sorted(p.name for p in (folder / "out").iterdir() if p.name.endswith(".tmp"))


@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGINT, signal.SIGKILL])
def test_a_killed_run_leaves_every_sink_file_as_the_run_before_wrote_it(
    tmp_path: Path, how: signal.Signals
) -> None:
    setup(tmp_path)
    first = run(tmp_path)
    assert first.wait(120) == 0, first.stderr.read() if first.stderr else ""
    before = contents(tmp_path)
    assert before["dump.jsonl"].count(b"\n") == 3
    mark = tmp_path / "midway"
    with reaping() as pids:
        long = run(tmp_path, "--set", "src.n=3000", "--set", f"src.mark={mark}")
        pids.append(long.pid)
        wait_until(mark.exists, "the run to be midway")
        long.send_signal(how)
        long.wait(60)
    assert contents(tmp_path) == before, f"a sink's file changed after {how.name}"
    if how != signal.SIGKILL:
        assert temporaries(tmp_path) == []
    again = run(tmp_path)
    assert again.wait(120) == 0, again.stderr.read() if again.stderr else ""
    assert temporaries(tmp_path) == [], "the next run removes what the killed one left"
    assert contents(tmp_path) == before
    for process in (first, long, again):
        if process.stderr is not None:
            process.stderr.close()
