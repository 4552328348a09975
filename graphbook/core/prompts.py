"""`graphbook.core.prompts`, as Graphbook 0.13 node files import it."""

from graphbook.prompts import (
    bool_prompt,
    dict_prompt,
    list_prompt,
    none,
    number_prompt,
    prompt,
    selection_prompt,
    text_prompt,
)

__all__ = [
    "bool_prompt",
    "dict_prompt",
    "list_prompt",
    "none",
    "number_prompt",
    "prompt",
    "selection_prompt",
    "text_prompt",
]
