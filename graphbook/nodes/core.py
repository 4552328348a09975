"""The nodes that ship with Graphbook: routing helpers, JSON-lines I/O, and simple resources."""

from __future__ import annotations

import copy
import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, ClassVar

from graphbook.lifecycle import Data, GeneratorSourceStep, Step
from graphbook.nodes.common import commit, temporary_beside
from graphbook.resources import (
    DictResource,
    FunctionResource,
    ListResource,
    NumberResource,
    Resource,
    TextResource,
)


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
        "jsonl_path": {
            "type": "string",
            "required": True,
            "path": True,
            "description": "path of the file",
        },
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
    """Writes every dict it receives as one line of a JSON-lines file and passes it on.

    The file is written whole or not at all: its lines go to a hidden file beside it, which
    takes its place when the run completes; a run that fails, is stopped or is killed leaves
    the file as it was. `overwrite` (on) replaces the file; off, the run's lines are added
    after those the file had."""

    Parameters: ClassVar[dict[str, Any]] = {
        "jsonl_path": {
            "type": "string",
            "required": True,
            "path": True,
            "description": "path of the file",
        },
        "overwrite": {
            "type": "boolean",
            "default": True,
            "description": "replace the file (off: add the run's lines after its own)",
        },
    }
    Category: ClassVar[str] = "IO"
    Writes: ClassVar[tuple[str, ...]] = ("jsonl_path",)
    jsonl_path: str
    overwrite: bool = True
    _file: Any = None
    _temporary: Path | None = None

    def on_start(self) -> None:
        path = Path(self.jsonl_path)
        self._temporary = temporary = temporary_beside(path)
        self._file = temporary.open("w", encoding="utf-8")
        if not self.overwrite and path.is_file():
            with path.open(encoding="utf-8") as old:
                shutil.copyfileobj(old, self._file)

    def on_data(self, data: Data) -> None:
        if self._file is None:
            self.on_start()
        self._file.write(json.dumps(data, default=str) + "\n")

    def on_end(self) -> None:
        file, temporary, self._file, self._temporary = self._file, self._temporary, None, None
        if file is None or temporary is None:
            return
        try:
            file.close()
            if self.ended_as == "done":
                commit(temporary, Path(self.jsonl_path), mark=False)
            else:
                self.log(f"the run did not complete: {self.jsonl_path} is left as it was")
        finally:
            temporary.unlink(missing_ok=True)


class TrainedModel(Resource):
    """A model trained with the Trainer API (docs/trainer.md), loaded from the run store: give
    one of `run` (a training run's id or name: its best checkpoint), `checkpoint` (an id such
    as `3f2a9c81d0e4-step-40`) or `model` (a registered model version). The trial class is
    imported from where it was trained; its first wrapped model is the value."""

    Parameters: ClassVar[dict[str, Any]] = {
        "run": {"type": "string", "default": "", "description": "training run id or name"},
        "checkpoint": {"type": "string", "default": "", "description": "checkpoint id"},
        "model": {"type": "string", "default": "", "description": "registered model name"},
        "version": {"type": "int", "default": -1, "description": "model version (-1: latest)"},
        "device": {"type": "string", "default": "auto", "description": "cpu, cuda ... or auto"},
    }
    Category: ClassVar[str] = "Models"
    run: str = ""
    checkpoint: str = ""
    model: str = ""
    version: int = -1

    def value(self) -> Any:
        from graphbook.trainer.context import unwrap
        from graphbook.trainer.load import load_checkpoint_trial
        from graphbook.trainer.trial import PyTorchTrial

        trial: PyTorchTrial = load_checkpoint_trial(
            run=self.run or None,
            checkpoint=self.checkpoint or None,
            model=self.model or None,
            version=int(self.version),
        )
        if not trial.context.models:
            raise ValueError(f"{type(trial).__name__} wraps no model to use")
        return unwrap(trial.context.models[0]).eval()


STEPS: tuple[type[Step], ...] = (Split, Copy, LoadJSONL, DumpJSONL)
RESOURCES = {
    "Number": NumberResource,
    "Text": TextResource,
    "Function": FunctionResource,
    "List": ListResource,
    "Dict": DictResource,
    "TrainedModel": TrainedModel,
}
