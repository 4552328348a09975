"""Cached node outputs between runs, and the plan that says which nodes run again and why.

A node's key covers its code (`NodeSpec.code_hash`), its parameter values and the keys of
everything wired into it, so a change anywhere upstream reaches it. A node re-runs when it has
no complete cached outputs, when its key changed, or when a node feeding it re-runs; otherwise
its cached dicts are handed to the nodes that do run.

NOTE [ Cache budget ]
All workflows share one budget of bytes (estimated sizes of the cached dicts). When a node's
outputs are committed and the total exceeds the budget, whole entries are evicted, least
recently used (written or reused) first; the entry just committed is kept. A node whose outputs
alone exceed the budget is not cached at all (it re-runs next time, cause `uncacheable`).
"""

from __future__ import annotations

import hashlib
import itertools
import os
import threading
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from types import CodeType
from typing import Any

from graphbook.events import PlanAction, PlanCause
from graphbook.graph import Graph, GraphNode, inner_nodes
from graphbook.lifecycle import Data, fork

SAMPLE = 16
KEPT_LOGS = 200
"""A node's last log lines kept with its outputs, shown again when they are reused."""
"""Items of a long list whose sizes are measured; the rest are assumed alike."""
CONTAINER_BYTES = 64
SCALAR_BYTES = 32


# -- keys ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class NodeKey:
    """What a node's outputs depend on."""

    code: str
    params: tuple[tuple[str, str], ...]
    """(parameter name, fingerprint of its value), sorted by name."""
    upstream: tuple[tuple[str, str, str, str], ...]
    """(input or parameter, source node id, source output, source key digest), sorted."""

    @property
    def digest(self) -> str:
        return fingerprint((self.code, self.params, self.upstream))


def fingerprint(value: Any) -> str:
    """A stable digest of a parameter value; functions count by their code, not identity."""
    return hashlib.sha256(_canonical(value).encode()).hexdigest()[:16]


def _canonical(value: Any) -> str:
    if value is None or isinstance(value, bool | int | float | str):
        return repr(value)
    if isinstance(value, dict):
        inner = ",".join(f"{k!r}:{_canonical(v)}" for k, v in sorted(value.items(), key=_by_key))
        return "{" + inner + "}"
    if isinstance(value, list | tuple):
        return "[" + ",".join(_canonical(v) for v in value) + "]"
    code = getattr(value, "__code__", None)
    if isinstance(code, CodeType):
        return "fn:" + _code_text(code)
    return f"{type(value).__qualname__}:{value!r}"


def _by_key(item: tuple[Any, Any]) -> str:
    return str(item[0])


def _code_text(code: CodeType) -> str:
    consts = [_code_text(c) if isinstance(c, CodeType) else repr(c) for c in code.co_consts]
    return "|".join([code.co_code.hex(), repr(code.co_names), repr(code.co_varnames), *consts])


def node_key(graph: Graph, node: GraphNode, keys: dict[str, NodeKey]) -> NodeKey:
    code = f"{node.spec.name}:{node.spec.code_hash}"
    params = tuple(sorted((name, fingerprint(v)) for name, v in node.params.items()))
    upstream = tuple(
        sorted(
            (e.input, e.source, e.output, keys[e.source].digest)
            for e in graph.edges
            if e.target == node.id and e.source in keys
        )
    )
    return NodeKey(code, params, upstream)


# -- sizes -----------------------------------------------------------------------------------
def estimate_size(value: Any, depth: int = 0) -> int:
    """Roughly how many bytes `value` holds: exact for arrays, tensors and images."""
    if value is None or isinstance(value, bool | int | float):
        return SCALAR_BYTES
    if isinstance(value, str | bytes | bytearray):
        return CONTAINER_BYTES + len(value)
    if depth > 8:
        return CONTAINER_BYTES
    if isinstance(value, dict):
        return CONTAINER_BYTES + sum(estimate_size(v, depth + 1) for v in value.values())
    if isinstance(value, list | tuple):
        return CONTAINER_BYTES + _sequence_size(value, depth)
    return _leaf_size(value)


def _sequence_size(value: list[Any] | tuple[Any, ...], depth: int) -> int:
    if len(value) <= SAMPLE:
        return sum(estimate_size(v, depth + 1) for v in value)
    sample = sum(estimate_size(v, depth + 1) for v in value[:SAMPLE])
    return sample * len(value) // SAMPLE


