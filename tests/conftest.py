"""Shared fixtures: the engine suite runs with 0 (inline) and 2 worker processes, and on Ray;
`home` gives a test its own data directory (the run store) and an environment without the
settings a training or batch run reads.

Ray starts once per test session (local, 2 CPUs) and its actors are shared by every test that
runs on it; a test that needs Ray is skipped when Ray is not installed."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

# A shell without job control starts background jobs with SIGINT ignored, and every child
# inherits that; the tests that press Ctrl-C (in-process and in `graphbook run`) need it heard.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(params=[0, 2], ids=["inline", "2workers"])
def workers(request: pytest.FixtureRequest) -> int:
    return int(request.param)


@pytest.fixture(scope="session")
def ray_address() -> Iterator[str]:
    """A local Ray for the whole session; its address lets subprocesses join it."""
    ray = pytest.importorskip("ray", reason="Ray is not installed: pip install 'graphbook[ray]'")
    from graphbook.engine.ray.connection import connect

    started = connect(num_cpus=2)
    try:
        yield str(ray.get_runtime_context().gcs_address)
    finally:
        if started:
            ray.shutdown()


@pytest.fixture(scope="session")
def ray_pool(ray_address: str) -> Iterator[Any]:
    """Two Ray actors per kind, kept for the session (runs open lanes on it, never close it)."""
    from graphbook.engine.ray.pool import RayPool

    pool = RayPool(ray_address, workers=2)
    try:
        yield pool
    finally:
        pool.close()


@pytest.fixture(params=["inline", "2workers", "ray"])
def backend(request: pytest.FixtureRequest) -> dict[str, Any]:
    """Arguments for `run_workflow`: inline, 2 worker processes, or the session's Ray pool."""
    if request.param == "ray":
        return {"pool": request.getfixturevalue("ray_pool")}
    return {"workers": 0 if request.param == "inline" else 2}


RUN_SETTINGS = ("GRAPHBOOK_TRAIN_", "GRAPHBOOK_BATCH_", "TEST_BATCH_")
"""Prefixes of what the Trainer, the batch API and the batch tests' jobs read from the
environment (run names, start-over, hparams, faults to inject, ...)."""
TORCHRUN_SETTINGS = ("WORLD_SIZE", "RANK", "LOCAL_RANK")


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """GRAPHBOOK_HOME for this test (the store, checkpoints and uploads live under it), in an
    environment with no run settings and no torchrun ranks."""
    folder = tmp_path / "graphbook-home"
    monkeypatch.setenv("GRAPHBOOK_HOME", str(folder))
    for name in list(os.environ):
        if name.startswith(RUN_SETTINGS) or name in TORCHRUN_SETTINGS:
            monkeypatch.delenv(name)
    return folder
