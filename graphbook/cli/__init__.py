"""The command line (`graphbook run`, `serve`, `nodes`, `runs`, `train`) and its terminal view.

main.py is the entry; parser.py holds every command's arguments; each command is the module
named after it (run, serve, nodes, runs, new, convert, train, mcp); terminal.py shows a run's
events (or prints them as JSON lines); asking.py answers prompts during `graphbook run`.
"""

from graphbook.cli.main import entry, main

__all__ = ["entry", "main"]
