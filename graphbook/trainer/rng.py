"""Random number generators: seeding all of them from one run seed, and their states, which a
checkpoint keeps so that a resumed run draws the same numbers an uninterrupted one would."""

from __future__ import annotations

import os
import random
import secrets
from typing import Any

import numpy as np
import torch


def draw_seed() -> int:
    return secrets.randbelow(2**31)


def seed_all(seed: int) -> None:
    """Seed python's `random`, numpy's global generator and torch (CPU and CUDA)."""
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)


def capture() -> dict[str, Any]:
    """The state of every generator `seed_all` seeds."""
    state: dict[str, Any] = {
        "python": random.getstate(),
        "numpy": np.random.get_state(),
        "torch": torch.get_rng_state(),
    }
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def restore(state: dict[str, Any]) -> None:
    random.setstate(state["python"])
    np.random.set_state(state["numpy"])
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def deterministic() -> None:
    """Deterministic algorithms only (Lightning's `deterministic=True`): torch raises on an
    operation that has none; cuDNN does not pick algorithms by timing; cuBLAS gets the
    workspace setting it needs (unless set already)."""
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    torch.use_deterministic_algorithms(True)
    torch.backends.cudnn.benchmark = False
    torch.backends.cudnn.deterministic = True
