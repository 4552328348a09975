"""`graphbook new FILE.json [--template NAME]`: a new workflow, from a template or empty."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text

from graphbook.cli.consoles import OK, output_console
from graphbook.errors import GraphbookError
from graphbook.workflow import Workflow

if TYPE_CHECKING:
    pass


def cmd_new(args: argparse.Namespace) -> int:
    from graphbook import templates

    out = output_console()
    if args.list:
        width = max(len(t.name) for t in templates.TEMPLATES)
        for known in templates.TEMPLATES:
            out.print(Text(f"{known.name:<{width}}  {known.title}: {known.description}"))
        return OK
    if args.file is None:
        raise GraphbookError("name the file to write: graphbook new FILE.json [--template NAME]")
    if args.template is None:
        if args.file.exists() and not args.force:
            raise GraphbookError(f"{args.file} exists; choose another name or add --force")
        Workflow().save(args.file)
        out.print(Text(f"wrote {args.file} (an empty workflow; --list shows the templates)"))
        return OK
    created = templates.create(args.template, args.file, Path.cwd(), overwrite=args.force)
    out.print(Text(f"wrote {created.workflow} from template {args.template!r}"))
    for sample in created.samples:
        out.print(Text(f"wrote sample data {sample}"))
    out.print(Text(f"run it: graphbook run {created.workflow}"))
    return OK
