"""An app's results: the run's own folder (`<data>/apps/<run id>/`), where the files its nodes
write go (`place`) and where the outputs the app shows are kept as the run ends (`keep`, in the
run host, from the output cache), then read for the app's page (`Results`): galleries, tables
paged and sorted, downloads (CSV, Parquet), files, text.

The folder holds `results.json` (what was kept), `rows/NAME.jsonl` (each output's dicts, plain:
image records stay records, images in memory are saved under `images/NAME/`), `files/NODE/`
(what the nodes wrote) and `downloads/` (tables converted on first ask).
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import os
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Any, Literal, TypeVar

from graphbook import protocol as p
from graphbook.atomic import atomic_write
from graphbook.engine.cache import WorkflowCache
from graphbook.errors import GraphbookError
from graphbook.outputs import TABLE_SUFFIXES, written
from graphbook.overrides import find_node
from graphbook.plain import plain
from graphbook.registry import Registry
from graphbook.run_request import RunRequest
from graphbook.server.errors import ServerError, bad_message, not_found
from graphbook.server.gallery import FIELD_TEXT, GalleryQuery, ImageLink, page, plain_fields
from graphbook.server.paths import Root
from graphbook.server.runhost.messages import KeepResults
from graphbook.workflow import Workflow, WorkflowOutput

T = TypeVar("T")
RESULTS = "apps"
"""The folder (in the data folder) app runs keep their results in, one folder a run."""
MANIFEST = "results.json"
MAX_ROWS = 20_000
"""Dicts of one output kept for the app's page; the rest are counted, not kept."""
MAX_TEXTS = 50
RUN_ID = re.compile(r"^[0-9a-f]{12}$")
FORMATS = ("csv", "parquet")
Format = Literal["csv", "parquet"]


# -- where a run's files go ---------------------------------------------------------------------
def place(
    request: RunRequest, workflow: Workflow, registry: Registry, folder: Path
) -> tuple[RunRequest, dict[str, list[str]]]:
    """An app's run with every file its nodes write moved into `folder/files/NODE/` (the name
    kept), unless its inputs or overrides set that parameter; and the paths each node writes."""
    given = _given(request, workflow, folder.parent)
    moved: dict[str, dict[str, Any]] = {}
    files: dict[str, list[str]] = {}
    for found in written(workflow, registry):
        path = found.path
        if (found.node, found.param) not in given:
            path = str(folder / "files" / found.node / PurePath(found.path).name)
            moved.setdefault(found.node, {})[found.param] = path
        files.setdefault(found.node, []).append(path)
    overrides = {k: dict(v) for k, v in (request.overrides or {}).items()}
    for node, params in moved.items():
        overrides.setdefault(node, {}).update(params)
    return dataclasses.replace(request, overrides=overrides or None), files


def _given(request: RunRequest, workflow: Workflow, results: Path) -> set[tuple[str, str]]:
    """The (node, parameter) pairs the request's inputs and overrides set (not counting those
    an earlier app run placed under `results`: that run, run again, is placed anew)."""
    given = {
        (workflow.inputs[name].node, workflow.inputs[name].param)
        for name in request.inputs or {}
        if name in workflow.inputs
    }
    for key, params in (request.overrides or {}).items():
        try:
            node = find_node(workflow, key)
        except GraphbookError:
            continue  # check_run names it
        if isinstance(params, Mapping):
            given |= {(node, k) for k, v in params.items() if not _placed(v, results)}
    return given


def _placed(value: Any, results: Path) -> bool:
    return isinstance(value, str) and Path(value).is_relative_to(results)


# -- keeping them, in the run host ----------------------------------------------------------------
def keep(order: KeepResults, cache: WorkflowCache) -> None:
    """Write the outputs `order` names, as the run left them in `cache`, into its folder."""
    folder = order.folder
    outputs = {}
    for name, shown in order.outputs.items():
        items = cache.items(shown.node, shown.output)
        outputs[name] = _kept(folder, name, shown, items) | {
            "files": [_relative(path, folder) for path in order.files.get(shown.node, [])]
        }
    atomic_write(folder / MANIFEST, json.dumps({"outputs": outputs}, indent=1))


