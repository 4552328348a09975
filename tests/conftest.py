"""Shared fixtures: the engine suite runs with 0 (inline) and 2 worker processes."""

from __future__ import annotations

import pytest


@pytest.fixture(params=[0, 2], ids=["inline", "2workers"])
def workers(request: pytest.FixtureRequest) -> int:
    return int(request.param)
