"""`import graphbook` is the new API; Graphbook 0.13's names on it load the 0.13 layer only
when a script uses them."""

from __future__ import annotations

import subprocess
import sys

PROBE = (
    "import sys, graphbook; before = sorted(m for m in sys.modules if 'compat013' in m); "
    "graph = graphbook.Graph(); print(before, type(graph).__module__, graphbook.utils.__name__)"
)


def test_import_graphbook_leaves_the_013_layer_until_used() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.split() == ["[]", "graphbook.compat013.script", "graphbook.utils"]


def test_an_unknown_name_is_an_attribute_error() -> None:
    import graphbook

    try:
        graphbook.Graf  # noqa: B018
    except AttributeError as exc:
        assert "no attribute 'Graf'" in str(exc)
    else:
        raise AssertionError("graphbook.Graf should not exist")
