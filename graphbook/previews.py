"""The preview value, defined once: what a picture of a node's output (or of a log message, or of
the item a node failed on) is on every wire. A preview is plain JSON (text cut, containers
bounded) in which an image, a tensor or an array is one of the typed values below.

The engine makes them (engine/preview.py's walk), the server gives images their URLs
(server/previews.py), the protocol carries them (`NodeOutput.preview`, ...), web/src/protocol.ts
is generated from them (tests/web/protocol_ts.py) and web/src/preview.ts reads them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Union


@dataclass(frozen=True)
class ImagePreview:
    """An image: one a node made in memory (`size`, `mode`; its `url` serves it as PNG, encoded
    when it is first asked for), or an image record's file (`{"type": "image", "value": PATH,
    ...}`: `value` its path, `fields` the record's other fields, previewed)."""

    url: str | None = None
    """The full image; null when it is not served (`outside` says why, or nothing serves it)."""
    thumb: str | None = None
    """A small picture the server makes of an image file wherever it lies."""
    outside: str | None = None
    """Why the full image is not served (it lies outside the server's folders)."""
    size: list[int] | None = None
    """[width, height] of an image in memory."""
    mode: str | None = None
    """Its pixel format (RGB, L, ...), of an image in memory."""
    value: str | None = None
    """The image file's path, of an image record."""
    fields: dict[str, Preview] = field(default_factory=dict)
    """The image record's other fields (label, ...), previewed."""
    type: Literal["image"] = "image"


@dataclass(frozen=True)
class TensorPreview:
    """A torch tensor (`type` tensor, with its `device`) or a numpy array (`array`), summarised:
    shape, element type, and for numbers the smallest, largest and mean values (text for NaN
    and infinities)."""

    type: Literal["tensor", "array"]
    shape: list[int]
    dtype: str
    device: str | None = None
    min: float | str | None = None
    max: float | str | None = None
    mean: float | str | None = None


Preview = Union[  # noqa: UP007 (a recursive alias must be written this way to be evaluated)
    ImagePreview,
    TensorPreview,
    str,
    int,
    float,
    bool,
    None,
    list["Preview"],
    dict[str, "Preview"],
]
"""A preview: an image, a tensor or an array, or plain JSON holding them."""

KINDS: dict[str, type[ImagePreview] | type[TensorPreview]] = {
    "image": ImagePreview,
    "tensor": TensorPreview,
    "array": TensorPreview,
}
"""The typed previews by their `type`: a JSON object of one of these types, with only its
fields, is read back as that preview (protocol's decode); any other object stays a dict."""
