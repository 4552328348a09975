"""A dataset source in the style of graphbook-huggingface's HuggingfaceDataset (0.13): parameters
declared without a default, whose Python defaults (`image_columns=[]`) the node relies on."""

import graphbook.core.steps as steps
from graphbook import param, step


class Rows(steps.GeneratorSourceStep):
    """Yields `count` rows; the columns named in `image_columns` are marked as images."""

    RequiresInput = False
    Parameters = {
        "count": {"type": "number", "default": 2},
        "image_columns": {"type": "list[string]", "required": False},
        "kwargs": {"type": "dict", "required": False},
    }
    Outputs = ["out"]
    Category = "Huggingface"

    def __init__(self, count, image_columns=[], kwargs={}):  # noqa: B006 (as 0.13 wrote it)
        super().__init__()
        self.count = count
        self.image_columns = image_columns
        self.kwargs = kwargs

    def load(self):
        for i in range(int(self.count)):
            row = {"picture": f"pictures/{i}.png", "label": i, **self.kwargs}
            for column in self.image_columns:
                row[column] = {"type": "image", "value": row[column]}
            yield {"out": [row]}


@step("Custom/Suffix")
@param("suffix", type="string")
def suffix(ctx, data):
    """Appends `suffix` to the label; with none given, 0.13's ctx.suffix is None."""
    data["tagged"] = f"{data['label']}{ctx.suffix or ''}"
