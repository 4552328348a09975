"""Curation: filter by expression, route by field, limit, sample, split, exact and near-duplicate
removal, field edits.

Every node here changes only the dict it hands on (the fields its docstring names), never a
file. Where randomness is involved it comes from the node's `seed`, so a run is repeatable.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from graphbook.lifecycle import BatchStep, Step
from graphbook.nodes.common import (
    Data,
    Expression,
    NodeInputError,
    choice,
    image_path,
    plain_row,
    plain_value,
)

if TYPE_CHECKING:
    import numpy as np
    from PIL import Image

CATEGORY = "Curation"
ON_ERROR = {
    "type": "string",
    "default": "fail",
    "description": "an unreadable file: fail (the dict fails, the run stops unless told to "
    "go on) or skip (drop the dict, log it and count it)",
}


# -- shared helpers ---------------------------------------------------------------------------
def field_text(value: Any) -> str:
    """A field's value as text: text as it is, an image record as its path, anything else as
    JSON (`1`, `2.5`, `true`, `null`, `["a", "b"]`)."""
    plain = plain_value(value)
    return plain if isinstance(plain, str) else json.dumps(plain, sort_keys=True, default=str)


def field_of(data: Data, name: str, what: str = "field") -> Any:
    """`data[name]`, or an error naming the field, the dict's fields and the parameter to fix."""
    try:
        return data[name]
    except KeyError:
        raise NodeInputError(
            f"the dict has no field {name!r} (fields: {', '.join(map(repr, data)) or 'none'}); "
            f"fix the {what} parameter"
        ) from None


def evaluate(expression: Expression, data: Data) -> Any:
    """The expression's value on `data`; any failure names the expression."""
    try:
        return expression(data)
    except NodeInputError:
        raise
    except Exception as exc:
        raise NodeInputError(
            f"{expression.text!r} failed on this dict: {type(exc).__name__}: {exc}"
        ) from exc


def strings(value: Any, what: str) -> list[str]:
    """A list[string] parameter; one text is a list of one."""
    if value is None:
        return []
    if isinstance(value, str):
        return [value] if value.strip() else []
    if not isinstance(value, list | tuple):
        raise NodeInputError(f"{what} must be a list of field names, got {value!r:.80}")
    return [str(v) for v in value]


def fraction(value: Any, what: str) -> float:
    number = float(value)
    if not 0.0 <= number <= 1.0:
        raise NodeInputError(f"{what} is {number}; it is a share of the dicts, from 0 to 1")
    return number


