"""The chaos tests share the fault tests' process helpers and the batch tests' job
(tests.batch_process.outcome, importable from the repository root: pytest's `pythonpath`)."""

from __future__ import annotations

import os
import random
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
if str(TESTS / "faults") not in sys.path:
    sys.path.insert(0, str(TESTS / "faults"))

ROUNDS_ENV = "GRAPHBOOK_CHAOS_ROUNDS"
SEED_ENV = "GRAPHBOOK_CHAOS_SEED"


@pytest.fixture
def rounds() -> int:
    """How many kills each chaos test makes: small in CI, raise it to soak."""
    return int(os.environ.get(ROUNDS_ENV, "3"))


@pytest.fixture
def rng(request: pytest.FixtureRequest) -> random.Random:
    """A seeded random stream; the seed is in the test's report, to replay a failure with
    GRAPHBOOK_CHAOS_SEED=SEED."""
    seed = int(os.environ.get(SEED_ENV, str(random.randrange(2**32))))
    request.node.user_properties.append(("chaos seed", seed))
    print(f"chaos seed: {seed} (replay with {SEED_ENV}={seed})")
    return random.Random(seed)


@pytest.fixture
def reap() -> Iterator[list[int]]:
    """Append process ids; those still alive when the test ends are killed."""
    from fault_procs import reaping

    with reaping() as pids:
        yield pids
