"""`python -m graphbook`: the command line."""

from graphbook.cli import entry

entry()
