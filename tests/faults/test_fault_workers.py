"""Workers are on their own: a signal to a worker never reaches the server, workers die with
their parent whatever they are doing, and they never hold the server's port."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

from fault_procs import (
    alive,
    env,
    listening,
    marks,
    project,
    run_hosts,
    serve,
    wait_until,
    workflow,
)


def test_a_worker_ended_by_sigterm_does_not_end_the_server(tmp_path: Path) -> None:
    folder = project(tmp_path)
    quick = workflow(folder, "slow.json", "Slow", n=2)
    server = serve(folder, "--workers", "1")
    try:
        assert server.ended(server.start(quick)) == "completed"
        workers = server.workers()
        assert workers, "the run started no worker process"
        for pid in workers:
            os.kill(pid, signal.SIGTERM)
        wait_until(lambda: not any(alive(pid) for pid in workers), "the workers to end")
        assert server.ended(server.start(quick)) == "completed"
        assert server.process.poll() is None, "the server exited: " + "".join(server.err)
    finally:
        server.stop()


def test_a_run_asked_for_as_the_run_process_dies_runs_on_the_next_one(tmp_path: Path) -> None:
    folder = project(tmp_path)
    quick = workflow(folder, "slow.json", "Slow", n=2)
    server = serve(folder, "--workers", "1")
    try:
        for _ in range(3):
            assert server.ended(server.start(quick)) == "completed"
            host = run_hosts(server.process.pid)[0]
            os.kill(host, signal.SIGKILL)  # the server has not yet seen it end
            run = server.start(quick)
            assert server.ended(run) == "completed", "".join(server.err)
    finally:
        server.stop()


def test_stop_during_a_slow_load_leaves_the_server_serving(tmp_path: Path) -> None:
    folder = project(tmp_path)
    name = workflow(folder, "hang.json", "Hang")
    quick = workflow(folder, "slow.json", "Slow", n=2)
    server = serve(folder, "--workers", "1")
    try:
        run = server.start(name)
        busy = wait_until(lambda: marks(folder, "load"), "a worker to take a task")
        assert server.call("POST", "/api/runs/current/stop")[0] in (200, 202, 204)
        assert server.ended(run) == "stopped"
        wait_until(lambda: not any(alive(pid) for pid in busy), "the busy worker to be ended")
        assert server.ended(server.start(quick)) == "completed"
        assert server.process.poll() is None, "the server exited: " + "".join(server.err)
    finally:
        server.stop()


def test_kill_9_of_the_server_leaves_no_worker_and_frees_the_port(
    tmp_path: Path, reap: list[int]
) -> None:
    folder = project(tmp_path)
    name = workflow(folder, "hang.json", "Hang")
    server = serve(folder, "--workers", "1")
    reap.append(server.process.pid)
    client = socket.create_connection(("127.0.0.1", server.port), timeout=20)
    client.sendall(b"GET /api/info HTTP/1.1\r\nHost: localhost\r\n\r\n")
    assert client.recv(65536).startswith(b"HTTP/1.1 200")  # a kept-alive connection
    server.start(name)  # workers fork now, with that connection open in the server
    busy = wait_until(lambda: marks(folder, "load"), "a worker to take a task")
    everyone = server.workers()
    reap += everyone
    ours = set(sockets_of(server.process.pid))  # the listening socket, the client's
    held = {pid: ours & set(sockets_of(pid)) for pid in everyone}
    assert not any(held.values()), f"the run host or workers hold the server's sockets: {held}"
    server.process.kill()
    server.process.wait(30)
    with client:
        assert client.recv(65536) == b"", "the client sees the connection close, not a hang"
    wait_until(lambda: not any(alive(pid) for pid in everyone), f"workers {everyone} to die")
    assert set(busy) <= set(everyone)
    wait_until(lambda: not listening(server.port), f"port {server.port} to be free")
    again = serve(folder, port=server.port)
    try:
        assert again.call("GET", "/api/info")[0] == 200
    finally:
        again.stop()


def sockets_of(pid: int) -> list[str]:
    """The sockets process `pid` has open (the listening one, clients' connections)."""
    found = []
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:"):
            found.append(target)
    return found


def run_cli(folder: Path, name: str) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "graphbook", "run", str(folder / "workflows" / name)]
    command += ["--nodes", str(folder / "nodes"), "--workers", "1", "--quiet"]
    return subprocess.Popen(
        command, cwd=folder, env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def test_kill_9_of_graphbook_run_leaves_no_worker(tmp_path: Path, reap: list[int]) -> None:
    folder = project(tmp_path)
    name = workflow(folder, "hang.json", "Hang")
    run = run_cli(folder, name)
    reap.append(run.pid)
    busy = wait_until(lambda: marks(folder, "load"), "a worker to take a task")
    reap += busy
    run.kill()
    run.communicate(timeout=30)
    wait_until(lambda: not any(alive(pid) for pid in busy), f"worker {busy} to die")


def test_ending_graphbook_run_prints_no_traceback_from_its_workers(
    tmp_path: Path, reap: list[int]
) -> None:
    folder = project(tmp_path)
    name = workflow(folder, "hang.json", "Hang")
    run = run_cli(folder, name)
    reap.append(run.pid)
    busy = wait_until(lambda: marks(folder, "load"), "a worker to take a task")
    reap += busy
    run.send_signal(signal.SIGINT)
    _out, err = run.communicate(timeout=60)
    assert run.returncode == 130, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    assert not any(alive(pid) for pid in busy)


def test_shared_memory_left_by_killed_processes_is_swept_by_the_next_pool() -> None:
    from graphbook.engine import shm
    from graphbook.engine.processes import ProcessPool

    gone = subprocess.Popen(["true"])
    gone.wait()
    names = [
        f"{shm.NAME_PREFIX}deadbeef_{gone.pid}_0",
        f"{shm.NAME_PREFIX}deadbeef_{os.getpid()}_0",
    ]
    for name in names:
        Path(shm.SHM_DIR, name).write_bytes(b"left behind")
    try:
        with ProcessPool(1):
            assert not Path(shm.SHM_DIR, names[0]).exists(), "a dead process's segment is swept"
            assert Path(shm.SHM_DIR, names[1]).exists(), "a live process's segment is kept"
    finally:
        shm.unlink(names)
