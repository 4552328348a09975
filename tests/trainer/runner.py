"""Running the test scripts as a user would: `python script.py` in a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from graphbook.store import Store

SCRIPTS = Path(__file__).with_name("scripts")
ROOT = Path(__file__).resolve().parents[2]


def run_script(
    script: Path, env: dict[str, str], cwd: Path, args: tuple[str, ...] = (), timeout: int = 120
) -> subprocess.CompletedProcess[str]:
    """`python script args...` with the repository importable and `env` added."""
    return run_python((str(script), *args), env, cwd, timeout)


def run_python(
    args: tuple[str, ...], env: dict[str, str], cwd: Path, timeout: int = 120
) -> subprocess.CompletedProcess[str]:
    path = f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"
    return subprocess.run(
        [sys.executable, *args],
        env={**os.environ, "PYTHONPATH": path, **env},
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def metric_rows(home: Path, run_id: str) -> list[tuple[str, int, dict[str, Any]]]:
    store = Store(home / "graphbook.sqlite")
    return [(m.group, m.steps_completed, m.metrics) for m in store.metrics([run_id])]


def result(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text())
    return data
