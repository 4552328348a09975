"""Random choices a seed repeats: a sample of the dicts (Sample), a train/val/test split
(RandomSplit)."""

from __future__ import annotations

import hashlib
import random
from typing import Any, ClassVar

from graphbook.lifecycle import Step
from graphbook.nodes.common import (
    Data,
    NodeInputError,
)
from graphbook.nodes.curation import CATEGORY
from graphbook.nodes.curation.fields import field_of, field_text


def fraction(value: Any, what: str) -> float:
    number = float(value)
    if not 0.0 <= number <= 1.0:
        raise NodeInputError(f"{what} is {number}; it is a share of the dicts, from 0 to 1")
    return number


def unit_hash(seed: int, text: str) -> float:
    """A number in [0, 1) fixed by the seed and the text (the same on every machine)."""
    digest = hashlib.sha256(f"{seed}\0{text}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


class Sample(Step):
    """A random sample of the dicts, the same every run with the same `seed` and input order:
    a `fraction` of them (each dict kept with that chance, handed on at once), or, when `count`
    is above 0, exactly `count` of them (reservoir sampling: every dict has the same chance).

    Those not chosen go to `rest`. With `count`, the chosen are handed on only after the last
    dict has come (until then any of them may be replaced), in their input order: the node
    holds up to `count` dicts in memory.

    Adds no fields. Example: count 200 to pick 200 images to label; fraction 0.1 for a tenth.
    """

    Parameters: ClassVar[dict[str, Any]] = {
        "fraction": {
            "type": "float",
            "default": 0.1,
            "description": "the share of dicts to keep, 0 to 1 (used when count is 0)",
        },
        "count": {
            "type": "int",
            "default": 0,
            "description": "keep exactly this many (reservoir sampling); 0 uses fraction",
        },
        "seed": {"type": "int", "default": 0, "description": "seed of the random choice"},
    }
    Outputs: ClassVar[list[str]] = ["out", "rest"]
    Category: ClassVar[str] = CATEGORY
    fraction: float = 0.1
    count: int = 0
    seed: int = 0

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.fraction = fraction(self.fraction, "fraction")
        if int(self.count) < 0:
            raise NodeInputError(f"count is {self.count}; it must be 0 (use fraction) or more")
        self.on_start()

    def on_start(self) -> None:
        self.rng = random.Random(self.seed)
        self.seen = 0
        self.reservoir: list[tuple[int, Data]] = []

    def route(self, data: Data) -> str | dict[str, list[Data]] | None:
        if self.count <= 0:
            return "out" if self.rng.random() < self.fraction else "rest"
        index, self.seen = self.seen, self.seen + 1
        if len(self.reservoir) < self.count:
            self.reservoir.append((index, data))
            return None
        slot = self.rng.randrange(index + 1)
        if slot >= self.count:
            return "rest"
        replaced = self.reservoir[slot][1]
        self.reservoir[slot] = (index, data)
        return {"rest": [replaced]}

    def flush(self) -> dict[str, list[Data]] | None:
        chosen = [data for _, data in sorted(self.reservoir, key=lambda pair: pair[0])]
        self.reservoir = []
        return {"out": chosen} if chosen else None


class RandomSplit(Step):
    """Splits the dicts at random into `train`, `val` and `test`: `val_fraction` of them to
    `val`, `test_fraction` to `test`, the rest to `train`.

    Repeatable: with `by` empty, the choice follows the input order and the `seed`, and the
    shares are exact: after any n dicts, `val` holds n x val_fraction of them give or take one
    (which ones is random); with `by` naming a field (an id, a file name), each dict's side is
    a hash of that field's value and the seed, so a dict lands on the same side however the
    data is ordered or grows (and raising a fraction only moves dicts into that side), and
    the shares are right on average. Hashing an image's full path ties the split to where the
    folder is: hash a field that names the image wherever it lies.

    Adds no fields. Example: val_fraction 0.1, test_fraction 0.1, by `image`.
    """

    Parameters: ClassVar[dict[str, Any]] = {
        "val_fraction": {"type": "float", "default": 0.2, "description": "share to val, 0 to 1"},
        "test_fraction": {"type": "float", "default": 0.0, "description": "share to test"},
        "seed": {"type": "int", "default": 0, "description": "seed of the split"},
        "by": {
            "type": "string",
            "default": "",
            "description": "a field whose value decides the side (stable when the order "
            "changes); empty: by input order",
        },
    }
    Outputs: ClassVar[list[str]] = ["train", "val", "test"]
    Category: ClassVar[str] = CATEGORY
    val_fraction: float = 0.2
    test_fraction: float = 0.0
    seed: int = 0
    by: str = ""

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.val_fraction = fraction(self.val_fraction, "val_fraction")
        self.test_fraction = fraction(self.test_fraction, "test_fraction")
        if self.val_fraction + self.test_fraction > 1.0:
            raise NodeInputError(
                f"val_fraction {self.val_fraction} and test_fraction {self.test_fraction} add "
                "up to more than 1; lower them"
            )
        self.on_start()

    def on_start(self) -> None:
        self.rng = random.Random(self.seed)
        self.dealt = {"train": 0, "val": 0, "test": 0}

    def route(self, data: Data) -> str:
        if self.by:
            draw = unit_hash(self.seed, field_text(field_of(data, self.by, "by")))
            val, test = self.val_fraction, self.test_fraction
        else:
            draw, (val, test) = self.rng.random(), self._behind()
        side = "val" if draw < val else "test" if draw < val + test else "train"
        self.dealt[side] += 1
        return side

    def _behind(self) -> tuple[float, float]:
        """How far val and test are behind their shares once this dict is dealt, as the
        chances to deal it to them: a side due a dict gets it for sure, one ahead gets none."""
        seen = sum(self.dealt.values()) + 1
        val = min(1.0, max(0.0, seen * self.val_fraction - self.dealt["val"]))
        test = min(1.0 - val, max(0.0, seen * self.test_fraction - self.dealt["test"]))
        return val, test
