"""Exact duplicates: dicts with equal fields (DeduplicateExact), files with equal bytes
(DeduplicateFiles); what the file-reading dedup nodes share (unreadable files, verdicts)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from graphbook.lifecycle import BatchStep, Step
from graphbook.nodes.common import (
    Data,
    NodeInputError,
    choice,
    image_path,
    plain_row,
    plain_value,
)
from graphbook.nodes.curation import CATEGORY
from graphbook.nodes.curation.fields import field_of, strings

ON_ERROR = {
    "type": "string",
    "default": "fail",
    "description": "an unreadable file: fail (the dict fails, the run stops unless told to "
    "go on) or skip (drop the dict, log it and count it)",
}


def one_item(data: Data, key: str, node: str) -> None:
    """Refuse a list under `key`: the dedup nodes decide per dict, so one file per dict."""
    value = field_of(data, key, "item_key")
    if isinstance(value, list | tuple):
        raise NodeInputError(
            f"{node} compares one file per dict, but {key!r} holds a list of {len(value)}; "
            "send one image per dict (the sources' default)"
        )


class DeduplicateExact(Step):
    """Sends the first dict of each kind to `unique` and later equal ones to `duplicate`.

    Equal means the same values in `fields` (compared as JSON: an image record by its path),
    or, with `fields` empty, the same whole dict. A duplicate gets `duplicate_of`: the first
    one's value of `fields` (one field: its value; several: a list), or with `fields` empty
    its position in the input (0 for the first dict).

    To find files with the same bytes under different names, use DeduplicateFiles. Memory:
    a 16-byte digest and the `duplicate_of` value per unique dict.

    Example: fields `["url"]` to keep one row per URL.
    """

    Parameters: ClassVar[dict[str, Any]] = {
        "fields": {
            "type": "list[string]",
            "default": [],
            "description": "the fields to compare; empty: the whole dict",
        },
    }
    Outputs: ClassVar[list[str]] = ["unique", "duplicate"]
    Category: ClassVar[str] = CATEGORY
    fields: list[str]

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.fields = strings(getattr(self, "fields", []), "fields")
        self.on_start()

    def on_start(self) -> None:
        self.first: dict[bytes, Any] = {}
        self.seen = 0

    def route(self, data: Data) -> str:
        index, self.seen = self.seen, self.seen + 1
        if self.fields:
            values = [plain_value(field_of(data, f, "fields")) for f in self.fields]
            key: Any = values
            ident: Any = values[0] if len(values) == 1 else values
        else:
            key, ident = plain_row(data), index
        text = json.dumps(key, sort_keys=True, default=str)
        digest = hashlib.blake2b(text.encode(), digest_size=16).digest()
        if digest in self.first:
            data["duplicate_of"] = self.first[digest]
            return "duplicate"
        self.first[digest] = ident
        return "unique"


@dataclass(frozen=True)
class Unreadable:
    """What a loader in the worker pool gives back for a file it could not read (on_error
    skip): the file and why."""

    path: str
    reason: str


def unreadable(path: str, exc: Exception, on_error: str) -> Unreadable:
    if on_error == "skip":
        return Unreadable(path, f"{type(exc).__name__}: {exc}")
    raise NodeInputError(
        f"cannot read {path}: {type(exc).__name__}: {exc}; fix or remove the file, or set "
        "on_error to skip"
    ) from exc


@dataclass(frozen=True)
class FileDigest:
    """Runs in the worker pool: the SHA-256 (hex) of the bytes of the file an item names."""

    on_error: str = "fail"

    def __call__(self, item: Any) -> str | Unreadable:
        path = image_path(item)
        digest = hashlib.sha256()
        try:
            with open(path, "rb") as file:
                while block := file.read(1 << 20):
                    digest.update(block)
        except OSError as exc:
            return unreadable(path, exc, self.on_error)
        return digest.hexdigest()


class Verdicts:
    """Where each dict of a file-reading dedup node goes: decided when its batch comes back,
    taken when it is routed. Unreadable files (on_error skip) are dropped, logged, counted."""

    def __init__(self, step: Step) -> None:
        self.step = step
        self.outputs: dict[int, str | None] = {}
        self.skipped = 0

    def decide(
        self,
        loaded: list[Any],
        items: list[Any],
        data: list[Data],
        decide: Callable[[Any, str, Data], str],
    ) -> None:
        for value, item, owner in zip(loaded, items, data, strict=True):
            if isinstance(value, Unreadable):
                self.skipped += 1
                self.step.log(f"skipped {value.path}: {value.reason}", "warning")
                self.outputs[id(owner)] = None
            else:
                self.outputs[id(owner)] = decide(value, image_path(item), owner)

    def take(self, data: Data) -> str | None:
        return self.outputs.pop(id(data), None)

    def report(self) -> None:
        if self.skipped:
            self.step.log(f"skipped {self.skipped} unreadable files", "warning")


def dedup_params(step: BatchStep, on_error: str) -> None:
    choice(on_error, ("fail", "skip"), "on_error")
    if not step.item_key:
        raise NodeInputError("item_key is empty; set it to the field that holds the file")


class DeduplicateFiles(BatchStep):
    """Finds files with the same bytes: the first dict whose file has given content goes to
    `unique`, later ones with the same bytes (under any name) to `duplicate`.

    The file is the image record or path under `item_key`; it is read and hashed (SHA-256) in
    the worker pool. Every dict gets `sha256` (hex); a duplicate gets `duplicate_of`, the path
    of the first file with those bytes. An unreadable file fails its dict, or with on_error
    skip is dropped, logged and counted.

    For images that look the same but differ in bytes (resized, re-encoded), use
    DeduplicateImages.
    """

    Parameters: ClassVar[dict[str, Any]] = {
        "item_key": {
            "type": "string",
            "default": "image",
            "description": "the field holding the file: an image record or a path",
        },
        "batch_size": {"type": "int", "default": 32, "description": "files per batch"},
        "on_error": ON_ERROR,
    }
    Outputs: ClassVar[list[str]] = ["unique", "duplicate"]
    Category: ClassVar[str] = CATEGORY
    on_error: str = "fail"

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        dedup_params(self, self.on_error)
        self.load_fn = FileDigest(self.on_error)  # type: ignore[misc]
        self.on_start()

    def on_start(self) -> None:
        self.verdicts = Verdicts(self)
        self.first: dict[str, str] = {}

    def on_data(self, data: Data) -> None:
        one_item(data, str(self.item_key), "DeduplicateFiles")

    def on_item_batch(self, outputs: list[Any], items: list[Any], data: list[Data]) -> None:
        self.verdicts.decide(outputs, items, data, self.decide)

    def decide(self, digest: str, path: str, data: Data) -> str:
        data["sha256"] = digest
        if digest not in self.first:
            self.first[digest] = path
            return "unique"
        data["duplicate_of"] = self.first[digest]
        return "duplicate"

    def route(self, data: Data) -> str | None:
        return self.verdicts.take(data)

    def on_end(self) -> None:
        self.verdicts.report()
