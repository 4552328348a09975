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


LEAF = (
    "import sys, graphbook.events; "
    "print(sorted(n for n, m in sys.modules.items() if n.startswith('graphbook') and m.__spec__))"
)


def test_importing_one_module_loads_it_alone() -> None:
    """The package's public names load on first use: `graphbook.events` (what a run says)
    brings neither the engine nor the domain with it, only the previews its events carry."""
    done = subprocess.run(
        [sys.executable, "-c", LEAF], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.split() == ["['graphbook',", "'graphbook.events',", "'graphbook.previews']"]


def test_public_names_are_those_users_import() -> None:
    import graphbook
    from graphbook import Workflow, batch, decorators, run_workflow, step
    from graphbook.engine.executor import run_workflow as engine_run
    from graphbook.workflow import Workflow as model

    assert (Workflow, run_workflow) == (model, engine_run)
    assert (batch, step) == (decorators.batch, decorators.step)
    assert set(graphbook.__all__) <= set(dir(graphbook))
    assert graphbook.__version__ and graphbook.steps.Step is graphbook.steps.BatchStep.__mro__[1]
