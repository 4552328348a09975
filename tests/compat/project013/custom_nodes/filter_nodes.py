"""The filter guide of Graphbook 0.13's docs ("Filter Based on a Given Function"), class and
function forms: a `resource` parameter fed by a Function resource, compiled with
transform_function_string."""

from graphbook import event, output, param, source, step
from graphbook.steps import Step
from graphbook.utils import transform_function_string


class Filter(Step):
    RequiresInput = True
    Parameters = {"fn": {"type": "resource"}}
    Outputs = ["TRUE", "FALSE"]
    Category = ""

    def __init__(self, fn):
        super().__init__()
        self.fn = transform_function_string(fn)

    def route(self, data: dict) -> str:
        split_result = self.fn(data)
        if split_result:
            return "TRUE"
        return "FALSE"


def setup_fn(ctx, **kwargs):
    ctx.fn = transform_function_string(ctx.fn)


@step("FnFilter", event="route")
@param("fn", type="resource")
@output("TRUE", "FALSE")
@event("__init__", setup_fn)
def fn_filter(ctx, data: dict):
    split_result = ctx.fn(data)
    if split_result:
        return "TRUE"
    return "FALSE"


@step("Custom/Values")
@source()
def values(ctx):
    for value in range(6):
        yield {"out": {"value": value}}
