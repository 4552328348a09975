"""Graphbook 0.13's command line (`graphbook --root_dir DIR`, ...) starts the server."""

from __future__ import annotations

import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import urllib.request
from pathlib import Path
from typing import Any

from graphbook.cli.parser import app_argv, build_parser
from graphbook.cli.serve import cmd_serve, ignored_013_options, serve_folders

ROOT = Path(__file__).resolve().parents[2]
SERVING = re.compile(r"Graphbook is serving on (http://127\.0\.0\.1:\d+/)")


def parse(*argv: str) -> Any:
    return build_parser().parse_args(app_argv(list(argv)))


def test_013_options_are_aliases_of_ours(tmp_path: Path) -> None:
    args = parse("--root_dir", str(tmp_path), "--num_workers", "2", "--port", "9000")
    assert args.command is cmd_serve and args.workers == 2 and args.port == 9000
    assert serve_folders(args) == (tmp_path, tmp_path / "custom_nodes")
    args = parse("app", "--workflow_dir", "w", "--nodes_dir", "n", "--media_dir", "m")
    assert serve_folders(args) == (Path("w"), Path("n")) and args.media == [Path("m")]
    assert serve_folders(parse("serve")) == (Path("workflows"), Path("custom_nodes"))


def test_013_options_without_an_equivalent_are_accepted_with_a_note() -> None:
    args = parse("--no_sample", "--web_dir", "web/dist", "--isolate_users")
    notes = ignored_013_options(args)
    assert len(notes) == 3
    assert all("(Graphbook 0.13) has no effect" in note for note in notes)
    assert ignored_013_options(parse("--port", "0")) == []


def first_line(process: subprocess.Popen[str], timeout: float = 60) -> str:
    lines: queue.Queue[str] = queue.Queue()
    stdout = process.stdout
    assert stdout is not None
    threading.Thread(target=lambda: lines.put(stdout.readline()), daemon=True).start()
    try:
        return lines.get(timeout=timeout)
    except queue.Empty:
        process.kill()
        return "(nothing) " + process.communicate()[1]


def test_graphbook_root_dir_serves_an_013_project(project: Path, tmp_path: Path) -> None:
    path = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    env = {**os.environ, "PYTHONPATH": path}
    command = [sys.executable, "-m", "graphbook", "--root_dir", str(project), "--port", "0"]
    command += ["--no_sample", "--no-watch", "--data", str(tmp_path / "data")]
    process = subprocess.Popen(
        command, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        found = SERVING.search(first_line(process))
        assert found, process.stderr
        with urllib.request.urlopen(found.group(1) + "api/workflows", timeout=10) as response:
            listed = {f["path"] for f in json.loads(response.read())["files"]}
        assert {"Links.json", "Numbers.json"} <= listed
        with urllib.request.urlopen(found.group(1) + "api/catalog", timeout=10) as response:
            names = {n["name"] for n in json.loads(response.read())["nodes"]}
        assert {"LinkSource", "Counter", "Collect"} <= names
    finally:
        process.send_signal(signal.SIGINT)
        _out, err = process.communicate(timeout=30)
    assert process.returncode == 0, err
    assert "--no_sample (Graphbook 0.13) has no effect" in err


def test_the_node_index_under_root_dir_is_not_a_workflow(project: Path) -> None:
    """With 0.13's --root_dir layout the node folder (custom_nodes/) lies in
    the workflows folder, and the node index is a JSON file under its __pycache__/."""
    from graphbook import Registry
    from graphbook.server.workflows import WorkflowFiles

    Registry().load_needed([project / "custom_nodes"], {"Counter"})
    assert (project / "custom_nodes" / "__pycache__" / "graphbook-nodes.json").is_file()
    listed = {f.path for f in WorkflowFiles(project, Registry()).listing().files}
    assert {"Links.json", "Numbers.json"} <= listed
    assert not [name for name in listed if "__pycache__" in name]
