"""Helpers Graphbook 0.13 node files use (`from graphbook import utils`, `graphbook.core.utils`).

`utils.image(...)` marks an image for the editor to show; the others are 0.13's small helpers
for data and logs. Importing this module imports neither PIL nor torch.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from graphbook.params import compile_function

__all__ = [
    "ExecutionContext",
    "convert_dict_values_to_list",
    "image",
    "is_batchable",
    "transform_function_string",
    "transform_json_log",
]


def image(path_or_pil: Any) -> dict[str, Any]:
    """`{"type": "image", "value": ...}`: an image file's path or a PIL image, which the editor
    shows in the node's outputs (a path when it lies under a `--media` folder)."""
    if not (isinstance(path_or_pil, str) or _is_pil(path_or_pil)):
        raise TypeError(
            f"utils.image takes a path (str) or a PIL image, not {type(path_or_pil).__name__}"
        )
    return {"type": "image", "value": path_or_pil}


def is_batchable(obj: Any) -> bool:
    """True for what a batch step splits into items: a list or a torch tensor."""
    return isinstance(obj, list) or (_module_of(obj) == "torch" and hasattr(obj, "shape"))


def transform_function_string(func_str: str | Callable[..., Any]) -> Callable[..., Any]:
    """The function a `def ...` source string defines. 0.13's Function resource handed nodes
    the source, which they compiled with this; ours hands them the compiled function, which is
    returned as it is, so node files written either way work."""
    if callable(func_str):
        return func_str
    if not isinstance(func_str, str):
        raise TypeError(
            f"transform_function_string takes a function's source (a `def ...` string) or a "
            f"function, not {type(func_str).__name__}"
        )
    if not func_str.strip().startswith("def"):
        raise ValueError("Function string must start with def")
    return compile_function(func_str)


def convert_dict_values_to_list(d: dict[Any, Any]) -> None:
    """Wrap every value of `d` that is not a list into a one-item list, in place."""
    for key, value in d.items():
        if not isinstance(value, list):
            d[key] = [value]


def transform_json_log(log: Any) -> Any:
    """`log` made JSON-safe as 0.13 logged it: bytes, tensors and images as short texts."""
    if isinstance(log, dict):
        return {k: transform_json_log(v) for k, v in log.items()}
    if isinstance(log, list | tuple | set):
        return [transform_json_log(v) for v in log]
    if isinstance(log, bytes):
        return f"(bytes of length {len(log)})"
    if _module_of(log) == "torch" and hasattr(log, "shape"):
        return f"(Tensor of shape {log.shape})"
    if _is_pil(log):
        return f"(PIL Image of size {log.size})"
    if isinstance(log, float | int | str | bool) or log is None:
        return log
    return str(log)


class ExecutionContext:
    """Per-thread key/values (0.13 kept the running node's id and name here)."""

    _storage = threading.local()

    @classmethod
    def get_context(cls) -> dict[str, Any]:
        if not hasattr(cls._storage, "context"):
            cls._storage.context = {}
        context: dict[str, Any] = cls._storage.context
        return context

    @classmethod
    def update(cls, **kwargs: Any) -> None:
        cls.get_context().update(kwargs)

    @classmethod
    def get(cls, key: str, default: Any = None) -> Any:
        return cls.get_context().get(key, default)


def _module_of(obj: Any) -> str:
    return type(obj).__module__.split(".")[0]


def _is_pil(obj: Any) -> bool:
    return _module_of(obj) == "PIL" and hasattr(obj, "size")
