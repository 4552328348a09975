"""A Graphbook 0.13 script in the shape of upstream's python/Pokemon.py: nodes imported from the
`custom_nodes` package beside it, and 0.13's shipped nodes under `gb.steps` and `gb.resources`."""

from custom_nodes.pokemon_nodes import Catch, Pokedex

import graphbook as gb
from graphbook.core.steps import SplitItemField

g = gb.Graph()


@g()
def _():
    g.md("# Pokedex\n\nCatches the favourite Pokemon and sorts their moves by power.")

    step_0 = g.step(Pokedex)
    resource_1 = g.resource(gb.resources.FunctionResource)
    step_2 = g.step(gb.steps.Split)
    step_3 = g.step(Catch)
    resource_4 = g.resource(gb.resources.FunctionResource)
    step_5 = g.step(SplitItemField)
    step_6 = g.step(gb.steps.DumpJSONL)

    resource_1.param(
        "val",
        """def my_favorite_pokemon(note: dict) -> bool:
        return note["name"] in ["Pikachu", "Charmander", "Bulbasaur"]""",
    )
    step_2.param("split_fn", resource_1)
    resource_4.param(
        "val",
        """def strong(item) -> bool:
        return item["power"] > 0""",
    )
    step_5.param("split_fn", resource_4)
    step_5.param("item_key", "moves")
    step_5.param("a_key", "attacks")
    step_5.param("b_key", "others")
    step_6.param("jsonl_path", "caught.jsonl")

    step_2.bind(step_0, "out")
    step_3.bind(step_2, "A")
    step_5.bind(step_3, "out")
    step_6.bind(step_5, "out")


if __name__ == "__main__":
    g.run()
