"""`graphbook.core.steps`: a Graphbook 0.13 import path only (graphbook/compat013/steps.py)."""

from graphbook.compat013.steps import *  # noqa: F403
