"""Every trainer test gets its own data directory and a clean environment."""

from __future__ import annotations

from pathlib import Path

import pytest

CLEARED = (
    "GRAPHBOOK_TRAIN_RUN_NAME",
    "GRAPHBOOK_TRAIN_START_OVER",
    "GRAPHBOOK_TRAIN_HPARAMS",
    "GRAPHBOOK_TRAIN_CONFIG_DATA",
    "GRAPHBOOK_TRAIN_MAX_LENGTH",
    "GRAPHBOOK_BATCH_RUN_NAME",
    "GRAPHBOOK_BATCH_START_OVER",
    "WORLD_SIZE",
    "RANK",
    "LOCAL_RANK",
)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """GRAPHBOOK_HOME for this test (the store and checkpoints live under it)."""
    folder = tmp_path / "graphbook-home"
    monkeypatch.setenv("GRAPHBOOK_HOME", str(folder))
    for name in CLEARED:
        monkeypatch.delenv(name, raising=False)
    return folder
