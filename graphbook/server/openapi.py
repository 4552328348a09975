"""The OpenAPI 3.1 document of the HTTP API: a table of routes (graphbook/server/app.py's
API) and the protocol's dataclasses (graphbook/protocol/) as JSON Schema components.

`graphbook openapi` prints it; a running server answers it at GET /api/openapi.json.
"""

from __future__ import annotations

import inspect
import re
import sys
import types
import typing
from collections.abc import Iterable
from dataclasses import MISSING, dataclass, fields, is_dataclass
from typing import Any, Literal, Union, get_args, get_origin

from aiohttp import web

from graphbook import about
from graphbook import protocol as p
from graphbook.previews import ImagePreview, TensorPreview

Body = type[Any] | dict[str, Any] | None
"""A protocol dataclass, an inline JSON Schema, or nothing."""
REF = "#/components/schemas/"
ERROR_MEANINGS = {
    400: "the request is malformed: bad JSON, a missing or wrong field, a bad path",
    401: "the token is missing or wrong",
    403: "the Host or Origin is not allowed",
    404: "what the path names does not exist",
    409: "it conflicts with what is going on: a run is active, the file changed, it exists",
    413: "the body is too large",
    422: "the workflow cannot run or be read: `problems` names each thing wrong",
    503: "the run store cannot be read or written now",
}
ALWAYS = (400, 401, 403)
"""Errors any route may answer (security and body checks)."""


@dataclass(frozen=True)
class Route:
    """One row of the API table: what a route takes and answers."""

    method: Literal["GET", "POST", "PUT", "PATCH", "DELETE"]
    path: str
    """As aiohttp registers it, with `{name}` parameters (no regular expressions)."""
    summary: str
    request: Body = None
    reply: Body = None
    status: int = 200
    errors: tuple[int, ...] = ()
    query: tuple[str, ...] = ()
    """Query parameters, each `name` or `name: what it is`."""
    media: str = "application/json"
    """The reply's media type (images are `image/png`)."""


OK: dict[str, Any] = {
    "type": "object",
    "properties": {"ok": {"const": True}},
    "required": ["ok"],
}
OBJECT: dict[str, Any] = {"type": "object"}


# -- the protocol's types as JSON Schema -------------------------------------------------------
class Components:
    """The component schemas, each added once, the first time a type refers to it."""

    def __init__(self) -> None:
        self.schemas: dict[str, dict[str, Any]] = {}

    def of(self, hint: Any) -> dict[str, Any]:
        """The JSON Schema of a type hint; a dataclass becomes a `$ref` to its component."""
        if hint is Any:
            return {}
        if ImagePreview in get_args(hint):  # graphbook.previews.Preview, a recursive union
            return self._preview()
        if is_dataclass(hint) and isinstance(hint, type):
            return self._ref(hint)
        simple = _SIMPLE.get(hint)
        if simple is not None:
            return dict(simple)
        return self._generic(hint)

    def _generic(self, hint: Any) -> dict[str, Any]:
        origin, args = get_origin(hint), get_args(hint)
        if origin is Literal:
            return {"const": args[0]} if len(args) == 1 else {"enum": list(args)}
        if origin in (Union, types.UnionType):
            return {"anyOf": [self.of(a) for a in args]}
        if origin is list or origin is tuple:
            return {"type": "array", "items": self.of(args[0]) if args else {}}
        if origin is dict:
            return {"type": "object", "additionalProperties": self.of(args[1])}
        raise TypeError(f"no JSON Schema for {hint!r}; add it to graphbook/server/openapi.py")

    def _preview(self) -> dict[str, Any]:
        ref = {"$ref": REF + "Preview"}
        if "Preview" not in self.schemas:
            self.schemas["Preview"] = {}  # taken before its parts, which refer to it
            self.schemas["Preview"] = {
                "description": "A preview (graphbook/previews.py): an image, a tensor or an "
                "array, or plain JSON holding them.",
                "anyOf": [
                    self._ref(ImagePreview),
                    self._ref(TensorPreview),
                    *({"type": kind} for kind in ("string", "number", "boolean", "null")),
                    {"type": "array", "items": ref},
                    {"type": "object", "additionalProperties": ref},
                ],
            }
        return ref

    def _ref(self, cls: type[Any]) -> dict[str, Any]:
        name = cls.__name__
        if name not in self.schemas:
            self.schemas[name] = {}  # taken before its fields, so a type may refer to itself
            self.schemas[name] = self._object(cls)
        return {"$ref": REF + name}

    def _object(self, cls: type[Any]) -> dict[str, Any]:
        hints = typing.get_type_hints(cls, vars(sys.modules[cls.__module__]))
        properties = {f.name: self.of(hints[f.name]) for f in fields(cls)}
        required = [
            f.name for f in fields(cls) if f.default is MISSING and f.default_factory is MISSING
        ]
        schema: dict[str, Any] = {"type": "object", "properties": properties}
        if required:
            schema["required"] = required
        doc = inspect.getdoc(cls) or ""
        if doc and not re.fullmatch(rf"{cls.__name__}\(.*\)", doc, re.DOTALL):
            schema["description"] = doc
        return schema


