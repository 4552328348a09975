"""Code shipped to a Ray cluster: the nodes folders (and any folder the user adds) travel with
the pool's actors through Ray's runtime environment (`py_modules`), so a helper module beside a
node file imports on every node of the cluster as it does on the driver.

Ray uploads each folder once (by its content's hash) to the cluster, and each node unpacks it
before an actor that needs it starts there; the actor then puts the folder itself on its
`sys.path` (`import helper` for `nodes/helper.py`), and its parent stays there too
(`import nodes.helper`). Packages installed with pip are not shipped: they must be installed on
every node (docs/scale.md).
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from graphbook.errors import GraphbookError

EXCLUDES = ["__pycache__", "*.pyc", ".git", ".ipynb_checkpoints"]
"""What is never uploaded from a shipped folder."""
_QUIET = logging.getLogger(__name__)


def shippable(paths: Iterable[str | os.PathLike[str]]) -> tuple[str, ...]:
    """The folders to ship, as absolute paths, each once; an error names one that is not a
    folder and says what can be shipped."""
    folders: dict[str, None] = {}
    for path in paths:
        folder = Path(path).expanduser().resolve()
        if not folder.is_dir():
            raise GraphbookError(
                f"cannot ship {str(path)!r} to the Ray cluster: it is not a folder "
                "(ship a folder of Python modules; install packages on every node with pip)"
            )
        folders.setdefault(str(folder), None)
    return tuple(folders)


def job_env(folders: Sequence[str]) -> dict[str, Any] | None:
    """The runtime environment a Ray Client driver (`ray://`) gives `ray.init`, which uploads
    `folders` from the client: through Ray Client, an upload after `ray.init` never ends (the
    client server does not implement it), so the actors' environments name what it sent."""
    if not folders:
        return None
    return {"py_modules": list(folders), "excludes": list(EXCLUDES)}


def runtime_env(folders: Sequence[str], sent: bool = False) -> dict[str, Any] | None:
    """Ray's runtime environment that ships `folders` with an actor (None: nothing to ship).
    Ray takes local folders only in `ray.init`, for the whole job, so each is uploaded here
    (once: Ray keeps packages by their content's hash) and the actor's environment names it
    by its URI; `sent`: `ray.init` has sent them (`job_env`), only their URIs are made.
    An upload that fails is an error that names the folder."""
    if not folders:
        return None
    if sent:
        from ray._private.runtime_env.packaging import get_uri_for_directory

        return {"py_modules": [get_uri_for_directory(f, True, list(EXCLUDES)) for f in folders]}
    from ray._private.runtime_env.py_modules import upload_py_modules_if_needed

    uris: list[str] = []
    for folder in folders:
        env = {"py_modules": [folder], "excludes": list(EXCLUDES)}
        try:
            uploaded = upload_py_modules_if_needed(env, include_gitignore=True, logger=_QUIET)
        except Exception as exc:
            raise GraphbookError(
                f"could not send the folder {folder!r} to the Ray cluster: {exc} "
                "(Ray takes at most 512 MiB per folder: ship code, read data from storage)"
            ) from exc
        uris += uploaded["py_modules"]
    return {"py_modules": uris}


def importable(folders: Sequence[str]) -> None:
    """On an actor: put each shipped folder (unpacked by Ray where it chose, its parent on
    `sys.path`) on `sys.path` itself, so its modules import by their own names."""
    for folder in folders:
        name = os.path.basename(folder)
        for entry in list(sys.path):
            unpacked = os.path.join(entry or os.curdir, name)
            if entry and os.path.isdir(unpacked) and unpacked not in sys.path:
                sys.path.insert(0, unpacked)
                break


__all__ = ["importable", "job_env", "runtime_env", "shippable"]
