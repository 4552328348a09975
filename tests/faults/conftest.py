"""Processes a fault test starts are ended when it ends, even when it fails."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fault_procs import reaping


@pytest.fixture
def reap() -> Iterator[list[int]]:
    """Append process ids; those still alive when the test ends are killed."""
    with reaping() as pids:
        yield pids
