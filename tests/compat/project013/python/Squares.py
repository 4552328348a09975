"""A workflow written as a Graphbook 0.13 Python script: `gb.Graph()` and `@g()`."""

import graphbook as gb
from graphbook import output, param, resource, step
from graphbook.core.resources import Resource
from graphbook.core.steps import GeneratorSourceStep, Step


class Numbers(GeneratorSourceStep):
    Parameters = {"amount": {"type": "number", "default": 100}}

    def __init__(self, amount=100):
        super().__init__()
        self.amount = amount

    def load(self):
        for i in range(int(self.amount)):
            yield {"out": {"n": i}}


class Power(Resource):
    Parameters = {"val": {"type": "number", "default": 2}}

    def value(self):
        return int(self.val)


class Raise(Step):
    Parameters = {"power": {"type": "resource"}}

    def __init__(self, power):
        super().__init__()
        self.power = power

    def on_data(self, data):
        data["raised"] = data["n"] ** self.power


@step("Custom/BigOrSmall")
@param("limit", type="number", default=50)
@output("big", "small")
def big_or_small(ctx, data):
    return "big" if data["raised"] > ctx.limit else "small"


@resource("Custom/Limit")
def limit(ctx):
    return 10


class Total(Step):
    def __init__(self):
        super().__init__()
        self.total = 0

    def on_data(self, data):
        self.total += data["raised"]

    def on_end(self):
        self.log(f"total {self.total}")


g = gb.Graph()


@g()
def _():
    g.md("Squares of 0..amount-1, split at a limit")
    numbers = g.step(Numbers)
    power = g.resource(Power)
    raised = g.step(Raise)
    split = g.step(big_or_small)
    total = g.step(Total)
    numbers.param("amount", 5)
    power.param("val", 2)
    raised.param("power", power)
    split.param("limit", 10)
    raised.bind(numbers)
    split.bind(raised)
    total.bind(split, "small")


if __name__ == "__main__":
    g.run()
