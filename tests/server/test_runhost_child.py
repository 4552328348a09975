"""The run host's own side (server/runhost/child.py), driven over a real pipe in this process:
what it does with messages that arrive before its run thread has taken their run."""

from __future__ import annotations

import time
from multiprocessing import Pipe
from multiprocessing.connection import Connection
from pathlib import Path

from server_harness import chain, settings_for

from graphbook import protocol as p
from graphbook.events import RunFinished
from graphbook.server.runhost.child import RunHostChild
from graphbook.server.runhost.messages import HostConfig, RunEnded, RunEvent, RunOrder, Stop
from graphbook.workflow import Workflow

WAIT = 20.0


def test_a_stop_that_arrives_before_the_run_thread_takes_the_run_stops_it(tmp_path: Path) -> None:
    """The server sends Stop right after the order (a user's Run then Stop, or the queue's next
    job stopped at once) while the host's run thread is still busy: the run starts stopped
    and ends by itself, where the Stop was dropped before and the server ended the host."""
    server, host = Pipe()
    settings = settings_for(tmp_path)  # the test servers' nodes folder
    config = HostConfig(settings.nodes, settings.roots(), 0, 1 << 20)
    child = RunHostChild(host, config)
    flow = Workflow.from_json(chain(n=100_000, delay=0.01))
    child._handle(RunOrder("run1", p.RunRequest("slow.json"), flow))  # the run thread is not
    child._handle(Stop("run1"))  # started yet: it takes the run only now
    child.runner.start()
    try:
        ended = run_end(server)
    finally:
        child._close()  # stops a run that did not stop
    assert [e.status for e in ended] == ["stopped"]
    assert sum(ended[0].counts.get("src", {}).values()) < 100_000
    assert child.state.controls == {}, "an ended run's control is forgotten"


def run_end(server: Connection) -> list[RunFinished]:
    """The run's end events, read until the host says the run ended (within WAIT)."""
    ended: list[RunFinished] = []
    deadline = time.monotonic() + WAIT
    while server.poll(max(0.0, deadline - time.monotonic())):
        message = server.recv()
        if isinstance(message, RunEvent) and isinstance(message.event, RunFinished):
            ended.append(message.event)
        if isinstance(message, RunEnded):
            return ended
    raise AssertionError(f"the run did not end in {WAIT:.0f} s (the Stop was lost)")
