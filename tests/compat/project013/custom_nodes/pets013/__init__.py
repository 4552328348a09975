"""A Graphbook 0.13 plugin package: its __init__ exports nodes and a browser bundle."""

from graphbook.plugins import export, web

from .pet_nodes import Bark

export("Bark", Bark)
web("web/dist/bundle.js")
