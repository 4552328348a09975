"""Nodes a 0.13 workflow names by module: `"module": "pets_plugin.nodes"`."""

from graphbook.core.steps import SourceStep


class Pets(SourceStep):
    """Returns the pets named in `names`, an `array` parameter as 0.13 examples declare them."""

    Parameters = {"names": {"type": "array", "default": ["rex"]}}
    Outputs = ["out"]
    Category = "Pets"

    def __init__(self, names):
        super().__init__()
        self.names = names

    def load(self):
        return {"out": [{"name": name} for name in self.names]}
