"""What the pack's steps share: the work each runs in the worker pool (PoolWork; an
unreadable image Skipped when on_error says so), their common parameters, where results go
(ImageItems), images skipped."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from graphbook.lifecycle import BatchStep
from graphbook.nodes.common import (
    Data,
    choice,
    targets,
)
from graphbook.nodes.images.codec import UnreadableImage

if TYPE_CHECKING:
    _Base = BatchStep
else:
    _Base = object


ON_ERROR = ("fail", "skip")


@dataclass(frozen=True)
class Skipped:
    """What a load gives for an image it could not read when on_error is "skip"."""

    reason: str


@dataclass(frozen=True)
class PoolWork:
    """A load_fn: `run(item)` in the worker pool, an unreadable image turned into Skipped
    when `skip` is set (any other error fails the item)."""

    skip: bool

    def __call__(self, item: Any) -> Any:
        try:
            return self.run(item)
        except UnreadableImage as exc:
            if not self.skip:
                raise
            return Skipped(str(exc))

    def run(self, item: Any) -> Any:
        raise NotImplementedError


def common_parameters(batch_size: int = 16) -> dict[str, Any]:
    return {
        "item_key": {
            "type": "string",
            "default": "image",
            "description": "the field holding the image: a path, an image record, or a list "
            "of image records",
        },
        "on_error": {
            "type": "string",
            "default": "fail",
            "description": "an unreadable or missing image: fail (its dict fails; the run "
            "goes on when errors are let through) or skip (dropped, logged, counted)",
        },
        "batch_size": {
            "type": "int",
            "default": batch_size,
            "description": "images gathered before their results are written onto the dicts",
        },
    }


class ImageItems(_Base):
    """What the pack's steps share: the images under `image_key` of a dict, where results
    go, and images skipped (on_error "skip")."""

    image_key: str
    on_error: str
    skipped: int
    _skipped_from: dict[int, list[Data]]

    def setup(self, item_key: str, on_error: str) -> None:
        self.image_key = str(item_key or "image")
        self.on_error = choice(on_error, ON_ERROR, "on_error")
        self.reset()

    def use(self, work: PoolWork) -> None:
        """Run `work` in the pool on each image (the engine reads the instance's load_fn)."""
        self.load_fn = work  # type: ignore[misc]

    @property
    def skip(self) -> bool:
        return self.on_error == "skip"

    def on_start(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.skipped = 0
        self._skipped_from = {}

    def on_data(self, data: Data) -> None:
        targets(data, self.image_key, 1)  # a list of bare paths cannot hold results: say so now

    def holds_list(self, data: Data) -> bool:
        return isinstance(data.get(self.image_key), list | tuple)

    def results(
        self, outputs: list[Any], items: list[Any], data: list[Data]
    ) -> Iterator[tuple[Any, Data]]:
        """(what the pool gave, where it goes) for each image not skipped."""
        for output, item, holder in zip(outputs, items, data, strict=True):
            target = item if self.holds_list(holder) else holder
            if isinstance(output, Skipped):
                self.skipped += 1
                self._skipped_from.setdefault(id(holder), []).append(target)
                self.log(f"skipped: {output.reason}", "warning")
            else:
                yield output, target

    def on_after_item(self, data: Data) -> None:
        dropped = self._skipped_from.get(id(data))
        if dropped and self.holds_list(data):
            kept = [r for r in data[self.image_key] if all(r is not d for d in dropped)]
            data[self.image_key] = kept
            if kept:
                del self._skipped_from[id(data)]

    def route(self, data: Data) -> str | None:
        if self._skipped_from.pop(id(data), None) is not None:
            return None
        return self.Outputs[0]

    def on_end(self) -> None:
        if self.skipped:
            plural = "s" if self.skipped != 1 else ""
            self.log(f"skipped {self.skipped} unreadable image{plural}", "warning")
