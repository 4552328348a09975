"""Prompts a PromptStep asks in the browser, built as Graphbook 0.13 built them.

`get_prompt(data)` returns one of these (or `none()` to let the dict pass unasked). The first
argument is the dict being asked about, kept for Graphbook 0.13's signatures: the engine sends
a preview of it with the question, so it is not copied into the prompt.
"""

from __future__ import annotations

from typing import Any

PromptDict = dict[str, Any]


def prompt(
    data: Any = None, *, msg: str = "", show_images: bool = False, default: Any = None
) -> PromptDict:
    """The fields every prompt has; the helpers below add `type` and `options`."""
    return {"msg": msg, "show_images": show_images, "def": default}


def none() -> PromptDict:
    """No question: the dict passes on without asking."""
    return {"type": None}


def bool_prompt(
    data: Any = None,
    *,
    msg: str = "Continue?",
    style: str = "yes/no",
    default: bool = False,
    show_images: bool = False,
) -> PromptDict:
    """A yes/no question; `style` is "yes/no" (two buttons) or "switch"."""
    return {
        **prompt(data, msg=msg, show_images=show_images, default=default),
        "type": "bool",
        "options": {"style": style},
    }


def selection_prompt(
    data: Any,
    choices: list[Any],
    *,
    msg: str = "Select an option:",
    default: Any = None,
    show_images: bool = False,
    multiple_allowed: bool = False,
) -> PromptDict:
    """Pick one of `choices` (or several, with `multiple_allowed`)."""
    if not choices:
        raise ValueError("selection_prompt needs at least one choice")
    if default is None:
        default = [choices[0]] if multiple_allowed else choices[0]
    return {
        **prompt(data, msg=msg, show_images=show_images, default=default),
        "type": "selection",
        "options": {"choices": list(choices), "multiple_allowed": multiple_allowed},
    }


def text_prompt(
    data: Any = None, *, msg: str = "Enter text:", default: str = "", show_images: bool = False
) -> PromptDict:
    return _typed("string", data, msg, default, show_images)


def number_prompt(
    data: Any = None,
    *,
    msg: str = "Enter a number:",
    default: float = 0.0,
    show_images: bool = False,
) -> PromptDict:
    return _typed("number", data, msg, default, show_images)


def dict_prompt(
    data: Any = None,
    *,
    msg: str = "Enter a dictionary:",
    default: dict[str, Any] | None = None,
    show_images: bool = False,
) -> PromptDict:
    return _typed("dict", data, msg, dict(default or {}), show_images)


def list_prompt(
    data: Any = None,
    type: str = "string",
    *,
    msg: str = "Enter a list:",
    default: list[Any] | None = None,
    show_images: bool = False,
) -> PromptDict:
    """A list of `type` values: "string", "number", "dict" or "bool"."""
    if type not in ("string", "number", "dict", "bool"):
        raise ValueError(f"list_prompt type is string, number, dict or bool, not {type!r}")
    return _typed(f"list[{type}]", data, msg, list(default or []), show_images)


def _typed(kind: str, data: Any, msg: str, default: Any, show_images: bool) -> PromptDict:
    return {
        **prompt(data, msg=msg, show_images=show_images, default=default),
        "type": kind,
        "options": {},
    }
