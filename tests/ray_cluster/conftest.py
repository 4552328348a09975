"""One two-node Ray cluster for the whole session (tests/ray_cluster/cluster.py); node 2 cannot
see the session's temp folder, where every test writes its project."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from cluster_procs import Cluster, start


@pytest.fixture(scope="session")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    pytest.importorskip("ray", reason="Ray is not installed: pip install 'graphbook[ray]'")
    running = start(tmp_path_factory.getbasetemp())
    try:
        yield running
    finally:
        running.stop()
