"""A Graphbook 0.13 plugin package, as graphbook-huggingface and upstream's example_plugin are
laid out: the `__init__` exports its nodes (one under a name of its own) and a web bundle."""

import os.path as osp

from graphbook.plugins import export, web

from .nodes import ShoutStep, Volume

export("Shout", ShoutStep)
export("Volume", Volume)

web(osp.realpath(osp.join(osp.dirname(__file__), "../web/dist/bundle.js")))