def _kept(
    folder: Path, name: str, shown: WorkflowOutput, items: list[Any] | None
) -> dict[str, Any]:
    record: dict[str, Any] = dataclasses.asdict(shown) | {"count": 0, "note": ""}
    if items is None:
        record["note"] = "its dicts were not kept: the node did not run, or they were too many"
        return record
    record["count"] = len(items)
    if len(items) > MAX_ROWS:
        record["note"] = f"the first {MAX_ROWS} of {len(items)} dicts are shown"
    lines = [
        json.dumps(_plain(item, folder / "images" / name, i))
        for i, item in enumerate(items[:MAX_ROWS])
    ]
    atomic_write(folder / "rows" / f"{name}.jsonl", "".join(line + "\n" for line in lines))
    return record


def _plain(item: Any, images: Path, index: int) -> Any:
    """A dict as JSON holds it: image records kept as records, an image in memory saved as a
    PNG file (and recorded as one), arrays as lists (summed up when large), NaN as null."""
    saved = [0]

    def convert(value: Any) -> Any:
        if isinstance(value, Mapping | Path):
            return value if isinstance(value, Mapping) else str(value)
        if type(value).__module__.split(".")[0] == "PIL" and hasattr(value, "save"):
            images.mkdir(parents=True, exist_ok=True)
            path = images / f"{index}-{saved[0]}.png"
            saved[0] += 1
            value.save(path, format="PNG")
            return {"type": "image", "value": str(path)}
        size = getattr(value, "size", None)
        if hasattr(value, "tolist"):
            count = size() if callable(size) else size
            if isinstance(count, int) and count > 64:
                return f"{type(value).__name__} {list(getattr(value, 'shape', []))}"
            return value.tolist()
        return str(value)

    return plain(item, convert, lambda _: None)


def _relative(path: str, folder: Path) -> str:
    try:
        return Path(path).resolve().relative_to(folder.resolve()).as_posix()
    except ValueError:
        return path  # an input or override named it: it lies where the person said


# -- reading them, for the app's page --------------------------------------------------------------
@dataclass(frozen=True)
class Table:
    columns: list[str]
    rows: list[dict[str, Any]]


