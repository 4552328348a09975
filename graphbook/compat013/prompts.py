"""Graphbook 0.13's `graphbook.core.prompts`: the prompt helpers of graphbook/prompts.py."""

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
