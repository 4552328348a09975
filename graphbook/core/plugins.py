"""`graphbook.core.plugins`: a Graphbook 0.13 import path only (compat013/plugins.py)."""

from graphbook.compat013.plugins import *  # noqa: F403
