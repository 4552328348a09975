"""`graphbook.core.prompts`: a Graphbook 0.13 import path only (graphbook/compat013/prompts.py)."""

from graphbook.compat013.prompts import *  # noqa: F403
