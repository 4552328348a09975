"""Parameter values that are paths, made absolute against a folder.

A node declares a parameter as a file or folder (`@param(..., path=True)`, or `"path": True` in
its `Parameters`). On one machine a relative value means the current folder of the process that
runs the node. A run on a Ray cluster ships its work to other machines, where that folder may not
exist: there, every such value is made absolute against the driver's folder before the run
leaves it, so the actors that read or write it are given the path the driver means.

Left as they are: empty values, absolute paths, and URIs (`s3://bucket/x`, `file:///x`), which
mean the same thing everywhere. `~` is the driver's home folder.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

from graphbook.params import ParamSpec

URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
"""A value with a scheme (`s3://`, `gs://`, `hf://`, `file://`): not a local path."""


def absolute(value: str, folder: str) -> str:
    """`value` as an absolute path against `folder`, unless it is empty, a URI or absolute."""
    if not value or URI.match(value):
        return value
    expanded = os.path.expanduser(value)
    if os.path.isabs(expanded):
        return expanded
    return os.path.normpath(os.path.join(folder, expanded))


def absolute_paths(
    specs: Mapping[str, ParamSpec], values: Mapping[str, Any], folder: str
) -> dict[str, Any]:
    """`values` with each parameter declared as a path made absolute against `folder` (a list
    of paths item by item); every other value as it is."""
    resolved = dict(values)
    for name, value in values.items():
        spec = specs.get(name)
        if spec is None or not spec.path:
            continue
        if isinstance(value, str):
            resolved[name] = absolute(value, folder)
        elif isinstance(value, list):
            resolved[name] = [absolute(v, folder) if isinstance(v, str) else v for v in value]
    return resolved


__all__ = ["absolute", "absolute_paths"]
