"""Near duplicates: images that look alike (DeduplicateImages, a difference hash searched by
multi-index hashing) and embeddings that point alike (DeduplicateEmbeddings, cosine)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from graphbook.lifecycle import BatchStep, Step
from graphbook.nodes.common import (
    Data,
    NodeInputError,
    image_path,
    plain_value,
)
from graphbook.nodes.curation import CATEGORY
from graphbook.nodes.curation.duplicates import (
    ON_ERROR,
    Unreadable,
    Verdicts,
    dedup_params,
    one_item,
    unreadable,
)
from graphbook.nodes.curation.fields import field_of

if TYPE_CHECKING:
    import numpy as np
    from PIL import Image

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
