"""Graphbook 0.13's plugin API (`graphbook.plugins`, `graphbook.core.plugins`): a plugin
package's `__init__.py` calls `export(name, cls)` for its nodes and `web(path)` for its browser
bundle.

`export` records the node (graphbook/registry.py's EXPORTED); the registry registers it under
the exported name when it imports the plugin (a 0.13 workflow's `data.module`, or
`Registry.load_module`). `web` is recorded and says, as a warning, that browser plugins are not
loaded here: the editor shows the plugin's nodes with its own widgets.
"""

from __future__ import annotations

import inspect
import logging

from graphbook.lifecycle import Step
from graphbook.registry import EXPORTED, Exported
from graphbook.resources import Resource

__all__ = ["export", "web"]
logger = logging.getLogger(__name__)
WEB: dict[str, str] = {}
"""The bundle each plugin module named with web(), which is not loaded."""


def export(name: str, cls: type) -> None:
    """Make `cls` (a Step or Resource class) a node named `name` (0.13's plugin API)."""
    if not (isinstance(cls, type) and issubclass(cls, Step | Resource)):
        raise ValueError("Only Step and Resource classes can be exported")
    EXPORTED.append(Exported(str(name), cls, _caller_module()))


def web(location: str) -> None:
    """0.13's browser bundle of a plugin: recorded, not loaded, and said so."""
    module = _caller_module()
    WEB[module] = str(location)
    logger.warning(
        "%s: web(%r) is not loaded: Graphbook 0.13 browser plugins (their panels and widgets) "
        "do not run in this editor; the plugin's exported nodes load and show with the "
        "editor's own widgets",
        module,
        str(location),
    )


def _caller_module() -> str:
    frame = inspect.currentframe()
    caller = frame.f_back.f_back if frame is not None and frame.f_back is not None else None
    name = caller.f_globals.get("__name__") if caller is not None else None
    return str(name or "__main__")
