"""A module of the plugin that a 0.13 workflow names in `data.module`."""

import graphbook.core.steps as steps


class Words(steps.SourceStep):
    """Yields the `words`."""

    RequiresInput = False
    Parameters = {"words": {"type": "list[string]", "default": ["hi"]}}
    Outputs = ["out"]
    Category = "Shout"

    def __init__(self, words):
        super().__init__()
        self.words = words

    def load(self):
        return {"out": [{"text": word} for word in self.words]}
