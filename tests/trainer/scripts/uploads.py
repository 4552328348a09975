"""Where the seed's batch_inference.py "uploads" its predictions in the tests."""

from __future__ import annotations

from typing import Any

UPLOADED: list[Any] = []


def my_upload_fn(predictions: Any) -> None:
    UPLOADED.append(predictions)
