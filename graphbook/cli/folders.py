"""Node folders for the commands that load nodes: the ones given, else `custom_nodes` nearby;
loading them into a registry, a file that fails to import shown as a warning."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.text import Text

from graphbook.engine.executor import load_nodes
from graphbook.nodes import library_registry
from graphbook.registry import Registry
from graphbook.workflow import Workflow

if TYPE_CHECKING:
    pass


NODES_FOLDER = "custom_nodes"


def node_folders(given: Iterable[Path] | None, workflow: Path | None = None) -> list[Path]:
    """The folders given, or else every existing `custom_nodes` in the current folder, the
    workflow file's folder and that folder's parent (each once)."""
    if given:
        return list(given)
    places = [Path.cwd()]
    if workflow is not None:
        here = workflow.resolve().parent
        places += [here, here.parent]
    folders: dict[Path, Path] = {}
    for place in places:
        folder = place / NODES_FOLDER
        if folder.is_dir():
            folders.setdefault(folder.resolve(), folder)
    return list(folders.values())


def load_registry(
    folders: Iterable[Path], err: Console, verbose: bool, workflow: Workflow | None = None
) -> Registry:
    """Built-in nodes plus every folder's (or only the files defining the kinds `workflow`
    runs, see `load_nodes`); a file that fails to import is a warning."""
    registry = library_registry()
    if workflow is None:
        for folder in folders:
            registry.load_folder(folder)
    else:
        load_nodes(workflow, folders, registry)
    for failure in registry.failures.values():
        err.print(
            Text(f"warning: could not load node file {failure.path}: {failure.error}", "yellow")
        )
        if verbose:
            err.print(Text(failure.traceback.rstrip(), style="yellow"))
    return registry
