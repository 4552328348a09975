"""Bypassed and muted nodes: what is left of a workflow's wiring once they are taken out.

Neither kind runs. A muted node gives nothing: the wires out of it carry no dicts and no
resource value. A bypassed step hands what flows into its `in` straight on to the nodes wired
from each of its outputs, as if a wire ran from each of its upstream outputs to each of them
(a dict reaching it reaches every one of them once, whichever output they hang from). A
bypassed node with no data input (a source, a resource) has nothing to pass on, so it is muted.
Wires into either kind, and the node's own parameters, are not looked at: it does not run.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from graphbook.workflow import DATA_INPUT, Edge, Node, NodeMode

OFF_WORDS: dict[NodeMode, str] = {"bypass": "bypassed", "mute": "muted"}
"""How messages name a node that does not run, by its mode."""


def off_modes(nodes: Mapping[str, Node]) -> dict[str, NodeMode]:
    """The nodes that do not run (bypassed or muted), by id."""
    return {node_id: node.mode for node_id, node in nodes.items() if node.mode != "active"}


def live_edges(edges: list[Edge], off: Mapping[str, NodeMode]) -> list[Edge]:
    """The edges between nodes that run, with a wire through each bypassed step; in the order
    of `edges`, each once."""
    if not off:
        return list(edges)
    inputs: dict[str, list[Edge]] = {}
    for edge in edges:
        if edge.input == DATA_INPUT:
            inputs.setdefault(edge.target, []).append(edge)
    kept: dict[Edge, None] = {}
    for edge in edges:
        if edge.target in off:
            continue
        if edge.source not in off:
            kept.setdefault(edge)
        elif edge.input == DATA_INPUT:
            for source, output in _feeding(edge.source, off, inputs, set()):
                kept.setdefault(Edge(source, output, edge.target, DATA_INPUT, edge.points))
    return list(kept)


def _feeding(
    node_id: str, off: Mapping[str, NodeMode], inputs: Mapping[str, list[Edge]], seen: set[str]
) -> Iterator[tuple[str, str]]:
    """The running (node, output) pairs whose dicts reach `node_id`'s input through bypasses."""
    if off[node_id] == "mute" or node_id in seen:
        return
    seen.add(node_id)
    for edge in inputs.get(node_id, ()):
        if edge.source in off:
            yield from _feeding(edge.source, off, inputs, seen)
        else:
            yield edge.source, edge.output
