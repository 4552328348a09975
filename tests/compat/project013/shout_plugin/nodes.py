"""The plugin's nodes, in 0.13's class style."""

import graphbook.core.resources as resources
import graphbook.core.steps as steps


class ShoutStep(steps.Step):
    """Upper-cases `text`, `volume` times over with exclamation marks."""

    RequiresInput = True
    Parameters = {"volume": {"type": "resource"}}
    Outputs = ["out"]
    Category = "Shout"

    def __init__(self, volume):
        super().__init__()
        self.volume = volume

    def on_data(self, data):
        data["text"] = data["text"].upper() + "!" * self.volume


class Volume(resources.Resource):
    """How loud."""

    Parameters = {"val": {"type": "number", "default": 2}}
    Category = "Shout"

    def value(self):
        return int(self.val)