def _leaf_size(value: Any) -> int:
    nbytes = getattr(value, "nbytes", None)  # numpy arrays
    if isinstance(nbytes, int):
        return nbytes
    if hasattr(value, "element_size") and hasattr(value, "numel"):  # torch tensors
        return int(value.element_size() * value.numel())
    size, bands = getattr(value, "size", None), getattr(value, "getbands", None)
    if isinstance(size, tuple) and len(size) == 2 and callable(bands):  # PIL images
        return int(size[0] * size[1] * len(bands()))
    return CONTAINER_BYTES


# -- entries ---------------------------------------------------------------------------------
class Recording:
    """A node's outputs as the run hands them on: copied, in order, measured."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.pairs: list[tuple[str, Data]] = []
        self.by_output: dict[str, list[Data]] = {}
        self.bytes = 0
        self.overflow = False
        self.logs: deque[tuple[str, Any]] = deque(maxlen=KEPT_LOGS)
        self.logs_total = 0

    def log(self, level: str, message: Any) -> None:
        """Keep one of the node's log lines (the last KEPT_LOGS are kept)."""
        self.logs.append((level, message))
        self.logs_total += 1

    def add(self, output: str, data: Data) -> None:
        if self.overflow:
            return
        copy = fork(data)
        self.bytes += estimate_size(copy)
        if self.bytes > self.budget:
            self.overflow = True
            self.pairs, self.by_output = [], {}
            return
        self.pairs.append((output, copy))
        self.by_output.setdefault(output, []).append(copy)


@dataclass
class Entry:
    """The complete outputs of one node from its last successful run."""

    key: NodeKey
    pairs: list[tuple[str, Data]]
    by_output: dict[str, list[Data]]
    bytes: int
    used: int
    logs: tuple[tuple[str, Any], ...] = ()
    """The node's last log lines, (level, message), shown again when it is reused."""
    logs_total: int = 0

    @property
    def counts(self) -> dict[str, int]:
        return {output: len(items) for output, items in self.by_output.items()}


@dataclass(frozen=True)
class Decision:
    node_id: str
    action: PlanAction
    cause: PlanCause
    reason: str


@dataclass(frozen=True)
class Plan:
    """Per node, in topological order: run or reuse, and why; and the keys of this run."""

    decisions: dict[str, Decision]
    keys: dict[str, NodeKey]

    def runs(self, node_id: str) -> bool:
        return self.decisions[node_id].action == "run"

    def replays(self, graph: Graph) -> set[str]:
        """Reused steps that feed a node that runs: they hand it their cached dicts."""
        return {
            e.source for e in graph.data_edges() if not self.runs(e.source) and self.runs(e.target)
        }


INCOMPLETE = "the run before this one did not finish it"
_REASONS: dict[PlanCause, str] = {
    "new": "nothing was cached for it before this run",
    "cleared": "its cached outputs were cleared before this run",
    "evicted": "its cached outputs were evicted to stay within the cache budget",
    "uncacheable": "its outputs were larger than the whole cache budget",
    "incomplete": INCOMPLETE,
    "lost": "its cached outputs were lost when the run process was ended (a Stop that had to "
    "end it, or a crash)",
    "triggered": "re-triggered from its node",
}


def missing_output(node: GraphNode) -> str:
    """The first file or folder the node writes (NodeSpec.writes) that does not exist."""
    for name in node.spec.writes:
        value = node.params.get(name)
        if isinstance(value, str) and value and not os.path.exists(os.path.expanduser(value)):
            return value
    return ""


