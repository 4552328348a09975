"""The protocol module: every message round-trips, bad ones are refused clearly, and the docs
and the TypeScript mirror name every message type."""

from __future__ import annotations

import re
import typing
from dataclasses import fields
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin

import pytest

from graphbook import protocol as p

ROOT = Path(__file__).resolve().parents[2]
PREVIEW: p.Preview = {
    "image": p.ImagePreview("/api/media/mem/ab12", size=[2, 2], mode="RGB"),
    "file": p.ImagePreview(None, "/api/media/thumb?x", "outside", value="a.png", fields={"n": 1}),
    "batch": [p.TensorPreview("tensor", [3], "float32", "cpu", 0.0, "nan", 0.5), "text", None],
    "looks like one": {"type": "image", "value": "b.png", "label": "cat"},
}
"""A preview holding each typed preview, and a node's dict that only looks like one."""


def sample(hint: Any) -> Any:
    """A value of the type `hint` (dataclasses filled in field by field)."""
    origin = get_origin(hint)
    if p.ImagePreview in get_args(hint):
        return PREVIEW
    if origin is Literal:
        return get_args(hint)[0]
    if origin is list:
        return [sample(get_args(hint)[0])]
    if origin is dict:
        return {"k": sample(get_args(hint)[1])}
    if origin is Union or str(origin) == "<class 'types.UnionType'>":
        return sample(next(a for a in get_args(hint) if a is not type(None)))
    if isinstance(hint, type) and hasattr(hint, "__dataclass_fields__"):
        hints = typing.get_type_hints(hint)
        given = {f.name: sample(hints[f.name]) for f in fields(hint)}
        if get_origin(hints.get("type")) is Literal:  # a message's tag keeps its default
            del given["type"]
        return hint(**given)
    return {str: "s", int: 3, float: 1.5, bool: True}.get(hint, {"any": [1, "two"]})


@pytest.mark.parametrize("name", sorted(p.SERVER_TYPES))
def test_server_messages_round_trip(name: str) -> None:
    message = sample(p.SERVER_TYPES[name])
    assert p.decode_server(p.encode(message)) == message


def test_previews_come_back_typed() -> None:
    """An image or a tensor in a preview is read back as its typed preview; a dict of a node's
    with fields of its own stays a dict, whole."""
    message = p.NodeOutput("r", "n", "out", 0, PREVIEW)
    read = p.decode_server(p.encode(message))
    assert read == message and isinstance(read, p.NodeOutput) and isinstance(read.preview, dict)
    assert isinstance(read.preview["image"], p.ImagePreview)
    assert read.preview["looks like one"] == {"type": "image", "value": "b.png", "label": "cat"}


@pytest.mark.parametrize("name", sorted(p.CLIENT_TYPES))
def test_client_messages_round_trip(name: str) -> None:
    message = sample(p.CLIENT_TYPES[name])
    assert p.decode_client(p.encode(message)) == message


@pytest.mark.parametrize(
    ("text", "code", "words"),
    [
        ("{", "bad_json", "JSON"),
        ("[]", "bad_message", "object"),
        ('{"type": "fly"}', "unknown_type", "unknown message type 'fly'"),
        ('{"type": "ping", "ref": false}', "bad_message", "ping.ref"),
        ('{"type": "run", "workflow": "w.json"}', "unknown_type", "use POST /api/runs (HTTP)"),
        ('{"type": "stop"}', "unknown_type", "use POST /api/runs/current/stop"),
        ('{"type": "answer", "answer": 1}', "unknown_type", "POST /api/prompts/{prompt_id}"),
    ],
)
def test_bad_messages_say_what_is_wrong(text: str, code: str, words: str) -> None:
    with pytest.raises(p.ProtocolError) as error:
        p.decode_client(text)
    assert error.value.code == code and words in error.value.message


def test_non_finite_numbers_travel_as_text() -> None:
    message = p.NodeProgress("r", "n", 1, {}, float("inf"))
    assert '"rate": "inf"' in p.encode(message)


def test_the_docs_show_every_message() -> None:
    text = (ROOT / "docs" / "protocol.md").read_text()
    missing = [t for t in [*p.SERVER_TYPES, *p.CLIENT_TYPES] if f'"type": "{t}"' not in text]
    assert not missing, f"docs/protocol.md has no example of: {missing}"


def test_the_typescript_mirror_names_every_message() -> None:
    mirror = ROOT / "web" / "src" / "protocol.ts"
    if not mirror.exists():
        pytest.skip("web/src/protocol.ts is not written yet")
    literals = set(re.findall(r"""type:\s*["']([a-z_]+)["']""", mirror.read_text()))
    missing = sorted((set(p.SERVER_TYPES) | set(p.CLIENT_TYPES)) - literals)
    assert not missing, f"web/src/protocol.ts lacks message types: {missing}"
    assert f"VERSION = {p.VERSION}" in mirror.read_text().replace("PROTOCOL_VERSION", "VERSION")
