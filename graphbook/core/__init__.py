"""Graphbook 0.13 import paths only (`graphbook.core`, `graphbook.core.steps`, ...), kept so that
node files written for 0.13 load unchanged. Nothing here is code of its own: each module re-exports
its namesake in graphbook/compat013/, where 0.13 compatibility lives. New code imports `graphbook`,
`graphbook.steps`, `graphbook.resources`, ... instead.
"""

from graphbook.compat013 import *  # noqa: F403
