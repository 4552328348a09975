"""Nodes of the hello example: one written with decorators, one as a class."""

from typing import Any, ClassVar

from graphbook import param, source, step
from graphbook.steps import Step


@step("Hello/Greetings")
@source()
@param("count", "int", default=10, description="how many greetings to make")
@param("message", "string", default="Hello, World!", description="the greeting")
def greetings(ctx: Any) -> Any:
    """Yields `count` numbered greetings, one dict each: `{"n": 0, "message": "..."}`."""
    for n in range(ctx.count):
        yield {"n": n, "message": f"{ctx.message} #{n}"}


class Shout(Step):
    """Logs each dict's message, upper-cased when `loud` is set, and passes the dict on."""

    Parameters: ClassVar[dict[str, Any]] = {
        "loud": {"type": "boolean", "default": False, "description": "upper-case the message"},
    }
    Category: ClassVar[str] = "Hello"

    def on_data(self, data: dict[str, Any]) -> None:
        message = data["message"].upper() if self.loud else data["message"]
        self.log(message)
        data["said"] = message
