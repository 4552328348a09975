"""Graphbook 0.13's `graphbook.core.resources`: the resources of graphbook/resources.py."""

from graphbook.resources import (
    DictResource,
    FunctionResource,
    ListResource,
    NumberResource,
    Resource,
    TextResource,
)

__all__ = [
    "DictResource",
    "FunctionResource",
    "ListResource",
    "NumberResource",
    "Resource",
    "TextResource",
]
