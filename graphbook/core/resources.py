"""`graphbook.core.resources`: a Graphbook 0.13 import path only (compat013/resources.py)."""

from graphbook.compat013.resources import *  # noqa: F403
