"""`graphbook convert IN.json OUT.json`: a workflow written in the canonical format."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from rich.text import Text

from graphbook.cli.consoles import OK, error_console, output_console
from graphbook.cli.run import print_notes
from graphbook.workflow import Workflow

if TYPE_CHECKING:
    pass


def cmd_convert(args: argparse.Namespace) -> int:
    workflow = Workflow.load(args.input)
    print_notes(workflow, error_console())
    path = workflow.save(args.output)
    nodes, edges = len(workflow.nodes), len(workflow.edges)
    output_console().print(Text(f"wrote {path} ({nodes} node(s), {edges} edge(s))"))
    return OK
