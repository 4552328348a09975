"""What a run is called by default: the same command run again has the same name, so it
resumes the same run."""

from __future__ import annotations

import sys
from pathlib import Path


def qualified_name(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def main_script() -> str | None:
    """The running script's resolved path (None in an interactive session)."""
    script = getattr(sys.modules.get("__main__"), "__file__", None)
    return str(Path(script).resolve()) if script else None
