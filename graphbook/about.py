"""The version Graphbook runs as: what `graphbook --version`, `/api/info` and the websocket's
hello say.

An installed package is the version it was built as (its distribution's metadata). A checkout,
run from its folder or installed editable, is the source's `__version__`, written here once
(`graphbook.__version__` is this; setuptools reads it from this file without importing it; the
metadata of an editable install names the version it had when it was installed, and another
copy of Graphbook installed beside a checkout is not the code that runs).
"""

from __future__ import annotations

import functools
from importlib import metadata
from pathlib import Path

__version__ = "0.1.0"
DISTRIBUTION = "graphbook"


@functools.cache
def version() -> str:
    """The version of the distribution whose files are this very package, else the source's."""
    here = (Path(__file__).parent / "__init__.py").resolve()
    for dist in metadata.distributions(name=DISTRIBUTION):
        located = Path(str(dist.locate_file("graphbook/__init__.py")))
        if located.is_file() and located.resolve() == here:
            return str(dist.version)
    return __version__
