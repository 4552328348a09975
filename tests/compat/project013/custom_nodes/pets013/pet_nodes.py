"""The plugin's node file."""

from graphbook.core.steps import Step


class Bark(Step):
    """Adds a bark to every dict."""

    Category = "Pets"

    def on_data(self, data):
        data["sound"] = "woof"
