"""`graphbook.core.note`: a Graphbook 0.13 import path only (graphbook/compat013/note.py)."""

from graphbook.compat013.note import *  # noqa: F403
