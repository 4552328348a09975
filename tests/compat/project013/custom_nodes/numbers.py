"""Number nodes in Graphbook 0.13's style: a class source and two function steps."""

from graphbook import output, param, step
from graphbook.core.steps import SourceStep


class Counter(SourceStep):
    """Returns `amount` dicts `{"n": i}` on `out`."""

    RequiresInput = False
    Parameters = {"amount": {"type": "number", "default": 10}}
    Outputs = ["out"]
    Category = "Custom"

    def __init__(self, amount):
        super().__init__()
        self.amount = amount

    def load(self):
        return {"out": [{"n": i} for i in range(int(self.amount))]}


@step("Custom/Tag")
@param("tag", type="string", default="seen")
def tag(ctx, data):
    """Writes the tag into the dict and returns it as text, which 0.13 ignores."""
    data["tag"] = ctx.tag
    return ctx.tag


@step("Custom/Parity")
@param("bad", type="number", default=-1)
@output("even", "odd")
def parity(ctx, data):
    """Routes by parity; the number `bad` is routed to an output that does not exist."""
    if data["n"] == ctx.bad:
        return "neither"
    return "even" if data["n"] % 2 == 0 else "odd"
