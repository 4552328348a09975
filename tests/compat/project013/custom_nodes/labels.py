"""Prompt nodes in Graphbook 0.13's style (its data-labeling example's idioms)."""

from graphbook import prompt, step
from graphbook.prompts import bool_prompt, selection_prompt


def pet_kind(ctx, data):
    return selection_prompt(data, choices=["dog", "cat"], msg=f"Which pet is number {data['n']}?")


@step("Prompts/PetLabel")
@prompt(pet_kind)
def pet_label(ctx, data, response: str):
    data["label"] = response


def keep_it(ctx, data):
    return bool_prompt(data, msg=f"Keep number {data['n']}?", default=True)


@step("Prompts/Keep")
@prompt(keep_it)
def keep(ctx, data, response: bool):
    data["keep"] = response
