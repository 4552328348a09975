"""Opening the run store: a folder that cannot be written is said to be so (not "damaged"),
and an SQLite file of another program is refused, not adopted with an empty history."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from fault_procs import env, project, serve

from graphbook.store import Store

UNSHARE = shutil.which("unshare")


def serve_command(folder: Path, *extra: str) -> list[str]:
    command = [sys.executable, "-m", "graphbook", "serve", "--no-watch", "--port", "0"]
    return [*command, "--data", str(folder / "data"), "--nodes", str(folder / "nodes"), *extra]


def refused(command: list[str], folder: Path) -> str:
    done = subprocess.run(
        command, cwd=folder, env=env(), capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2, done
    assert "Traceback" not in done.stderr and "serving" not in done.stdout
    return " ".join(done.stderr.split())


def read_only(folder: Path, command: list[str]) -> list[str]:
    """`command` with `folder` mounted read-only (a user and mount namespace: root too gets
    'Read-only file system')."""
    assert UNSHARE is not None
    script = f'mount --bind "{folder}" "{folder}" && mount -o remount,bind,ro "{folder}" && '
    script += "exec " + " ".join(f'"{part}"' for part in command)
    return [UNSHARE, "--user", "--map-root-user", "--mount", "sh", "-c", script]


def namespaces_work() -> bool:
    if UNSHARE is None:
        return False
    done = subprocess.run([UNSHARE, "--user", "--map-root-user", "--mount", "true"], check=False)
    return done.returncode == 0


@pytest.mark.skipif(not namespaces_work(), reason="needs unshare --user --mount")
@pytest.mark.parametrize("flag", [(), ("--move-damaged-store",)])
@pytest.mark.parametrize("content", ["a good store", "a damaged store"])
def test_a_read_only_data_folder_is_not_called_damaged(
    tmp_path: Path, flag: tuple[str, ...], content: str
) -> None:
    folder = project(tmp_path)
    path = folder / "data" / "graphbook.sqlite"
    Store(path).start_run("workflow", "kept.json")
    if content == "a damaged store":
        path.write_bytes(b"garbage " * 512)
    before = sorted(p.name for p in path.parent.iterdir())
    message = refused(read_only(folder / "data", serve_command(folder, *flag)), folder)
    assert f"{path} cannot be written" in message and "read-only" in message, message
    assert "is damaged" not in message and "Errno" not in message, message
    assert sorted(p.name for p in path.parent.iterdir()) == before


def test_an_sqlite_file_of_another_program_is_refused_not_adopted(tmp_path: Path) -> None:
    folder = project(tmp_path)
    path = folder / "data" / "graphbook.sqlite"
    path.parent.mkdir()
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE photos (id INTEGER PRIMARY KEY, file TEXT)")
        db.execute("INSERT INTO photos (file) VALUES ('a.jpg')")
    foreign = path.read_bytes()
    message = refused(serve_command(folder), folder)
    assert str(path) in message and "another program" in message and "photos" in message
    assert path.read_bytes() == foreign
    server = serve(folder, "--move-damaged-store")
    try:
        assert server.call("GET", "/api/runs") == (200, {"runs": []})
    finally:
        server.stop()
    (kept,) = path.parent.glob("graphbook.sqlite.damaged-*")
    with sqlite3.connect(kept) as db:
        assert db.execute("SELECT file FROM photos").fetchall() == [("a.jpg",)]
