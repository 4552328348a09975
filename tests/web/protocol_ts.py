"""The TypeScript mirror of graphbook/protocol/ (with the run events of graphbook/events.py,
the previews of graphbook/previews.py, the problems of graphbook/errors.py and the run
request of graphbook/run_request.py it sends): what web/src/protocol.ts must declare.

`python tests/web/protocol_ts.py --write` rewrites the generated block of protocol.ts after a
change to those modules; test_protocol_sync.py fails until they agree.
"""

from __future__ import annotations

import dataclasses
import sys
import types
import typing
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin

from graphbook import errors, events, previews, protocol, run_request
from graphbook.protocol import apps, bodies, jobs, messages, snapshot

PROTOCOL_TS = Path(__file__).resolve().parents[2] / "web" / "src" / "protocol.ts"
BEGIN = "// <generated from graphbook.protocol by tests.web.protocol_ts>"
WIRE = (snapshot, messages, jobs, bodies, apps)
"""graphbook.protocol's modules of types, in the order protocol.ts declares them."""
MODULES = (events, previews, errors, run_request, *WIRE)
"""Where the wire's types are defined, in the order protocol.ts declares them."""
END = "// </generated>"
ALIASES = (
    "RunMode",
    "RunStatus",
    "EndStatus",
    "NodeState",
    "NodeStatus",
    "PlanAction",
    "PlanCause",
    "PauseReason",
    "WorkflowAction",
    "ErrorCode",
)
SCALARS = {str: "string", int: "number", float: "number", bool: "boolean"}
PREVIEW = (
    "export type Preview = ImagePreview | TensorPreview | string | number | boolean | null | "
    "Preview[] | { [key: string]: Preview };"
)
"""graphbook.previews.Preview, a recursive union, as TypeScript says it."""


def literal(values: tuple[Any, ...]) -> str:
    return " | ".join("'" + str(v) + "'" for v in values)


def ts_type(hint: Any) -> str:
    """The TypeScript spelling of a field's Python type."""
    if hint is Any:
        return "unknown"
    if hint is type(None):
        return "null"
    alias = next((name for name in ALIASES if hint == alias_value(name)), None)
    if alias:
        return alias
    origin = get_origin(hint)
    if origin in (Union, types.UnionType) and previews.ImagePreview in get_args(hint):
        return "Preview"
    if origin is Literal:
        return literal(get_args(hint))
    if origin in (Union, types.UnionType):
        return " | ".join(ts_type(arg) for arg in get_args(hint))
    if origin is list:
        inner = ts_type(get_args(hint)[0])
        return f"({inner})[]" if "|" in inner else f"{inner}[]"
    if origin is dict:
        return f"Record<string, {ts_type(get_args(hint)[1])}>"
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return hint.__name__
    return SCALARS[hint]


def alias_value(name: str) -> Any:
    return next(vars(m)[name] for m in (*MODULES, protocol) if name in vars(m))


def dataclasses_of_module() -> list[type[Any]]:
    """Every dataclass of graphbook.events and every other one the protocol uses, module by
    module in the order each defines them (once: `ClientMessage` is `Ping` again)."""
    used = {id(v) for module in WIRE for v in vars(module).values()}
    found = [
        cls
        for module in MODULES
        for cls in vars(module).values()
        if isinstance(cls, type)
        and dataclasses.is_dataclass(cls)
        and cls.__module__ == module.__name__
        and (module in (events, previews) or id(cls) in used)
    ]
    return list(dict.fromkeys(found))


def interface(cls: type[Any]) -> str:
    hints = typing.get_type_hints(cls)
    lines = [f"export interface {cls.__name__} {{"]
    for f in dataclasses.fields(cls):
        defaulted = dataclasses.MISSING not in (f.default, f.default_factory)
        optional = f.name != "type" and defaulted
        lines.append(f"  {f.name}{'?' if optional else ''}: {ts_type(hints[f.name])};")
    lines.append("}")
    return "\n".join(lines)


def names_list(name: str, types_by_name: dict[str, type[Any]]) -> str:
    items = "".join(f"  '{key}',\n" for key in types_by_name)
    return f"export const {name} = [\n{items}] as const;"


def union(name: str, types_by_name: dict[str, type[Any]]) -> str:
    members = "".join(f"\n  | {cls.__name__}" for cls in types_by_name.values())
    return f"export type {name} ={members};"


def generated() -> str:
    aliases = [f"export type {n} = {literal(get_args(alias_value(n)))};" for n in ALIASES]
    parts = [f"export const VERSION = {protocol.VERSION};", "\n".join(aliases), PREVIEW]
    parts += [interface(cls) for cls in dataclasses_of_module()]
    parts.append(union("ServerMessage", protocol.SERVER_TYPES))
    parts.append(union("ClientMessage", protocol.CLIENT_TYPES))
    parts.append(names_list("SERVER_MESSAGE_TYPES", protocol.SERVER_TYPES))
    parts.append(names_list("CLIENT_MESSAGE_TYPES", protocol.CLIENT_TYPES))
    return "\n\n".join(parts)


def current_block(text: str) -> str:
    start, end = text.index(BEGIN) + len(BEGIN), text.index(END)
    return text[start:end].strip()


def write() -> None:
    text = PROTOCOL_TS.read_text(encoding="utf-8")
    start, end = text.index(BEGIN) + len(BEGIN), text.index(END)
    PROTOCOL_TS.write_text(text[:start] + "\n" + generated() + "\n" + text[end:], encoding="utf-8")


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        write()
    else:
        print(generated())
