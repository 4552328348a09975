"""Plain data: a value as JSON's kinds (dicts with string keys, lists, numbers, text, booleans,
null). The one walk every boundary makes a value JSON-safe with; each boundary names how it
converts what is not plain already, and what a non-finite number becomes:

- protocol.to_json: messages and events (dataclasses as dicts, NaN and infinities as text,
  anything else to its `leaf`, the terminal's being the engine's preview);
- plain_metric: a metric's value (tensors and numpy values as numbers and lists; NaN stays a
  number, which the store's JSON keeps);
- nodes.common.plain_value: a table cell (image records as their path, paths as text, NaN as
  null).

Not this walk, because their job is another: engine/preview.py's PreviewWalk (a bounded picture
of a value, tensors summarised, text cut), server/gallery.py's plain_fields (which fields a
tile shows) and text.py (strings every encoder takes).

torch and numpy are never imported here: a value is a tensor or an array only where its module
is loaded already.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Mapping
from typing import Any

Convert = Callable[[Any], Any]
"""A value's plain stand-in, walked in turn; the value itself where the convert has none."""


def _same(value: Any) -> Any:
    return value


def plain(value: Any, convert: Convert = _same, nonfinite: Convert = _same) -> Any:
    """`value` walked to the end: mappings as dicts with string keys, lists and tuples as
    lists, NaN and infinities given to `nonfinite`; each value that is not a list or of a plain
    type (a subclass is not) is `convert`ed first, and what comes back walked in turn; anything
    left is returned as it is."""
    kind = type(value)
    if value is None or kind is bool or kind is int or kind is str:
        return value
    if kind is float:
        return value if math.isfinite(value) else nonfinite(value)
    if kind is list:
        return [plain(v, convert, nonfinite) for v in value]
    if isinstance(value, bool | int | str):
        return value
    converted = convert(value)
    if converted is not value:
        return plain(converted, convert, nonfinite)
    if isinstance(value, float):
        return value if math.isfinite(value) else nonfinite(value)
    if isinstance(value, Mapping):
        return {str(k): plain(v, convert, nonfinite) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v, convert, nonfinite) for v in value]
    return value


def plain_metric(value: Any) -> Any:
    """A metric's value as JSON can hold it: a one-element tensor as its number, other tensors
    and numpy arrays and scalars as lists and numbers; NaN kept."""
    return plain(value, numbers_of)


def numbers_of(value: Any) -> Any:
    """A tensor's or numpy value's numbers (a one-element tensor's as one number); anything
    else as it is."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(value, torch.Tensor):
        value = value.detach().cpu()
        return value.item() if value.numel() == 1 else value.tolist()
    numpy = sys.modules.get("numpy")
    if numpy is not None and isinstance(value, numpy.ndarray | numpy.generic):
        return value.tolist()
    return value