# -- caches ----------------------------------------------------------------------------------
class WorkflowCache:
    """The cached outputs of one workflow's nodes; see NOTE [ Cache budget ]."""

    def __init__(self, owner: OutputCache, name: str) -> None:
        self.owner = owner
        self.name = name
        self.entries: dict[str, Entry] = {}
        self.gone: dict[str, PlanCause] = {}
        """Why a node has no entry, when it had or tried to have one."""
        self.children: dict[str, set[str]] = {}
        """Node -> the nodes wired from it, as of the last plan (to clear downstream)."""
        self.live: dict[str, Recording] = {}
        """Outputs of the nodes running now, readable while they grow."""
        self.tried: dict[str, NodeKey] = {}
        """The key of a node's run that did not finish: what changed since is said first."""

    def plan(self, graph: Graph, trigger: str | None = None) -> Plan:
        """Run or reuse, per node; `trigger` runs whatever is cached for it (re-triggered)."""
        self.children = _children(graph)
        keys: dict[str, NodeKey] = {}
        decisions: dict[str, Decision] = {}
        for node in graph.nodes.values():
            keys[node.id] = node_key(graph, node, keys)
            if node.id == trigger:
                decisions[node.id] = Decision(node.id, "run", "triggered", _REASONS["triggered"])
            elif not node.spec.is_resource:
                decisions[node.id] = self._decide(graph, node, keys[node.id], decisions)
        _decide_resources(graph, decisions)
        with self.owner.lock:
            for decision in decisions.values():
                entry = self.entries.get(decision.node_id)
                if entry is not None and decision.action == "reuse":
                    entry.used = self.owner.tick()
        return Plan({i: decisions[i] for i in graph.nodes}, keys)

    def _decide(
        self, graph: Graph, node: GraphNode, key: NodeKey, decided: dict[str, Decision]
    ) -> Decision:
        entry = self.entries.get(node.id)
        if entry is None:
            cause = self.gone.get(node.id, "lost" if self.name in self.owner.lost else "new")
            tried = self.tried.get(node.id) if cause == "incomplete" else None
            changed = _change(node, tried, key) if tried is not None else None
            if changed is not None:  # what the person changed since, not only that it failed
                return Decision(node.id, "run", changed.cause, f"{changed.reason}; {INCOMPLETE}")
            return Decision(node.id, "run", cause, _REASONS.get(cause, cause))
        changed = _change(node, entry.key, key)
        if changed is not None:
            return changed
        running = {s for s in graph.upstream(node.id) if s in decided and _runs(decided[s])}
        if running:
            names = ", ".join(sorted(running))
            return Decision(node.id, "run", "upstream_runs", f"upstream runs again: {names}")
        missing = missing_output(node)
        if missing:
            return Decision(node.id, "run", "output_missing", f"its output {missing} is missing")
        return Decision(node.id, "reuse", "unchanged", "unchanged since the last run")

    def recording(self, node_id: str) -> Recording:
        recording = Recording(self.owner.budget)
        self.live[node_id] = recording
        return recording

    def commit(self, node_id: str, key: NodeKey, recording: Recording) -> None:
        """Keep a node's complete outputs (or note that they did not fit)."""
        with self.owner.lock:
            self.entries.pop(node_id, None)
            self.live.pop(node_id, None)
            if recording.overflow:
                self.gone[node_id] = "uncacheable"
                return
            pairs, by_output = recording.pairs, recording.by_output
            logs = tuple(recording.logs)
            used = self.owner.tick()
            entry = Entry(key, pairs, by_output, recording.bytes, used, logs, recording.logs_total)
            self.entries[node_id] = entry
            self.gone.pop(node_id, None)
            self.tried.pop(node_id, None)
        self.owner.evict(keep=entry)

    def abandon(self, node_id: str, key: NodeKey | None = None) -> None:
        """The node ran (with `key`) but did not finish: whatever was cached for it is stale."""
        with self.owner.lock:
            self.entries.pop(node_id, None)
            self.live.pop(node_id, None)
            self.gone[node_id] = "incomplete"
            if key is not None:
                self.tried[node_id] = key

    def clear(self, node_id: str | None = None) -> list[str]:
        """Drop `node_id` (a component: the nodes inside it) and everything downstream of it
        (every node if None)."""
        known = set(self.entries) | set(self.children)
        if node_id is None:
            dropped = known
        else:
            starts = [node_id] if node_id in known else inner_nodes(node_id, known) or [node_id]
            dropped = set().union(*(_downstream(start, self.children) for start in starts))
        with self.owner.lock:
            for node in dropped:
                self.entries.pop(node, None)
                self.gone[node] = "cleared"
        return sorted(dropped)

    def entry(self, node_id: str) -> Entry | None:
        return self.entries.get(node_id)

    def items(self, node_id: str, output: str) -> list[Data] | None:
        """A node's dicts on one output: cached, or growing while the node runs."""
        entry = self.entries.get(node_id)
        if entry is not None:
            return entry.by_output.get(output, [])
        recording = self.live.get(node_id)
        return recording.by_output.get(output, []) if recording is not None else None

    @property
    def bytes(self) -> int:
        return sum(e.bytes for e in list(self.entries.values()))


