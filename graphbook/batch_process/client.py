"""Querying the run store from Python, the way Determined's `client` does: checkpoints, models
and their versions, runs, and the metrics of the runs that used them.

    from graphbook.batch_process import client
    client.get_checkpoint(uuid).get_metrics("inference")
    client.get_model("shapes-net").get_version(1).get_metrics("inference")

The module-level functions use the store under the data directory ($GRAPHBOOK_HOME, else
./.graphbook) as it is when they are called; `Client(store)` uses another one.
"""

from __future__ import annotations

import json
import shutil
import uuid as uuids
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from graphbook.store import CheckpointRecord, MetricRecord, RunRecord, Store


@dataclass(frozen=True)
class Checkpoint:
    uuid: str
    run_id: str
    path: Path
    steps_completed: int
    metadata: dict[str, Any]
    store: Store = field(repr=False, compare=False)

    def get_metrics(self, group: str | None = None) -> list[MetricRecord]:
        """Metrics of every run that used this checkpoint (directly or as a model version)."""
        return self.store.checkpoint_metrics(self.uuid, group)

    def download(self) -> Path:
        """The checkpoint's local folder (it is already local: nothing is copied). Until the
        next attempt of a run that crashed while committing it, that may be `<uuid>.tmp`."""
        for folder in (self.path, self.path.with_name(self.path.name + ".tmp")):
            if folder.is_dir():
                return folder
        raise FileNotFoundError(f"checkpoint {self.uuid} is missing its folder {self.path}")

    def files(self) -> list[Path]:
        """The files of a batch-run checkpoint that were written through upload_path()."""
        folder = self.download()
        listing = folder / "checkpoint.json"
        if not listing.exists():
            return []
        names = json.loads(listing.read_text()).get("files", [])
        return [folder / name for name in names if name.startswith("files/")]


@dataclass(frozen=True)
class ModelVersion:
    model_name: str
    version: int
    checkpoint: Checkpoint
    store: Store = field(repr=False, compare=False)

    def get_metrics(self, group: str | None = None) -> list[MetricRecord]:
        """Metrics of every run that used this model version."""
        return self.store.model_version_metrics(self.model_name, self.version, group)


@dataclass(frozen=True)
class Model:
    name: str
    store: Store = field(repr=False, compare=False)

    def get_version(self, version: int = -1) -> ModelVersion:
        """Version number `version` (from 1); -1, the default, is the latest."""
        if version == -1:
            versions = self.store.model_versions(self.name)
            if not versions:
                raise KeyError(f"model {self.name!r} has no versions yet; use register_version")
            version = versions[-1].version
        uuid = self.store.model_version_checkpoint(self.name, version)
        return ModelVersion(self.name, version, _checkpoint(self.store, uuid), self.store)

    def get_versions(self) -> list[ModelVersion]:
        return [self.get_version(v.version) for v in self.store.model_versions(self.name)]

    def register_version(self, checkpoint: Checkpoint | str) -> ModelVersion:
        """Add `checkpoint` as this model's next version."""
        uuid = checkpoint if isinstance(checkpoint, str) else checkpoint.uuid
        self.store.get_checkpoint(uuid)  # KeyError names a checkpoint that does not exist
        return self.get_version(self.store.register_model_version(self.name, uuid))


@dataclass(frozen=True)
class Run:
    record: RunRecord
    store: Store = field(repr=False, compare=False)

    @property
    def id(self) -> str:
        return self.record.id

    @property
    def status(self) -> str:
        return self.record.status

    def get_metrics(self, group: str | None = None) -> list[MetricRecord]:
        return self.store.metrics([self.id], group)

    def checkpoints(self) -> list[Checkpoint]:
        records = self.store.checkpoints(self.id)
        records.sort(key=lambda c: (c.metadata.get("sequence", -1), c.time))
        return [_from_record(c, self.store) for c in records]

    def files(self) -> list[Path]:
        """Every file the run committed through upload_path(), checkpoint by checkpoint."""
        return [path for checkpoint in self.checkpoints() for path in checkpoint.files()]


class Client:
    """The queries, over one store."""

    def __init__(self, store: Store | None = None) -> None:
        self.store = store if store is not None else Store()

    def get_checkpoint(self, uuid: str) -> Checkpoint:
        return _checkpoint(self.store, uuid)

    def get_model(self, name: str) -> Model:
        if not self.store.model_versions(name):
            raise KeyError(f"no model named {name!r}; create it and register a version first")
        return Model(name, self.store)

    def create_model(self, name: str) -> Model:
        """A model by that name; it is stored with its first registered version."""
        return Model(name, self.store)

    def get_run(self, run_id: str) -> Run:
        return Run(self.store.get_run(run_id), self.store)

    def list_runs(self, kind: str | None = None, limit: int = 100) -> list[Run]:
        return [Run(r, self.store) for r in self.store.list_runs(kind, limit)]

    def import_checkpoint(
        self, source: Path | str, name: str = "", metadata: dict[str, Any] | None = None
    ) -> Checkpoint:
        """Copy a file or folder (e.g. trained weights) into the data directory as a new
        checkpoint, recorded under a completed "train" run called `name`."""
        source = Path(source)
        if not source.exists():
            raise FileNotFoundError(f"cannot import checkpoint: {source} does not exist")
        uuid = str(uuids.uuid4())
        folder = self.store.path.parent.resolve() / "checkpoints" / uuid
        if source.is_dir():
            shutil.copytree(source, folder)
        else:
            folder.mkdir(parents=True)
            shutil.copy2(source, folder / source.name)
        run_id = self.store.start_run("train", name or f"imported {source.name}")
        self.store.add_checkpoint(run_id, str(folder), 0, metadata, checkpoint_uuid=uuid)
        self.store.finish_run(run_id, "completed")
        return _checkpoint(self.store, uuid)


def _checkpoint(store: Store, uuid: str) -> Checkpoint:
    return _from_record(store.get_checkpoint(uuid), store)


def _from_record(record: CheckpointRecord, store: Store) -> Checkpoint:
    path = Path(record.path)
    return Checkpoint(
        record.uuid, record.run_id, path, record.steps_completed, record.metadata, store
    )


def get_checkpoint(uuid: str) -> Checkpoint:
    return Client().get_checkpoint(uuid)


def get_model(name: str) -> Model:
    return Client().get_model(name)


def create_model(name: str) -> Model:
    return Client().create_model(name)


def get_run(run_id: str) -> Run:
    return Client().get_run(run_id)


def list_runs(kind: str | None = None, limit: int = 100) -> list[Run]:
    return Client().list_runs(kind, limit)


def import_checkpoint(
    source: Path | str, name: str = "", metadata: dict[str, Any] | None = None
) -> Checkpoint:
    return Client().import_checkpoint(source, name, metadata)
