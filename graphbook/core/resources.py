"""`graphbook.core.resources`, as Graphbook 0.13 node files import it."""

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
