"""Draft: what the decorators on one function have said so far (filled by graphbook.decorators,
run by the adapters of graphbook.adapters)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from graphbook.params import ParamSpec
from graphbook.spec import NodeKind


@dataclass
class Draft:
    """What the decorators on one function have said so far."""

    name: str | None = None
    is_node: bool = False
    role: NodeKind = "step"
    is_resource: bool = False
    main_event: str | None = None
    roles: list[NodeKind] = field(default_factory=list)
    """Every kind-setting decorator applied (@source, @batch, @prompt, @resource)."""
    params: dict[str, ParamSpec] = field(default_factory=dict)
    """Declared with @param, in the order they read top to bottom."""
    batch_params: dict[str, ParamSpec] = field(default_factory=dict)
    outputs: list[str] = field(default_factory=list)
    events: dict[str, Callable[..., Any]] = field(default_factory=dict)
    batch: dict[str, Any] = field(default_factory=dict)
    casts: dict[str, Callable[[Any], Any]] = field(default_factory=dict)

    def set_role(self, role: NodeKind) -> None:
        self.role = role
        self.roles.append(role)

    def all_params(self) -> tuple[ParamSpec, ...]:
        """`batch_size` and `item_key` first (an @param of that name replaces one), then the
        @param declarations top to bottom, whatever order the decorators were stacked in."""
        merged = {name: self.params.get(name, p) for name, p in self.batch_params.items()}
        merged.update((name, p) for name, p in self.params.items() if name not in merged)
        return tuple(merged.values())
