"""`graphbook.utils`: a Graphbook 0.13 import path only (graphbook/compat013/utils.py)."""

from graphbook.compat013.utils import *  # noqa: F403
