"""Random number generators: seeding all of them from one run seed, and their states, which a
checkpoint keeps so that a resumed run draws the same numbers an uninterrupted one would."""

from __future__ import annotations

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
