"""`graphbook nodes --docs DIR`: a Markdown page per node pack, written from the node specs (so
the library's pages in docs/nodes/ cannot drift from the code: a test regenerates them)."""

from __future__ import annotations

import importlib
import inspect
import json
from collections.abc import Iterable
from pathlib import Path

from graphbook.params import ParamSpec
from graphbook.registry import Registry
from graphbook.spec import NodeSpec

KIND_WORDS = {
    "step": "step",
    "source": "source",
    "batch": "batch step",
    "prompt": "prompt step",
    "resource": "resource",
}


def write_pack_docs(registry: Registry, folder: Path, kinds: Iterable[str]) -> list[Path]:
    """A page per pack whose kind is in `kinds`, and an index page; returns the files written."""
    wanted = set(kinds)
    packs: dict[str, list[NodeSpec]] = {}
    for spec in registry:
        if spec.pack_kind in wanted:
            packs.setdefault(spec.pack or "custom", []).append(spec)
    packs = dict(sorted(packs.items(), key=lambda pair: _pack_place(pair[0])))
    folder.mkdir(parents=True, exist_ok=True)
    written = [
        _write(folder / f"{pack}.md", pack_page(pack, specs)) for pack, specs in packs.items()
    ]
    written.append(_write(folder / "README.md", index_page(packs)))
    return written


def _pack_place(pack: str) -> tuple[int, str]:
    from graphbook.nodes import PACKS

    library = ("core", *PACKS, "examples")
    return (library.index(pack) if pack in library else len(library), pack)


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def index_page(packs: dict[str, list[NodeSpec]]) -> str:
    lines = [
        "# Node packs",
        "",
        "Every node that ships with Graphbook, by pack (written by `graphbook nodes --docs "
        "docs/nodes` from the nodes themselves; do not edit by hand).",
        "",
        "| pack | nodes |",
        "| --- | --- |",
    ]
    for pack, specs in packs.items():
        names = ", ".join(f"[{s.name}]({pack}.md#{s.name.lower()})" for s in _ordered(specs))
        lines.append(f"| [{pack}]({pack}.md) | {names} |")
    return "\n".join(lines) + "\n"


def pack_page(pack: str, specs: list[NodeSpec]) -> str:
    lines = [f"# {pack}", "", *_pack_doc(specs), ""]
    for spec in _ordered(specs):
        lines += node_section(spec)
    return "\n".join(lines).rstrip() + "\n"


def _ordered(specs: list[NodeSpec]) -> list[NodeSpec]:
    return sorted(specs, key=lambda s: (s.category, s.name))


def _pack_doc(specs: list[NodeSpec]) -> list[str]:
    """The docstring of the module the pack's nodes come from (its first line or paragraph)."""
    module = _module_of(specs[0])
    doc = inspect.getdoc(module) if module is not None else ""
    return [doc.split("\n\n")[0].replace("\n", " ")] if doc else []


def _module_of(spec: NodeSpec) -> object | None:
    """The module of a library pack, the core nodes or the examples."""
    from graphbook import nodes
    from graphbook.nodes import core

    names = {"core": core.__name__, "examples": nodes.EXAMPLES}
    name = names.get(spec.pack) or (
        f"{nodes.__name__}.{spec.pack}" if spec.pack in nodes.PACKS else ""
    )
    return importlib.import_module(name) if name else None


def node_section(spec: NodeSpec) -> list[str]:
    ports = f"outputs: {', '.join(spec.outputs)}" if spec.outputs else "no outputs"
    lines = [f"## {spec.name}", "", f"*{spec.category} · {KIND_WORDS[spec.kind]} · {ports}*", ""]
    if spec.doc:
        lines += [spec.doc, ""]
    if spec.params:
        lines += ["| parameter | type | default | description |", "| --- | --- | --- | --- |"]
        lines += [param_row(param) for param in spec.params]
        lines.append("")
    return lines


def param_row(param: ParamSpec) -> str:
    if param.required:
        default = "required"
    elif param.default is None or callable(param.default):
        default = ""
    else:
        default = f"`{json.dumps(param.default)}`"
    description = param.description.replace("|", "\\|").replace("\n", " ")
    return f"| `{param.name}` | {param.type} | {default} | {description} |"
