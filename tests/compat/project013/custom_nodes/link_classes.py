"""Link nodes written as Graphbook 0.13 classes."""

import json

from graphbook.core.steps import SourceStep, Step


class PageLink(SourceStep):
    """Returns its one link as `{"out": link}`: 0.13 hands on the link, wrapped as one item."""

    RequiresInput = False
    Parameters = {"url": {"type": "string", "default": "http://127.0.0.1/about.html"}}
    Outputs = ["out"]
    Category = "Custom"

    def __init__(self, url):
        super().__init__()
        self.url = url

    def load(self):
        return {"out": self.url}


class Collect(Step):
    """Appends what it receives to a JSON-lines file."""

    RequiresInput = True
    Parameters = {"path": {"type": "string", "default": "collected.jsonl"}}
    Outputs = ["out"]
    Category = "Custom"

    def __init__(self, path):
        super().__init__()
        self.path = path

    def on_data(self, data):
        with open(self.path, "a") as f:
            f.write(json.dumps(data) + "\n")
        return "ignored"