def unit_hash(seed: int, text: str) -> float:
    """A number in [0, 1) fixed by the seed and the text (the same on every machine)."""
    digest = hashlib.sha256(f"{seed}\0{text}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def one_item(data: Data, key: str, node: str) -> None:
    """Refuse a list under `key`: the dedup nodes decide per dict, so one file per dict."""
    value = field_of(data, key, "item_key")
    if isinstance(value, list | tuple):
        raise NodeInputError(
            f"{node} compares one file per dict, but {key!r} holds a list of {len(value)}; "
            "send one image per dict (the sources' default)"
        )


# -- filter, route, limit ---------------------------------------------------------------------
class Filter(Step):
    """Sends each dict to `keep` when a Python expression over its fields is true, else to
    `drop`.

    The dict's fields are names in the expression, and the whole dict is `data` (for a field
    whose name is not a Python name: `data["my-field"]`). The expression is checked when the
    run starts, before any data flows; a field the dict lacks is an error that names it and
    lists the dict's fields.

    Example: `confidence >= 0.8 and label != "cat"`, or `width * height > 640 * 480`.
    Adds no fields.
    """

    Parameters: ClassVar[dict[str, Any]] = {
        "expression": {
            "type": "string",
            "required": True,
            "expression": True,
            "description": "a Python expression over the fields, e.g. confidence >= 0.8 and "
            'label != "cat"',
        },
    }
    Outputs: ClassVar[list[str]] = ["keep", "drop"]
    Category: ClassVar[str] = CATEGORY
    expression: str

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.test = Expression(self.expression)

    def route(self, data: Data) -> str:
        return "keep" if evaluate(self.test, data) else "drop"


class RouteByField(Step):
    """Sends a dict to `match` when its `field`, as text, is one of `values`, else to `other`.

    As text means: text as it is, an image record as its path, numbers and booleans as JSON
    writes them (`3`, `0.5`, `true`). A dict without the field fails (an error naming the
    field) unless `missing` is "other", which sends it to `other`.

    Example: field `label`, values `["cat", "dog"]`: cats and dogs to `match`, the rest to
    `other`. Adds no fields.
    """

    Parameters: ClassVar[dict[str, Any]] = {
        "field": {"type": "string", "required": True, "description": "the field to look at"},
        "values": {
            "type": "list[string]",
            "default": [],
            "description": "the values (as text) that go to match",
        },
        "missing": {
            "type": "string",
            "default": "fail",
            "description": "a dict without the field: fail, or other (send it to other)",
        },
    }
    Outputs: ClassVar[list[str]] = ["match", "other"]
    Category: ClassVar[str] = CATEGORY
    field: str
    values: list[str]
    missing: str = "fail"

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        if not str(self.field).strip():
            raise NodeInputError("field is empty; set it to the field to route by")
        self.wanted = set(strings(self.values, "values"))
        choice(self.missing, ("fail", "other"), "missing")

    def route(self, data: Data) -> str:
        if self.field not in data and self.missing == "other":
            return "other"
        return "match" if field_text(field_of(data, self.field)) in self.wanted else "other"


class Limit(Step):
    """Hands on the first `count` dicts of the run and drops the rest.

    The source upstream still reads to its end (the engine pulls a source until it is done,
    whatever happens downstream), but the dicts past `count` stop here at once. To stop
    reading early as well, use the source's own `limit` parameter where it has one.

    Adds no fields. Example: count 100 to try a pipeline on the first 100 images.
    """

    Parameters: ClassVar[dict[str, Any]] = {
        "count": {"type": "int", "default": 10, "description": "how many dicts to hand on"},
    }
    Category: ClassVar[str] = CATEGORY
    count: int = 10
    seen = 0

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        if int(self.count) < 0:
            raise NodeInputError(f"count is {self.count}; it must be 0 or more")

    def on_start(self) -> None:
        self.seen = 0

    def route(self, data: Data) -> str | None:
        self.seen += 1
        return "out" if self.seen <= self.count else None


# -- sampling and splits ----------------------------------------------------------------------
class Sample(Step):
    """A random sample of the dicts, the same every run with the same `seed` and input order:
    a `fraction` of them (each dict kept with that chance, handed on at once), or, when `count`
    is above 0, exactly `count` of them (reservoir sampling: every dict has the same chance).

    Those not chosen go to `rest`. With `count`, the chosen are handed on only after the last
    dict has come (until then any of them may be replaced), in their input order: the node
    holds up to `count` dicts in memory.

    Adds no fields. Example: count 200 to pick 200 images to label; fraction 0.1 for a tenth.
    """

    Parameters: ClassVar[dict[str, Any]] = {
        "fraction": {
            "type": "float",
            "default": 0.1,
            "description": "the share of dicts to keep, 0 to 1 (used when count is 0)",
        },
        "count": {
            "type": "int",
            "default": 0,
            "description": "keep exactly this many (reservoir sampling); 0 uses fraction",
        },
        "seed": {"type": "int", "default": 0, "description": "seed of the random choice"},
    }
    Outputs: ClassVar[list[str]] = ["out", "rest"]
    Category: ClassVar[str] = CATEGORY
    fraction: float = 0.1
    count: int = 0
    seed: int = 0

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.fraction = fraction(self.fraction, "fraction")
        if int(self.count) < 0:
            raise NodeInputError(f"count is {self.count}; it must be 0 (use fraction) or more")
        self.on_start()

    def on_start(self) -> None:
        self.rng = random.Random(self.seed)
        self.seen = 0
        self.reservoir: list[tuple[int, Data]] = []

    def route(self, data: Data) -> str | dict[str, list[Data]] | None:
        if self.count <= 0:
            return "out" if self.rng.random() < self.fraction else "rest"
        index, self.seen = self.seen, self.seen + 1
        if len(self.reservoir) < self.count:
            self.reservoir.append((index, data))
            return None
        slot = self.rng.randrange(index + 1)
        if slot >= self.count:
            return "rest"
        replaced = self.reservoir[slot][1]
        self.reservoir[slot] = (index, data)
        return {"rest": [replaced]}

    def flush(self) -> dict[str, list[Data]] | None:
        chosen = [data for _, data in sorted(self.reservoir, key=lambda pair: pair[0])]
        self.reservoir = []
        return {"out": chosen} if chosen else None


class RandomSplit(Step):
    """Splits the dicts at random into `train`, `val` and `test`: `val_fraction` of them to
    `val`, `test_fraction` to `test`, the rest to `train`.

    Repeatable: with `by` empty, the choice follows the input order and the `seed`, and the
    shares are exact: after any n dicts, `val` holds n x val_fraction of them give or take one
    (which ones is random); with `by` naming a field (an id, a file name), each dict's side is
    a hash of that field's value and the seed, so a dict lands on the same side however the
    data is ordered or grows (and raising a fraction only moves dicts into that side), and
    the shares are right on average. Hashing an image's full path ties the split to where the
    folder is: hash a field that names the image wherever it lies.

    Adds no fields. Example: val_fraction 0.1, test_fraction 0.1, by `image`.
    """

    Parameters: ClassVar[dict[str, Any]] = {
        "val_fraction": {"type": "float", "default": 0.2, "description": "share to val, 0 to 1"},
        "test_fraction": {"type": "float", "default": 0.0, "description": "share to test"},
        "seed": {"type": "int", "default": 0, "description": "seed of the split"},
        "by": {
            "type": "string",
            "default": "",
            "description": "a field whose value decides the side (stable when the order "
            "changes); empty: by input order",
        },
    }
    Outputs: ClassVar[list[str]] = ["train", "val", "test"]
    Category: ClassVar[str] = CATEGORY
    val_fraction: float = 0.2
    test_fraction: float = 0.0
    seed: int = 0
    by: str = ""

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.val_fraction = fraction(self.val_fraction, "val_fraction")
        self.test_fraction = fraction(self.test_fraction, "test_fraction")
        if self.val_fraction + self.test_fraction > 1.0:
            raise NodeInputError(
                f"val_fraction {self.val_fraction} and test_fraction {self.test_fraction} add "
                "up to more than 1; lower them"
            )
        self.on_start()

    def on_start(self) -> None:
        self.rng = random.Random(self.seed)
        self.dealt = {"train": 0, "val": 0, "test": 0}

    def route(self, data: Data) -> str:
        if self.by:
            draw = unit_hash(self.seed, field_text(field_of(data, self.by, "by")))
            val, test = self.val_fraction, self.test_fraction
        else:
            draw, (val, test) = self.rng.random(), self._behind()
        side = "val" if draw < val else "test" if draw < val + test else "train"
        self.dealt[side] += 1
        return side

    def _behind(self) -> tuple[float, float]:
        """How far val and test are behind their shares once this dict is dealt, as the
        chances to deal it to them: a side due a dict gets it for sure, one ahead gets none."""
        seen = sum(self.dealt.values()) + 1
        val = min(1.0, max(0.0, seen * self.val_fraction - self.dealt["val"]))
        test = min(1.0 - val, max(0.0, seen * self.test_fraction - self.dealt["test"]))
        return val, test


# -- exact duplicates -------------------------------------------------------------------------
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


# -- near-duplicate images --------------------------------------------------------------------
HASH_BITS = 64
MAX_DISTANCE = 32


def small_grey(image: Image.Image) -> Image.Image:
    """The image shrunk to 9x8 grey (JPEGs decoded at 1/2 .. 1/8 of their size: much faster)."""
    from PIL import Image

    image.draft("L", (9 * 4, 8 * 4))
    return image.convert("L").resize((9, 8), Image.Resampling.BOX)


def dhash(grey: Image.Image) -> int:
    """The 64-bit difference hash of a 9x8 grey image: one bit per pair of neighbours in a
    row (1 where the left one is brighter). Resizing, re-encoding and small colour changes
    flip few bits; a different picture flips about half."""
    pixels = grey.tobytes()
    bits = 0
    for row in range(8):
        for col in range(8):
            left, right = pixels[row * 9 + col], pixels[row * 9 + col + 1]
            bits = (bits << 1) | (left > right)
    return bits


@dataclass(frozen=True)
class ImageHasher:
    """Runs in the worker pool: the dHash of the image an item names."""

    on_error: str = "fail"

    def __call__(self, item: Any) -> int | Unreadable:
        from PIL import Image

        path = image_path(item)
        try:
            with Image.open(path) as image:
                grey = small_grey(image)
        except Exception as exc:  # PIL raises many kinds for a bad file: all mean unreadable
            return unreadable(path, exc, self.on_error)
        return dhash(grey)


class HammingIndex:
    """64-bit hashes, searchable for the nearest within `max_distance` bits without comparing
    against them all (multi-index hashing).

    The bits are cut into `max_distance + 1` bands. Two hashes that differ in at most
    `max_distance` bits agree exactly on at least one band (pigeonhole), so only the entries
    sharing a band with the query are compared: for n random-looking hashes about
    n / 2**(64 / bands) per band and query (at max_distance 4, 13-bit bands: ~40 per query
    among 100,000, against 100,000 for a scan). Bands get short as `max_distance` grows, so
    lookups slow down beyond ~10. `comparisons` counts the Hamming distances computed.
    """

    def __init__(self, max_distance: int) -> None:
        if not 0 <= max_distance <= MAX_DISTANCE:
            raise NodeInputError(
                f"max_distance is {max_distance}; use 0 to {MAX_DISTANCE} bits of {HASH_BITS} "
                "(0: the same hash, 4: near-identical, 10: similar)"
            )
        self.max_distance = max_distance
        bands = max_distance + 1
        widths = [HASH_BITS // bands + (i < HASH_BITS % bands) for i in range(bands)]
        starts = [sum(widths[:i]) for i in range(bands)]
        self.bands = [
            (start, (1 << width) - 1) for start, width in zip(starts, widths, strict=True)
        ]
        self.tables: list[dict[int, list[int]]] = [{} for _ in self.bands]
        self.hashes: list[int] = []
        self.values: list[Any] = []
        self.comparisons = 0

    def __len__(self) -> int:
        return len(self.hashes)

    def add(self, hashed: int, value: Any) -> None:
        index = len(self.hashes)
        self.hashes.append(hashed)
        self.values.append(value)
        for table, (shift, mask) in zip(self.tables, self.bands, strict=True):
            table.setdefault((hashed >> shift) & mask, []).append(index)

    def nearest(self, hashed: int) -> tuple[Any, int] | None:
        """The value of the nearest hash within max_distance (the first added on a tie), and
        the distance; None when there is none."""
        seen: set[int] = set()
        best: tuple[int, int] | None = None
        for table, (shift, mask) in zip(self.tables, self.bands, strict=True):
            for index in table.get((hashed >> shift) & mask, ()):
                if index in seen:
                    continue
                seen.add(index)
                self.comparisons += 1
                distance = (self.hashes[index] ^ hashed).bit_count()
                if distance <= self.max_distance and (best is None or (distance, index) < best):
                    best = (distance, index)
        return None if best is None else (self.values[best[1]], best[0])


class DeduplicateImages(BatchStep):
    """Finds near-duplicate images (resized, re-encoded, lightly edited copies): the first image
    seen of a look goes to `unique`, later ones within `max_distance` of a kept image to
    `duplicate`.

    Each image is decoded small in the worker pool (JPEGs at reduced size with PIL's draft
    mode), shrunk to 9x8 grey and hashed: a 64-bit difference hash (dHash), one bit per pair
    of neighbouring pixels. `max_distance` is how many of the 64 bits may differ: 0 finds
    only the same picture, 4 (the default) resized and re-compressed copies, about 10
    similar pictures too; two unrelated pictures differ in about 32. Lookup is by
    multi-index hashing (see HammingIndex): tens of comparisons per image among 100,000.

    Every dict gets `phash` (the hash, 16 hex digits); a duplicate gets `duplicate_of` (the
    path of the nearest kept image) and `distance` (bits). Duplicates are compared with kept
    images only. An unreadable image fails its dict, naming the file, or with on_error skip
    is dropped, logged and counted.
    """

    Parameters: ClassVar[dict[str, Any]] = {
        "item_key": {
            "type": "string",
            "default": "image",
            "description": "the field holding the image: an image record or a path",
        },
        "max_distance": {
            "type": "int",
            "default": 4,
            "description": "how many of the hash's 64 bits may differ for a duplicate",
        },
        "batch_size": {"type": "int", "default": 64, "description": "images per batch"},
        "on_error": ON_ERROR,
    }
    Outputs: ClassVar[list[str]] = ["unique", "duplicate"]
    Category: ClassVar[str] = CATEGORY
    max_distance: int = 4
    on_error: str = "fail"

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        dedup_params(self, self.on_error)
        self.load_fn = ImageHasher(self.on_error)  # type: ignore[misc]
        self.on_start()  # a bad max_distance is refused here, before data flows

    def on_start(self) -> None:
        self.verdicts = Verdicts(self)
        self.index = HammingIndex(int(self.max_distance))

    def on_data(self, data: Data) -> None:
        one_item(data, str(self.item_key), "DeduplicateImages")

    def on_item_batch(self, outputs: list[Any], items: list[Any], data: list[Data]) -> None:
        self.verdicts.decide(outputs, items, data, self.decide)

    def decide(self, hashed: int, path: str, data: Data) -> str:
        data["phash"] = f"{hashed:016x}"
        found = self.index.nearest(hashed)
        if found is None:
            self.index.add(hashed, path)
            return "unique"
        data["duplicate_of"], data["distance"] = found
        return "duplicate"

    def route(self, data: Data) -> str | None:
        return self.verdicts.take(data)

    def on_end(self) -> None:
        self.verdicts.report()


# -- near-duplicate embeddings ----------------------------------------------------------------
class KeptVectors:
    """Unit vectors kept so far, in a matrix that grows by doubling; cosine lookups are matrix
    products over chunks of rows."""

    CHUNK_ROWS = 16384

    def __init__(self) -> None:
        self.matrix: np.ndarray[Any, Any] | None = None
        self.size = 0

    def best(self, unit: np.ndarray[Any, Any]) -> tuple[int, float] | None:
        """The row most similar to `unit` and its cosine similarity; None when empty."""
        if self.matrix is None or self.size == 0:
            return None
        best: tuple[int, float] | None = None
        for start in range(0, self.size, self.CHUNK_ROWS):
            sims = self.matrix[start : min(self.size, start + self.CHUNK_ROWS)] @ unit
            row = int(sims.argmax())
            if best is None or float(sims[row]) > best[1]:
                best = (start + row, float(sims[row]))
        return best

    def add(self, unit: np.ndarray[Any, Any]) -> None:
        import numpy as np

        if self.matrix is None:
            self.matrix = np.empty((64, unit.shape[0]), dtype=np.float32)
        elif self.size == self.matrix.shape[0]:
            grown = np.empty((2 * self.size, unit.shape[0]), dtype=np.float32)
            grown[: self.size] = self.matrix
            self.matrix = grown
        self.matrix[self.size] = unit
        self.size += 1


def unit_vector(value: Any, field: str, dims: int | None) -> np.ndarray[Any, Any]:
    """The value as a unit float32 vector of `dims` values (any when None), or a clear error."""
    import numpy as np

    if hasattr(value, "detach"):  # a torch tensor
        value = value.detach().cpu().numpy()
    try:
        vector = np.asarray(value, dtype=np.float32)
    except (TypeError, ValueError):
        raise NodeInputError(
            f"{field!r} is not a vector of numbers ({type(value).__name__}: {value!r:.60})"
        ) from None
    if vector.ndim == 2 and vector.shape[0] == 1:
        vector = vector[0]
    if vector.ndim != 1 or vector.size == 0:
        raise NodeInputError(f"{field!r} has shape {vector.shape}; it must be one vector")
    if dims is not None and vector.shape[0] != dims:
        raise NodeInputError(
            f"{field!r} has {vector.shape[0]} values, but the first dict's had {dims}; all "
            "vectors must come from the same model"
        )
    norm = float(np.linalg.norm(vector))
    if not np.isfinite(norm) or norm == 0.0:
        raise NodeInputError(f"{field!r} is all zeros or holds NaN/inf; it has no direction")
    unit: np.ndarray[Any, Any] = vector / norm
    return unit


class DeduplicateEmbeddings(Step):
    """Finds near-duplicates by their embeddings: a dict whose vector has cosine similarity of
    at least `threshold` with a kept dict's goes to `duplicate`, else it is kept (`unique`).

    The vector is the `field` (a list of numbers, a numpy array or a tensor; all of one
    length). A duplicate gets `duplicate_of` (the most similar kept dict's `id_field`; an
    image record shows as its path) and `similarity`. Duplicates are compared with kept dicts
    only. Each dict is compared with all kept ones at once (numpy, in chunks): fine for tens
    of thousands of kept dicts; memory is one float32 row per kept dict.

    Example: after an Embed step, threshold 0.95 drops images that the model sees as the same.
    """

    Parameters: ClassVar[dict[str, Any]] = {
        "field": {"type": "string", "default": "embedding", "description": "the vector field"},
        "threshold": {
            "type": "float",
            "default": 0.95,
            "description": "cosine similarity (-1 to 1) at or above which a dict is a duplicate",
        },
        "id_field": {
            "type": "string",
            "default": "image",
            "description": "the field that names a dict, given as duplicate_of",
        },
    }
    Outputs: ClassVar[list[str]] = ["unique", "duplicate"]
    Category: ClassVar[str] = CATEGORY
    field: str = "embedding"
    threshold: float = 0.95
    id_field: str = "image"

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.threshold = float(self.threshold)
        if not -1.0 <= self.threshold <= 1.0:
            raise NodeInputError(f"threshold is {self.threshold}; a cosine is from -1 to 1")
        self.on_start()

    def on_start(self) -> None:
        self.kept = KeptVectors()
        self.ids: list[Any] = []
        self.dims: int | None = None

    def route(self, data: Data) -> str:
        unit = unit_vector(field_of(data, self.field, "field"), self.field, self.dims)
        ident = plain_value(field_of(data, self.id_field, "id_field"))
        self.dims = unit.shape[0]
        found = self.kept.best(unit)
        if found is not None and found[1] >= self.threshold:
            data["duplicate_of"] = self.ids[found[0]]
            data["similarity"] = round(found[1], 6)
            return "duplicate"
        self.kept.add(unit)
        self.ids.append(ident)
        return "unique"


# -- field edits ------------------------------------------------------------------------------
class SetField(Step):
    """Sets `field` on each dict to the value of a Python expression over its fields (as in
    Filter: the fields are names, the whole dict is `data`).

    Examples: `label.upper()`, `confidence * 100`, `"reviewed"` (text needs its quotes),
    `width / height`. Adds (or replaces) `field`.
    """

    Parameters: ClassVar[dict[str, Any]] = {
        "field": {"type": "string", "required": True, "description": "the field to set"},
        "value": {
            "type": "string",
            "required": True,
            "expression": True,
            "description": 'a Python expression, e.g. label.upper() or "fixed"',
        },
    }
    Category: ClassVar[str] = CATEGORY
    field: str
    value: str

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        if not str(self.field).strip():
            raise NodeInputError("field is empty; set it to the name of the field to set")
        self.expression = Expression(self.value, "value")

    def on_data(self, data: Data) -> None:
        try:
            data[self.field] = evaluate(self.expression, data)
        except NodeInputError as exc:
            raise NodeInputError(f'{exc} (text needs quotes: "fixed")') from exc.__cause__


def missing_fields(data: Data, wanted: Iterable[str], missing: str, what: str) -> None:
    absent = [name for name in wanted if name not in data]
    if absent and missing == "fail":
        raise NodeInputError(
            f"the dict has no field {', '.join(map(repr, absent))} (fields: "
            f"{', '.join(map(repr, data)) or 'none'}); fix {what}, or set missing to ignore"
        )


class RenameFields(Step):
    """Renames fields: `mapping` is old name -> new name (`{"pred": "label"}`). The fields keep
    their order; swaps work (`{"a": "b", "b": "a"}`).

    A dict without an old field fails, naming it (a renamed field that is not there would be
    missed downstream), unless `missing` is "ignore". Renaming onto a field that exists and is
    not itself renamed is an error: drop that field first.
    """

    Parameters: ClassVar[dict[str, Any]] = {
        "mapping": {"type": "dict", "default": {}, "description": "old name -> new name"},
        "missing": {
            "type": "string",
            "default": "fail",
            "description": "an old field the dict lacks: fail, or ignore",
        },
    }
    Category: ClassVar[str] = CATEGORY
    mapping: dict[str, Any]
    missing: str = "fail"

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        if not isinstance(self.mapping, Mapping):
            raise NodeInputError(f"mapping must be a dict of old -> new names: {self.mapping!r}")
        self.renames = {str(old): str(new) for old, new in self.mapping.items()}
        news = list(self.renames.values())
        twice = sorted({new for new in news if news.count(new) > 1 or not new.strip()})
        if twice:
            raise NodeInputError(f"mapping gives several fields (or none) the name {twice}")
        choice(self.missing, ("fail", "ignore"), "missing")

    def on_data(self, data: Data) -> None:
        missing_fields(data, self.renames, self.missing, "the mapping")
        for new in self.renames.values():
            if new in data and new not in self.renames:
                raise NodeInputError(
                    f"renaming onto {new!r} would overwrite the dict's field {new!r}; drop it "
                    "first (DropFields) or choose another name"
                )
        items = [(self.renames.get(k, k), v) for k, v in data.items()]
        data.clear()
        data.update(items)


class DropFields(Step):
    """Removes `fields` from each dict (large arrays before a table sink, say). A field a dict
    lacks is skipped unless `missing` is "fail" (it is gone either way).
    """

    Parameters: ClassVar[dict[str, Any]] = {
        "fields": {"type": "list[string]", "default": [], "description": "the fields to remove"},
        "missing": {
            "type": "string",
            "default": "ignore",
            "description": "a field the dict lacks: ignore, or fail",
        },
    }
    Category: ClassVar[str] = CATEGORY
    fields: list[str]
    missing: str = "ignore"

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.fields = strings(getattr(self, "fields", []), "fields")
        choice(self.missing, ("fail", "ignore"), "missing")

    def on_data(self, data: Data) -> None:
        missing_fields(data, self.fields, self.missing, "fields")
        for name in self.fields:
            data.pop(name, None)


class KeepFields(Step):
    """Keeps only `fields` on each dict, in their order here, and removes the others. A field
    a dict lacks fails it, naming the field, unless `missing` is "ignore".
    """

    Parameters: ClassVar[dict[str, Any]] = {
        "fields": {"type": "list[string]", "default": [], "description": "the fields to keep"},
        "missing": {
            "type": "string",
            "default": "fail",
            "description": "a field the dict lacks: fail, or ignore",
        },
    }
    Category: ClassVar[str] = CATEGORY
    fields: list[str]
    missing: str = "fail"

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.fields = strings(getattr(self, "fields", []), "fields")
        if not self.fields:
            raise NodeInputError("fields is empty; list the fields to keep")
        choice(self.missing, ("fail", "ignore"), "missing")

    def on_data(self, data: Data) -> None:
        missing_fields(data, self.fields, self.missing, "fields")
        kept = [(name, data[name]) for name in self.fields if name in data]
        data.clear()
        data.update(kept)
