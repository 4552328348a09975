"""CSVLogger: a CSV file per metric group (`training.csv`, `validation.csv`, a batch job's
groups) in one folder, a row per report: `step`, then a column per metric name, the header
grown (the file rewritten) when a new name appears."""

from __future__ import annotations

import csv
import io
import json
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from graphbook.loggers.base import LoggedRun
from graphbook.store import MetricRecord

STEP = "step"


class CSVLogger:
    """Writes `folder/<group>.csv`; `folder/hparams.json` holds the hyperparameters. The folder
    is the run's: opening it for a run replaces what it held."""

    def __init__(self, folder: str | os.PathLike[str]) -> None:
        self.folder = Path(folder)
        self._files: dict[str, _GroupFile] = {}

    def open(self, run: LoggedRun, history: Sequence[MetricRecord]) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        self.close()
        groups: dict[str, list[MetricRecord]] = {}
        for row in history:
            groups.setdefault(row.group, []).append(row)
        for old in self.folder.glob("*.csv"):
            if old.stem not in groups:
                old.unlink()
        for group, rows in groups.items():
            self._file(group).rewrite([(r.steps_completed, r.metrics) for r in rows])

    def log_hparams(self, hparams: Mapping[str, Any]) -> None:
        text = json.dumps(dict(hparams), indent=2, sort_keys=True, default=str)
        _replace(self.folder / "hparams.json", text + "\n")

    def log_metrics(self, group: str, step: int, values: Mapping[str, Any]) -> None:
        self._file(group).append(step, values)

    def close(self) -> None:
        for each in self._files.values():
            each.close()
        self._files = {}

    def _file(self, group: str) -> _GroupFile:
        if group not in self._files:
            self._files[group] = _GroupFile(self.folder / f"{_safe(group)}.csv")
        return self._files[group]


class _GroupFile:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.columns: list[str] = [STEP]
        self.rows: list[tuple[int, Mapping[str, Any]]] = []
        self._handle: IO[str] | None = None

    def rewrite(self, rows: list[tuple[int, Mapping[str, Any]]]) -> None:
        """The file holds `rows` and nothing else (written aside, then moved in place)."""
        self.close()
        self.rows = list(rows)
        self.columns = [STEP, *dict.fromkeys(k for _, values in rows for k in values)]
        _replace(self.path, self._header() + "".join(self._line(s, v) for s, v in rows))

    def append(self, step: int, values: Mapping[str, Any]) -> None:
        if any(name not in self.columns for name in values):
            self.rewrite([*self.rows, (step, values)])
            return
        self.rows.append((step, values))
        if self._handle is None:
            if not self.path.exists():
                _replace(self.path, self._header())
            self._handle = self.path.open("a", encoding="utf-8", newline="")
        self._handle.write(self._line(step, values))  # one write: a whole line or none
        self._handle.flush()

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None

    def _header(self) -> str:
        return _csv_line(self.columns)

    def _line(self, step: int, values: Mapping[str, Any]) -> str:
        return _csv_line([str(step), *(_cell(values.get(c)) for c in self.columns[1:])])


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str | int | float):
        return repr(value) if isinstance(value, float) else str(value)
    return json.dumps(value, default=str)


def _csv_line(cells: list[str]) -> str:
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerow(cells)
    return out.getvalue()


def _replace(path: Path, text: str) -> None:
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)


def _safe(group: str) -> str:
    return re.sub(r"[^\w.-]+", "_", group) or "metrics"
