"""The nodes that ship with Graphbook: routing helpers, JSON-lines I/O, and simple resources."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, ClassVar

from graphbook.resources import (
    DictResource,
    FunctionResource,
    ListResource,
    NumberResource,
    TextResource,
)
from graphbook.steps import Data, GeneratorSourceStep, Step


class Split(Step):
    """Routes each dict to `A` when `split_fn(data)` is true, else to `B`."""

    Parameters: ClassVar[dict[str, Any]] = {
        "split_fn": {
            "type": "function",
            "required": True,
            "description": "def f(data) -> bool, or a lambda",
        }
    }
    Outputs: ClassVar[list[str]] = ["A", "B"]
    Category: ClassVar[str] = "Filtering"
    split_fn: Callable[[Data], Any]

    def route(self, data: Data) -> str:
        return "A" if self.split_fn(data) else "B"


class Copy(Step):
    """Sends each dict to `A` and an independent deep copy of it to `B`."""

    Outputs: ClassVar[list[str]] = ["A", "B"]
    Category: ClassVar[str] = "Util"

    def route(self, data: Data) -> dict[str, Any]:
        return {"A": [data], "B": [copy.deepcopy(data)]}


class LoadJSONL(GeneratorSourceStep):
    """Reads a JSON-lines file, one dict per line, from line `start_from` on."""

    Parameters: ClassVar[dict[str, Any]] = {
        "jsonl_path": {"type": "string", "required": True, "description": "path of the file"},
        "start_from": {"type": "int", "default": 0, "description": "first line to read"},
    }
    Category: ClassVar[str] = "IO"
    jsonl_path: str
    start_from: int = 0

    def load(self) -> Iterator[Data]:
        with Path(self.jsonl_path).open(encoding="utf-8") as lines:
            for number, line in enumerate(lines):
                if number >= self.start_from and line.strip():
                    yield json.loads(line)


class DumpJSONL(Step):
    """Appends every dict it receives to a JSON-lines file and passes it on."""

    Parameters: ClassVar[dict[str, Any]] = {
        "jsonl_path": {"type": "string", "required": True, "description": "path of the file"},
        "overwrite": {
            "type": "boolean",
            "default": True,
            "description": "empty the file when the run starts",
        },
    }
    Category: ClassVar[str] = "IO"
    jsonl_path: str
    overwrite: bool = True
    _file: Any = None

    def on_start(self) -> None:
        path = Path(self.jsonl_path)
        path.parent.mkdir(parents=True, exist_ok=True)
        self._file = path.open("w" if self.overwrite else "a", encoding="utf-8")

    def on_data(self, data: Data) -> None:
        if self._file is None:
            self.on_start()
        self._file.write(json.dumps(data, default=str) + "\n")

    def on_end(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


STEPS: tuple[type[Step], ...] = (Split, Copy, LoadJSONL, DumpJSONL)
RESOURCES = {
    "Number": NumberResource,
    "Text": TextResource,
    "Function": FunctionResource,
    "List": ListResource,
    "Dict": DictResource,
}
