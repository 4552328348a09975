"""Resources: values built once per run (a model, a number, a function) and shared by steps."""

from __future__ import annotations

from typing import Any, ClassVar

from graphbook.logs import LogLevel, log


class Resource:
    """A node whose `value()` is given to every step parameter wired to it."""

    Parameters: ClassVar[dict[str, Any]] = {"val": {"type": "string"}}
    Category: ClassVar[str] = "Util"

    id: str = ""

    def __init__(self, val: Any = None, **params: Any) -> None:
        self.val = val
        for name, value in params.items():
            setattr(self, name, value)

    def value(self) -> Any:
        return self.val

    def log(self, message: Any, level: LogLevel = "info") -> None:
        log(message, level, node_id=self.id or None)


def choose_device(name: str | None) -> str:
    """What a model resource's `device` parameter names: `auto` (or nothing) picks CUDA when
    present, else CPU; other names are used as given."""
    if name in (None, "", "auto"):
        import torch

        return "cuda" if torch.cuda.is_available() else "cpu"
    return str(name)


class NumberResource(Resource):
    """A number."""

    Parameters: ClassVar[dict[str, Any]] = {"val": {"type": "number", "default": 0}}


class TextResource(Resource):
    """A piece of text."""

    Parameters: ClassVar[dict[str, Any]] = {"val": {"type": "string", "default": ""}}


class FunctionResource(Resource):
    """A Python function, written as source (`def f(data): ...` or a lambda)."""

    Parameters: ClassVar[dict[str, Any]] = {
        "val": {"type": "function", "required": True, "description": "def or lambda"}
    }


class ListResource(Resource):
    """A list."""

    Parameters: ClassVar[dict[str, Any]] = {"val": {"type": "list", "default": []}}

    def value(self) -> list[Any]:
        return list(self.val or [])


class DictResource(Resource):
    """A dict."""

    Parameters: ClassVar[dict[str, Any]] = {"val": {"type": "dict", "default": {}}}

    def value(self) -> dict[str, Any]:
        return dict(self.val or {})