_SIMPLE: dict[Any, dict[str, Any]] = {
    str: {"type": "string"},
    bool: {"type": "boolean"},
    int: {"type": "integer"},
    float: {"type": "number"},
    type(None): {"type": "null"},
}


# -- the document ----------------------------------------------------------------------------
def document(routes: Iterable[Route]) -> dict[str, Any]:
    """The OpenAPI 3.1 document of `routes`."""
    components = Components()
    error = components.of(p.ErrorReply)
    paths: dict[str, dict[str, Any]] = {}
    for route in routes:
        operation = _operation(route, components, error)
        paths.setdefault(route.path, {})[route.method.lower()] = operation
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Graphbook",
            "version": about.version(),
            "description": "The Graphbook server's HTTP API (docs/server.md); the websocket "
            f"at /ws speaks protocol version {p.VERSION} (docs/protocol.md).",
        },
        "paths": paths,
        "components": {
            "schemas": dict(sorted(components.schemas.items())),
            "securitySchemes": {"token": {"type": "http", "scheme": "bearer"}},
        },
        "security": [{}, {"token": []}],
    }


def _operation(route: Route, components: Components, error: dict[str, Any]) -> dict[str, Any]:
    responses: dict[str, Any] = {str(route.status): _reply(route, components)}
    for status in sorted({*ALWAYS, *route.errors}):
        responses[str(status)] = {
            "description": ERROR_MEANINGS[status],
            "content": {"application/json": {"schema": error}},
        }
    operation: dict[str, Any] = {
        "operationId": _operation_id(route),
        "summary": route.summary,
        "responses": responses,
    }
    parameters = _parameters(route)
    if parameters:
        operation["parameters"] = parameters
    if route.request is not None:
        operation["requestBody"] = {
            "required": True,
            "content": {"application/json": {"schema": _schema(route.request, components)}},
        }
    return operation


def _reply(route: Route, components: Components) -> dict[str, Any]:
    if route.status == 204 or route.reply is None:
        return {"description": "done, nothing to return"}
    if route.media != "application/json":
        content = {route.media: {"schema": {"type": "string", "contentMediaType": route.media}}}
    else:
        content = {"application/json": {"schema": _schema(route.reply, components)}}
    return {"description": route.summary, "content": content}


def _schema(body: Body, components: Components) -> dict[str, Any]:
    return dict(body) if isinstance(body, dict) else components.of(body)


def _parameters(route: Route) -> list[dict[str, Any]]:
    found = [
        {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}
        for name in re.findall(r"{(\w+)}", route.path)
    ]
    for text in route.query:
        name, _, what = (part.strip() for part in text.partition(":"))
        parameter = {"name": name, "in": "query", "schema": {"type": "string"}}
        found.append(parameter | ({"description": what} if what else {}))
    return found


def _operation_id(route: Route) -> str:
    words = re.sub(r"[{}]", "", route.path.removeprefix("/api/")).replace(".", "_")
    return route.method.lower() + "_" + re.sub(r"[^A-Za-z0-9]+", "_", words).strip("_")


def undocumented(app: web.Application, routes: Iterable[Route]) -> list[str]:
    """The app's routes under /api that have no row in `routes` (`METHOD /path` each)."""
    documented = {(r.method, r.path) for r in routes}
    missing = []
    for route in app.router.routes():
        info = route.resource.get_info() if route.resource is not None else {}
        path = info.get("path") or info.get("formatter") or ""
        api = path.startswith("/api/") and route.method != "HEAD"
        if api and (route.method, path) not in documented:
            missing.append(f"{route.method} {path}")
    return missing
