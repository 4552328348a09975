"""`graphbook nodes`: the node catalog by pack and category, or a Markdown page per pack
(`--docs DIR`, nodedocs.py)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from rich.text import Text

from graphbook.cli.consoles import OK, error_console, output_console
from graphbook.cli.folders import load_registry, node_folders
from graphbook.params import ParamSpec
from graphbook.registry import Registry
from graphbook.spec import NodeSpec

if TYPE_CHECKING:
    pass


def cmd_nodes(args: argparse.Namespace) -> int:
    registry = load_registry(node_folders(args.nodes), error_console(), args.verbose)
    out = output_console()
    if args.docs is not None:
        from graphbook.cli.nodedocs import write_pack_docs

        kinds = ["builtin", "example", "pack", *(["custom"] if args.nodes else [])]
        for path in write_pack_docs(registry, args.docs, kinds):
            out.print(Text(f"wrote {path}"))
        return OK
    for heading, specs in by_pack(registry):
        out.print(Text(heading, style="bold"))
        category: str | None = None
        for spec in specs:
            if spec.category != category:
                category = spec.category
                out.print(Text(f"  {category or '(no category)'}", style="bold"))
            for line in spec_lines(spec):
                out.print(Text(line))
    return OK


PACK_ORDER = {"builtin": 0, "pack": 1, "example": 2, "custom": 3}


PACK_WORDS = {
    "builtin": "built-in",
    "pack": "installed node pack",
    "example": "examples",
    "custom": "node folder",
}


def by_pack(registry: Registry) -> list[tuple[str, list[NodeSpec]]]:
    """The registry's nodes grouped by pack: the library's first (core, then its packs in
    order), then installed packs, the examples, and node folders; each by category."""
    from graphbook.nodes import PACKS

    library = ("core", *PACKS)
    groups: dict[tuple[str, str], list[NodeSpec]] = {}
    for spec in registry:
        groups.setdefault((spec.pack_kind, spec.pack), []).append(spec)

    def order(key: tuple[str, str]) -> tuple[int, int, str]:
        kind, pack = key
        place = library.index(pack) if kind == "builtin" and pack in library else len(library)
        return PACK_ORDER.get(kind, 9), place, pack

    return [
        (f"{pack or 'custom nodes'} ({PACK_WORDS[kind]})", groups[(kind, pack)])
        for kind, pack in sorted(groups, key=order)
    ]


def spec_lines(spec: NodeSpec) -> list[str]:
    outputs = ", ".join(spec.outputs) or "none"
    return [f"    {spec.name} ({spec.kind}) -> {outputs}", *(param_line(p) for p in spec.params)]


def param_line(param: ParamSpec) -> str:
    line = f"        {param.name}: {param.type}"
    if param.default is not None and not callable(param.default):
        line += f" = {param.default!r}"
    if param.required:
        line += " (required)"
    return line + (f"  {param.description}" if param.description else "")
