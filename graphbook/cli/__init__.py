"""The command line (`graphbook run`, `serve`, `nodes`, `runs`, `train`) and its terminal view.

commands.py parses the arguments and runs each command; terminal.py shows a run's events (or
prints them as JSON lines); asking.py answers prompts during `graphbook run`; train.py is
`graphbook train`.
"""

from graphbook.cli.commands import entry, main

__all__ = ["entry", "main"]
