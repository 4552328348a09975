"""What the commands print to and what they return: the consoles (stdout, stderr), each
writing any text the stream can encode, and the exit codes."""

from __future__ import annotations

import sys
from typing import TextIO, cast

from rich.console import Console

from graphbook.cli.terminal import EncodableStream

OK = 0
FAILED = 1
USAGE = 2
INTERRUPTED = 130


def output_console() -> Console:
    stream = cast(TextIO, EncodableStream(sys.stdout))
    return Console(file=stream, highlight=False, emoji=False, markup=False, soft_wrap=True)


def error_console() -> Console:
    stream = cast(TextIO, EncodableStream(sys.stderr))
    return Console(file=stream, highlight=False, emoji=False, markup=False, soft_wrap=True)
