"""The nodes a Graphbook 0.13 script imports from the `custom_nodes` package beside it (as the
upstream python/Pokemon.py example does)."""

from graphbook.core.steps import AsyncStep, SourceStep


class Pokedex(SourceStep):
    """Every Pokemon the Pokedex knows, with its moves and their power."""

    RequiresInput = False
    Parameters = {}
    Outputs = ["out"]
    Category = "Custom"

    def load(self):
        pokemons = [
            ("Pikachu", {"Thunderbolt": 90, "Growl": 0}),
            ("Eevee", {"Tackle": 40}),
            ("Bulbasaur", {"Vine Whip": 45, "Leech Seed": 0}),
        ]
        return {
            "out": [
                {"name": name, "moves": [{"move": m, "power": p} for m, p in moves.items()]}
                for name, moves in pokemons
            ]
        }


class Catch(AsyncStep):
    """0.13's AsyncStep subclassed for its lifecycle only: marks each Pokemon caught."""

    Category = "Custom"

    def on_data(self, data):
        data["caught"] = True
