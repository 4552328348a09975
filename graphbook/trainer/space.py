"""Hyperparameter search spaces (Determined's `hyperparameters:` shape) and the trials a grid or
random searcher draws from them.

    learning_rate: 0.1                                   a constant (or {type: const, val: 0.1})
    batch: {type: categorical, vals: [16, 32, 64]}
    layers: {type: int, minval: 1, maxval: 4, count: 4}  count: grid points (grid only)
    dropout: {type: double, minval: 0.0, maxval: 0.5, count: 3}
    lr: {type: log, minval: -4, maxval: -1, base: 10, count: 4}   10^-4 ... 10^-1
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from graphbook.trainer.errors import TrainerError

KINDS = ("const", "categorical", "int", "double", "log")


@dataclass(frozen=True)
class Param:
    name: str
    kind: str
    values: tuple[Any, ...] = ()
    low: float = 0.0
    high: float = 0.0
    base: float = 10.0
    count: int | None = None

    def grid(self) -> list[Any]:
        if self.kind in ("const", "categorical"):
            return list(self.values)
        if self.count is None:
            raise TrainerError(
                f"hyperparameter {self.name!r} ({self.kind} range) needs `count` for a grid "
                "search: how many evenly spaced values to try"
            )
        points = [
            self.low + (self.high - self.low) * i / max(1, self.count - 1)
            for i in range(self.count)
        ]
        if self.count == 1:
            points = [self.low]
        if self.kind == "int":
            return list(dict.fromkeys(round(p) for p in points))
        if self.kind == "log":
            return [self.base**p for p in points]
        return points

    def sample(self, rng: random.Random) -> Any:
        if self.kind in ("const", "categorical"):
            return rng.choice(self.values)
        if self.kind == "int":
            return rng.randint(int(self.low), int(self.high))
        if self.kind == "log":
            return self.base ** rng.uniform(self.low, self.high)
        return rng.uniform(self.low, self.high)


def parse_space(hyperparameters: Mapping[str, Any]) -> list[Param]:
    if not isinstance(hyperparameters, Mapping):
        raise TrainerError(f"hyperparameters must be a mapping of names, got {hyperparameters!r}")
    return [_param(str(name), spec) for name, spec in hyperparameters.items()]


def _param(name: str, spec: Any) -> Param:
    if not isinstance(spec, Mapping) or "type" not in spec:
        return Param(name, "const", (spec,))
    kind = spec["type"]
    if kind not in KINDS:
        raise TrainerError(
            f"hyperparameter {name!r}: type must be one of {', '.join(KINDS)}, got {kind!r}"
        )
    if kind == "const":
        return Param(name, kind, (_need(name, spec, "val"),))
    if kind == "categorical":
        values = _need(name, spec, "vals")
        if not isinstance(values, list) or not values:
            raise TrainerError(f"hyperparameter {name!r}: vals must be a non-empty list")
        return Param(name, kind, tuple(values))
    low, high = float(_need(name, spec, "minval")), float(_need(name, spec, "maxval"))
    if not (math.isfinite(low) and math.isfinite(high)) or low > high:
        raise TrainerError(f"hyperparameter {name!r}: need minval <= maxval, got {low}, {high}")
    count = spec.get("count")
    if count is not None and (not isinstance(count, int) or count < 1):
        raise TrainerError(f"hyperparameter {name!r}: count must be a positive whole number")
    return Param(name, kind, (), low, high, float(spec.get("base", 10.0)), count)


def _need(name: str, spec: Mapping[str, Any], key: str) -> Any:
    if key not in spec:
        raise TrainerError(f"hyperparameter {name!r} of type {spec['type']} needs {key!r}")
    return spec[key]


def grid_trials(space: list[Param]) -> list[dict[str, Any]]:
    """Every combination of the parameters' grid values, in a stable order."""
    names = [p.name for p in space]
    return [
        dict(zip(names, combo, strict=True))
        for combo in itertools.product(*(p.grid() for p in space))
    ]


def random_trials(space: list[Param], count: int, seed: int = 0) -> list[dict[str, Any]]:
    """`count` draws (the same ones for the same seed, so a search resumes)."""
    if count < 1:
        raise TrainerError(f"a random search needs max_trials >= 1, got {count}")
    rng = random.Random(seed)
    return [{p.name: p.sample(rng) for p in space} for _ in range(count)]