class Results:
    """The results of app runs under `root` (`<data>/apps`), read on demand; the last few
    outputs' rows and tables kept in memory."""

    def __init__(self, root: Path, size: int = 8) -> None:
        self.root = root
        self.size = size
        self._kept: OrderedDict[tuple[str, str, str], Any] = OrderedDict()
        self._lock = threading.Lock()

    def folder(self, run_id: str) -> Path:
        if not RUN_ID.match(run_id):
            raise bad_message(f"{run_id!r} is not a run id")
        return self.root / run_id

    def manifest(self, run_id: str) -> dict[str, Any] | None:
        try:
            data = json.loads((self.folder(run_id) / MANIFEST).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    def output(self, run_id: str, name: str) -> dict[str, Any]:
        record = (self.manifest(run_id) or {}).get("outputs", {}).get(name)
        if not isinstance(record, dict):
            raise not_found(f"run {run_id} kept no output {name!r}")
        return record

    def infos(self, run_id: str, base: str) -> list[p.AppResult]:
        """What the page shows of each output kept (`base`: the URL the run's downloads and
        files are under)."""
        outputs = (self.manifest(run_id) or {}).get("outputs", {})
        return [self._info(run_id, name, record, base) for name, record in outputs.items()]

    def _info(self, run_id: str, name: str, record: dict[str, Any], base: str) -> p.AppResult:
        kind = record.get("kind", "table")
        info = p.AppResult(
            name, kind, record["node"], record["output"], record.get("count", 0),
            record.get("description", ""), record.get("note", ""),
        )  # fmt: skip
        files = [self._file(run_id, path, base) for path in record.get("files", [])]
        if kind == "table":
            table = self.table(run_id, name)
            downloads = [
                p.AppFile(f"{name}.{f}", f"{base}/download/{name}.{f}", 0) for f in FORMATS
            ]
            return dataclasses.replace(
                info, columns=table.columns, downloads=downloads, files=files
            )
        if kind == "text":
            return dataclasses.replace(
                info, text=[_text(row) for row in self.rows(run_id, name)[:MAX_TEXTS]]
            )
        return dataclasses.replace(info, files=[f for f in files if f.size >= 0])

    def _file(self, run_id: str, relative: str, base: str) -> p.AppFile:
        path = self.folder(run_id) / relative
        if path.is_dir():
            inside = sorted(f for f in path.rglob("*") if f.is_file())
            return p.AppFile(
                f"{relative}/ ({len(inside)} files)", "", sum(f.stat().st_size for f in inside)
            )
        size = path.stat().st_size if path.is_file() else -1
        return p.AppFile(relative, f"{base}/files/{relative}" if size >= 0 else "", size)

    def rows(self, run_id: str, name: str) -> list[Any]:
        """The dicts kept of output `name` (loaded once, kept a while)."""
        return self._cached((run_id, name, "rows"), lambda: self._read_rows(run_id, name))

    def _read_rows(self, run_id: str, name: str) -> list[Any]:
        self.output(run_id, name)
        path = self.folder(run_id) / "rows" / f"{name}.jsonl"
        if not path.is_file():
            return []
        with path.open(encoding="utf-8") as lines:
            return [json.loads(line) for line in lines if line.strip()]

    def table(self, run_id: str, name: str) -> Table:
        """Output `name` as a table: the table file its node wrote (as written), else its
        dicts' fields."""
        return self._cached((run_id, name, "table"), lambda: self._read_table(run_id, name))

    def _read_table(self, run_id: str, name: str) -> Table:
        file = self._table_file(run_id, name)
        if file is not None:
            return read_table(file)
        rows = [_cells(row) for row in self.rows(run_id, name)]
        columns = list(dict.fromkeys(key for row in rows[:200] for key in row))
        return Table(columns, rows)

    def _table_file(self, run_id: str, name: str) -> Path | None:
        folder = self.folder(run_id)
        for relative in self.output(run_id, name).get("files", []):
            path = folder / str(relative)
            if path.suffix.lower() in TABLE_SUFFIXES and path.is_file():
                return path
        return None

    def table_page(
        self, run_id: str, name: str, offset: int, limit: int, sort: str | None, order: str
    ) -> p.AppTablePage:
        table = self.table(run_id, name)
        if sort is not None and sort not in table.columns:
            raise bad_message(
                f"the table has no column {sort!r}; its columns: {', '.join(table.columns)}"
            )
        rows = table.rows
        if sort is not None:
            rows = sorted(rows, key=lambda row: _sort_key(row.get(sort)), reverse=order == "desc")
        shown = [
            [_cell_text(row.get(c)) for c in table.columns] for row in rows[offset : offset + limit]
        ]
        direction: Literal["asc", "desc"] = "desc" if order == "desc" else "asc"
        return p.AppTablePage(table.columns, shown, len(rows), offset, sort, direction)

    def gallery(
        self, run_id: str, name: str, query: GalleryQuery, link: ImageLink
    ) -> p.GalleryPage:
        record = self.output(run_id, name)
        rows = self.rows(run_id, name)
        return page(f"run {run_id}", record["node"], record["output"], rows, query, link)

    def download(self, run_id: str, name: str, fmt: str) -> Path:
        """Output `name` as a CSV or Parquet file: the file its node wrote in that format, else
        one converted (once) from its table."""
        if fmt not in FORMATS:
            raise bad_message(f"download a table as {' or '.join(FORMATS)}, not {fmt!r}")
        if self.output(run_id, name).get("kind") != "table":
            raise bad_message(f"output {name!r} is not a table")
        file = self._table_file(run_id, name)
        if file is not None and file.suffix.lower() == f".{fmt}":
            return file
        target = self.folder(run_id) / "downloads" / f"{name}.{fmt}"
        if not target.is_file():
            write_table(self.table(run_id, name), target)
        return target

    def file(self, run_id: str, relative: str) -> Path:
        path = Root(self.folder(run_id)).resolve(relative)
        if not path.is_file():
            raise not_found(f"run {run_id} has no file {relative!r}")
        return path

    def _cached(self, key: tuple[str, str, str], read: Callable[[], T]) -> T:
        with self._lock:
            if key in self._kept:
                self._kept.move_to_end(key)
                kept: T = self._kept[key]
                return kept
        value = read()
        with self._lock:
            self._kept[key] = value
            while len(self._kept) > self.size:
                self._kept.popitem(last=False)
        return value


def read_table(path: Path) -> Table:
    """A CSV, JSONL or Parquet file's columns and rows, as pyarrow reads them."""
    import pyarrow as pa  # type: ignore[import-untyped]
    import pyarrow.csv as pa_csv  # type: ignore[import-untyped]
    import pyarrow.json as pa_json  # type: ignore[import-untyped]
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    readers = {".csv": pa_csv.read_csv, ".jsonl": pa_json.read_json, ".parquet": pq.read_table}
    try:
        table = readers[path.suffix.lower()](path)
    except (pa.ArrowInvalid, OSError, ValueError) as exc:
        if path.stat().st_size == 0:
            return Table([], [])
        raise ServerError(422, "bad_message", f"cannot read the table {path.name}: {exc}") from None
    return Table(list(table.column_names), [_cells(row) for row in table.to_pylist()])


def write_table(table: Table, target: Path) -> None:
    """The table as CSV (nested values as JSON text) or Parquet, written atomically."""
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.suffix == ".csv":
        text = io.StringIO()
        writer = csv.writer(text)  # as WriteCSV writes (\r\n, RFC 4180)
        writer.writerow(table.columns)
        for row in table.rows:
            writer.writerow([_csv_cell(row.get(c)) for c in table.columns])
        atomic_write(target, text.getvalue())
        return
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [{c: row.get(c) for c in table.columns} for row in table.rows]
    try:
        arrow = pa.Table.from_pylist(rows)
    except (pa.ArrowInvalid, pa.ArrowTypeError):  # mixed kinds in a column: as text
        arrow = pa.Table.from_pylist([{c: _csv_cell(v) for c, v in row.items()} for row in rows])
    partial = target.with_name(f".{target.name}.{os.getpid()}.part")
    pq.write_table(arrow, partial)
    os.replace(partial, target)


def _cells(row: Any) -> dict[str, Any]:
    """A row's values as a table shows them: image records as their path."""
    if not isinstance(row, Mapping):
        return {"value": row}
    return {str(k): _cell(v) for k, v in row.items()}


def _cell(value: Any) -> Any:
    if isinstance(value, Mapping) and value.get("type") == "image" and "value" in value:
        return str(value["value"])
    return value


def _csv_cell(value: Any) -> Any:
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False)
    return "" if value is None else value


def _cell_text(value: Any) -> Any:
    if isinstance(value, dict | list):
        text = json.dumps(value, ensure_ascii=False)
        return text if len(text) <= FIELD_TEXT else text[:FIELD_TEXT] + "…"
    return value


def _sort_key(value: Any) -> tuple[int, Any]:
    """Numbers by value, then text, then the rest; missing values last."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return (0, value)
    if isinstance(value, str):
        return (1, value)
    return (2, "") if value is None else (1, json.dumps(value))


def _text(row: Any) -> str:
    """A dict as text: its one text field, else its fields one a line."""
    fields = plain_fields(row) if isinstance(row, Mapping) else {"value": row}
    texts = [v for v in fields.values() if isinstance(v, str)]
    if len(texts) == 1 and len(fields) <= 2:
        return texts[0]
    return "\n".join(f"{k}: {v}" for k, v in fields.items())
