"""`python -m graphbook`: the command line."""

from graphbook.cli import main

raise SystemExit(main())
