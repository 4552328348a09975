"""Templates: small workflows built only from the node library, offered on an empty canvas, in
the editor's "New" and by `graphbook new`. Each runs as made: the sample data it reads (images,
a table, a model) is written beside it when it is created, never over a file that exists.

A template is a canonical workflow file in this folder (its `doc` is the one-line description)
and an entry in TEMPLATES (its title and the samples it needs, graphbook/templates/samples.py).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from graphbook.atomic import atomic_write
from graphbook.errors import GraphbookError
from graphbook.templates.samples import SAMPLES, make_sample

FOLDER = Path(__file__).parent


@dataclass(frozen=True)
class Template:
    name: str
    title: str
    samples: tuple[str, ...] = ()
    """Names of the sample makers (samples.SAMPLES) whose files the workflow reads."""

    @property
    def file(self) -> Path:
        return FOLDER / f"{self.name}.json"

    def workflow(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(self.file.read_text(encoding="utf-8"))
        return data

    @property
    def description(self) -> str:
        return str(self.workflow().get("doc", ""))


TEMPLATES: tuple[Template, ...] = (
    Template("classify-folder", "Classify a folder of images", ("shapes", "shapesnet")),
    Template("sort-by-prediction", "Sort images by prediction", ("shapes", "shapesnet")),
    Template("embed-parquet", "Embed images into Parquet", ("shapes", "shapesnet-features")),
    Template("near-duplicates", "Find near-duplicate images", ("photos",)),
    Template("quality-filter", "Filter images by quality", ("photos",)),
    Template("split-train-val", "Split a labelled dataset", ("shapes",)),
    Template("convert-table", "Convert a table", ("table",)),
    Template("clean-table", "Clean a table", ("table",)),
    Template("split-records", "Split records by a rule", ("records",)),
    Template("hf-classify", "Classify with a Hugging Face model", ("shapes", "tiny-hf-classifier")),
)


class UnknownTemplate(GraphbookError):
    """No template has this name."""


def template(name: str) -> Template:
    for known in TEMPLATES:
        if known.name == name:
            return known
    names = ", ".join(t.name for t in TEMPLATES)
    raise UnknownTemplate(f"no template named {name!r}; the templates are: {names}")


@dataclass(frozen=True)
class Created:
    workflow: Path
    samples: list[Path]
    """The sample files and folders written (those that existed already are left as they are)."""


def create(name: str, target: Path, data_root: Path, overwrite: bool = False) -> Created:
    """Write template `name` to `target` and the samples it reads under `data_root` (the
    folder runs start in, against which its relative paths resolve)."""
    chosen = template(name)
    if target.exists() and not overwrite:
        raise FileExistsError(f"{target} exists; choose another file name (or remove it first)")
    written = [p for s in chosen.samples if (p := make_sample(s, data_root)) is not None]
    # atomic: the editor, the watcher or an agent reading the file meanwhile (a template
    # filling an empty file that is open) sees the old file or the new one, never an empty one
    atomic_write(target, chosen.file.read_text(encoding="utf-8"))
    return Created(target, written)


__all__ = ["SAMPLES", "TEMPLATES", "Created", "Template", "UnknownTemplate", "create", "template"]