class OutputCache:
    """Every workflow's cached outputs within one byte budget (NOTE [ Cache budget ])."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.lock = threading.RLock()
        self._workflows: dict[str, WorkflowCache] = {}
        self._clock = itertools.count(1)
        self.lost: set[str] = set()
        """Workflows whose cached outputs were lost with the process that held them: a node
        with no entry of its own re-runs with cause `lost`, not `new`."""

    def workflow(self, name: str) -> WorkflowCache:
        """The cache of one workflow file; two files never share one."""
        with self.lock:
            return self._workflows.setdefault(name, WorkflowCache(self, name))

    def tick(self) -> int:
        return next(self._clock)

    @property
    def used(self) -> int:
        with self.lock:
            return sum(w.bytes for w in self._workflows.values())

    @property
    def entries(self) -> int:
        with self.lock:
            return sum(len(w.entries) for w in self._workflows.values())

    def usage(self) -> tuple[int, int]:
        """`used` and `entries`, read together."""
        with self.lock:
            return self.used, self.entries

    def set_budget(self, budget: int) -> None:
        self.budget = budget
        self.evict()

    def evict(self, keep: Entry | None = None) -> None:
        """Drop least recently used entries until the total fits the budget."""
        with self.lock:
            candidates = sorted(
                (entry.used, cache, node_id)
                for cache in self._workflows.values()
                for node_id, entry in cache.entries.items()
                if entry is not keep
            )
            used = self.used
            for _, cache, node_id in candidates:
                if used <= self.budget:
                    return
                used -= cache.entries.pop(node_id).bytes
                cache.gone[node_id] = "evicted"

    def rename(self, old: str, new: str) -> None:
        """A workflow file was renamed: its cache goes with it."""
        with self.lock:
            cache = self._workflows.pop(old, None)
            if old in self.lost:
                self.lost.discard(old)
                self.lost.add(new)
            if cache is not None:
                cache.name = new
                self._workflows[new] = cache

    def forget(self, name: str) -> None:
        with self.lock:
            self._workflows.pop(name, None)
            self.lost.discard(name)


def _runs(decision: Decision) -> bool:
    return decision.action == "run"


def _children(graph: Graph) -> dict[str, set[str]]:
    children: dict[str, set[str]] = {i: set() for i in graph.nodes}
    for edge in graph.edges:
        children.setdefault(edge.source, set()).add(edge.target)
    return children


def _downstream(node_id: str, children: dict[str, set[str]]) -> set[str]:
    seen: set[str] = set()
    todo = [node_id]
    while todo:
        current = todo.pop()
        if current not in seen:
            seen.add(current)
            todo.extend(children.get(current, ()))
    return seen


def _decide_resources(graph: Graph, decisions: dict[str, Decision]) -> None:
    """A resource is built when a node that runs needs it; resources are never cached."""
    resources = [n for n in graph.nodes.values() if n.spec.is_resource]
    consumers = _children(graph)
    for node in reversed(resources):
        needed = any(
            decisions[c].action == "run" for c in consumers.get(node.id, ()) if c in decisions
        )
        decisions[node.id] = (
            Decision(node.id, "run", "needed", "a node that runs needs it")
            if needed
            else Decision(node.id, "reuse", "unchanged", "no node that runs needs it")
        )


def _change(node: GraphNode, old: NodeKey, key: NodeKey) -> Decision | None:
    """Why the node runs when its key is not `old`: its code, parameters or upstream changed."""
    if old.code != key.code:
        return Decision(node.id, "run", "code", f"the code of {node.spec.name} changed")
    if old.params != key.params:
        names = _changed(dict(old.params), dict(key.params))
        return Decision(node.id, "run", "params", f"parameters changed: {names}")
    if old.upstream != key.upstream:
        sources = _changed_sources(old, key)
        return Decision(node.id, "run", "upstream", f"changed upstream: {sources}")
    return None


def _changed(old: dict[str, str], new: dict[str, str]) -> str:
    names = sorted(n for n in set(old) | set(new) if old.get(n) != new.get(n))
    return ", ".join(names)


def _changed_sources(old: NodeKey, new: NodeKey) -> str:
    before = set(old.upstream)
    names: Iterable[str] = sorted(
        {f"{source} ({slot})" for slot, source, _, _ in set(new.upstream) ^ before}
    )
    return ", ".join(names)
