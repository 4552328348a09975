"""Graphbook 0.13's `Note` (`graphbook.Note`, `graphbook.core.note`), deprecated there since 0.12.

A Note held a dict of items under `.items`; steps then received Notes instead of dicts. Here, as
in 0.13's later releases, the data unit is the dict itself: a Note still works as a value that
sources yield and steps receive (the engine hands on any value), and making one warns, as 0.13
did.
"""

from __future__ import annotations

import json
import warnings
from typing import Any

__all__ = ["Note"]


class Note:
    """Deprecated in Graphbook 0.13: a dict of items passed between steps. Use a dict."""

    def __init__(self, items: dict[str, Any] | None = None) -> None:
        warnings.warn(
            "Note is deprecated (as in Graphbook 0.13); pass plain dicts between steps",
            DeprecationWarning,
            stacklevel=2,
        )
        self.items: dict[str, Any] = {} if items is None else items

    def __setitem__(self, key: str, value: Any) -> None:
        self.items[key] = value

    def __getitem__(self, key: str) -> Any:
        """The item under `key`, or None if there is none (as 0.13's Note returned it)."""
        return self.items.get(key)

    def __delitem__(self, key: str) -> None:
        del self.items[key]

    def __contains__(self, key: object) -> bool:
        return key in self.items

    def __repr__(self) -> str:
        return f"Note({self.items!r})"

    def __str__(self) -> str:
        return json.dumps(self.items, indent=2, default=str)
