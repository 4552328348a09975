"""Thumbnails: small pictures of image files anywhere on disk that a node outputs.

A thumbnail's URL names the file and carries a signature only this server makes (HMAC with a
secret of its own), so the route draws only images that outputs named, never a path a client
made up. Thumbnails are made on demand (PIL, off the event loop) into the data folder's
`thumbnails/`, named by path, modification time and size: a changed file gets a new one.
"""

from __future__ import annotations

import hashlib
import hmac
import os
from pathlib import Path
from urllib.parse import urlencode

from graphbook.server.errors import ServerError, not_found

SIZE = 160
"""The longer side of a thumbnail, in pixels."""
FOLDER = "thumbnails"
ROUTE = "/api/media/thumb"
FULL_ROUTE = "/api/media/image"
FULL = "full\0"
"""What a full-size URL's signature covers besides the path."""


class Thumbnails:
    """Signs URLs of image files outputs named (in any process holding the secret): their
    thumbnails, made here, and the files whole (`full_url`), so an image a run read or wrote
    opens full size wherever it lies, while a client cannot name a file of its own."""

    def __init__(self, secret: bytes, folder: Path | None = None) -> None:
        self.secret = secret
        self.folder = folder

    def url(self, path: str) -> str:
        return f"{ROUTE}?{urlencode({'path': path, 'sig': self.sign(path)})}"

    def full_url(self, path: str) -> str:
        return f"{FULL_ROUTE}?{urlencode({'path': path, 'sig': self.sign(FULL + path)})}"

    def check_full(self, path: str, signature: str) -> Path:
        """The image file a signed full-size URL names (as `check`)."""
        return self.check(path, signature, FULL)

    def sign(self, path: str) -> str:
        text = path.encode("utf-8", "surrogateescape")
        return hmac.new(self.secret, text, hashlib.sha256).hexdigest()[:32]

    def check(self, path: str, signature: str, purpose: str = "") -> Path:
        """The file a signed URL names; ServerError if the signature is not this server's (for
        this purpose: a thumbnail's does not open the file whole) or the file is gone."""
        if not hmac.compare_digest(self.sign(purpose + path), signature):
            raise ServerError(
                403, "forbidden", "this image URL was not made by this server; reload it"
            )
        file = Path(path)
        if not file.is_file():
            raise not_found(f"image {path!r} is gone; run the node again")
        return file

    def make(self, file: Path) -> Path:
        """The thumbnail of `file`, made now unless one for this version of it exists (call it
        in a thread: it reads and decodes the image)."""
        if self.folder is None:
            raise RuntimeError("this Thumbnails signs URLs only: it has no folder")
        stat = file.stat()
        key = f"{file.resolve()}|{stat.st_mtime_ns}|{stat.st_size}"
        name = hashlib.sha256(key.encode("utf-8", "surrogateescape")).hexdigest()[:40]
        target = self.folder / FOLDER / f"{name}.jpg"
        if not target.is_file():
            _draw(file, target)
        return target


def _draw(file: Path, target: Path) -> None:
    from PIL import Image, UnidentifiedImageError

    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        with Image.open(file) as image:
            image.draft("RGB", (SIZE, SIZE))  # JPEGs decode at a fraction of their size
            image.thumbnail((SIZE, SIZE))
            shown = image.convert("RGB")
    except (OSError, UnidentifiedImageError, ValueError) as exc:
        raise ServerError(422, "bad_message", f"cannot read image {str(file)!r}: {exc}") from None
    partial = target.with_name(f"{target.stem}.{os.getpid()}.part")
    shown.save(partial, format="JPEG", quality=85)
    os.replace(partial, target)
