"""Server tests: each starts a real server on a loopback port (see server_harness)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from server_harness import Scenario, Serve, serve


@pytest.fixture
def serving(tmp_path: Path) -> Serve:
    """`serving(scenario, **settings)`: run an async scenario against a fresh server; call it
    twice in a test to restart the server on the same folders."""

    def start(scenario: Scenario, headers: dict[str, str] | None = None, **overrides: Any) -> None:
        serve(tmp_path, scenario, headers, **overrides)

    return start
