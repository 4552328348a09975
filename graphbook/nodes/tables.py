"""Tables: CSV, JSON lines and Parquet files read in chunks as dicts, and written as sinks.

Readers stream: a chunk of rows is read, handed on a dict at a time, and let go, so a file
larger than memory reads as well as a small one. Writers write to a hidden temporary file
beside the target while the run goes, and put it in the target's place only when every dict
has arrived and been written (`common.sink_path`): a failed or stopped run leaves the old file
as it was and no temporary file behind (one a killed run left is removed by the next).
"""

from __future__ import annotations

import csv
import io
import itertools
import json
import os
from collections.abc import Iterable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from graphbook.lifecycle import GeneratorSourceStep, Step
from graphbook.logs import LogLevel
from graphbook.nodes.common import Data, NodeInputError, local_path, plain_row, sink_path

if TYPE_CHECKING:
    import pyarrow as pa  # type: ignore[import-untyped]
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

PATH = {"type": "string", "required": True, "path": True, "description": "the table file"}
READ_COLUMNS = {
    "type": "list[string]",
    "default": [],
    "description": "columns to read, in this order (empty: all)",
}
LIMIT = {"type": "int", "default": 0, "description": "at most this many rows (0: all)"}
CHUNK_ROWS = {
    "type": "int",
    "default": 1024,
    "description": "rows read at a time (memory holds one chunk, not the file)",
}
WRITE_COLUMNS = {
    "type": "list[string]",
    "default": [],
    "description": "fields to write, in this order (empty: the first dict's fields)",
}
OVERWRITE = {
    "type": "boolean",
    "default": False,
    "description": "replace a file a sink did not write (its own earlier file it always may)",
}
DELIMITER = {"type": "string", "default": ",", "description": "the character between cells"}


# -- readers --------------------------------------------------------------------------------
class TableReading:
    """What the readers share (a mixin, not a node): the file, the columns, the limit."""

    Outputs: ClassVar[list[str]] = ["out"]
    Category: ClassVar[str] = "Tables"
    path: str
    columns: list[str] = []
    limit: int = 0
    chunk_rows: int = 1024

    def load(self) -> Iterator[Data]:
        path = table_file(self.path)
        rows = self.rows(path, [str(c) for c in self.columns or []])
        limit = int(self.limit)
        yield from itertools.islice(rows, limit) if limit > 0 else rows

    def rows(self, path: Path, columns: list[str]) -> Iterator[Data]:
        raise NotImplementedError

    def chunk(self) -> int:
        rows = int(self.chunk_rows)
        if rows < 1:
            raise NodeInputError(f"chunk_rows is {rows}; set it to 1 or more (e.g. 1024)")
        return rows


class ReadCSV(TableReading, GeneratorSourceStep):
    """Reads a CSV file (pyarrow's streaming reader), one dict per row:

        name,score          ->  {"name": "cat.jpg", "score": 0.93}
        cat.jpg,0.93

    The first line names the columns. Each column's type is inferred (numbers, booleans,
    text, empty cells as None) from the start of the file and kept for the rest. `columns`
    picks and orders the columns handed on; a column the file lacks is an error that lists
    the columns it has."""

    Parameters: ClassVar[dict[str, Any]] = {
        "path": PATH,
        "columns": READ_COLUMNS,
        "limit": LIMIT,
        "chunk_rows": CHUNK_ROWS,
        "delimiter": DELIMITER,
    }
    delimiter: str = ","

    def rows(self, path: Path, columns: list[str]) -> Iterator[Data]:
        from pyarrow import ArrowException, csv

        parse = csv.ParseOptions(delimiter=delimiter_of(self.delimiter))
        try:
            reader = csv.open_csv(path, parse_options=parse)
            check_columns(path, columns, reader.schema.names)
            yield from batch_rows(reader, columns, self.chunk())
        except ArrowException as exc:
            raise unreadable(path, "CSV", exc) from None


class ReadJSONL(TableReading, GeneratorSourceStep):
    """Reads a JSON-lines file (one JSON object a line), `chunk_rows` lines at a time, one dict
    per line:

        {"name": "cat.jpg", "score": 0.93}

    Blank lines are skipped. A line that is not a JSON object is an error naming its line
    number. With `columns`, each dict keeps those fields, and a line that lacks one is an
    error naming the line and the fields it has."""

    Parameters: ClassVar[dict[str, Any]] = {
        "path": PATH,
        "columns": READ_COLUMNS,
        "limit": LIMIT,
        "chunk_rows": CHUNK_ROWS,
    }

    def rows(self, path: Path, columns: list[str]) -> Iterator[Data]:
        size, first = self.chunk(), 1
        with path.open(encoding="utf-8") as lines:
            while chunk := list(itertools.islice(lines, size)):
                for number, line in enumerate(chunk, first):
                    if line.strip():
                        row = json_row(path, number, line)
                        yield pick(row, columns, f"{path} line {number}") if columns else row
                first += len(chunk)


class ReadParquet(TableReading, GeneratorSourceStep):
    """Reads a Parquet file a chunk of rows at a time (pyarrow's `iter_batches`), one dict per
    row, each value as plain Python (lists stay lists, timestamps become datetimes).
    `columns` reads only those columns from the file; one it lacks is an error that lists the
    columns it has."""

    Parameters: ClassVar[dict[str, Any]] = {
        "path": PATH,
        "columns": READ_COLUMNS,
        "limit": LIMIT,
        "chunk_rows": CHUNK_ROWS,
    }

    def rows(self, path: Path, columns: list[str]) -> Iterator[Data]:
        from pyarrow import ArrowException, parquet

        try:
            table = parquet.ParquetFile(path)
            check_columns(path, columns, table.schema_arrow.names)
            batches = table.iter_batches(batch_size=self.chunk(), columns=columns or None)
            yield from batch_rows(batches, columns, self.chunk())
        except ArrowException as exc:
            raise unreadable(path, "Parquet", exc) from None


def table_file(text: str) -> Path:
    path = local_path(text, "path")
    if not path.exists():
        raise FileNotFoundError(
            f"{str(path)!r} does not exist; check the path (a relative path starts from "
            f"{os.getcwd()})"
        )
    if path.is_dir():
        raise IsADirectoryError(f"{str(path)!r} is a folder; set path to a table file")
    return path


def check_columns(path: Path, wanted: list[str], names: list[str]) -> None:
    missing = [c for c in wanted if c not in names]
    if missing:
        raise NodeInputError(
            f"{path} has no column {', '.join(map(repr, missing))}; its columns are "
            f"{', '.join(map(repr, names))}: fix the columns parameter"
        )


def batch_rows(batches: Iterable[pa.RecordBatch], columns: list[str], size: int) -> Iterator[Data]:
    """The rows of record batches as dicts of Python values, `size` rows converted at once."""
    for batch in batches:
        if columns and batch.schema.names != columns:
            batch = batch.select(columns)
        for start in range(0, batch.num_rows, size):
            yield from batch.slice(start, size).to_pylist()


def unreadable(path: Path, kind: str, exc: Exception) -> NodeInputError:
    return NodeInputError(f"{path} cannot be read as {kind}: {exc}")


def delimiter_of(text: str) -> str:
    delimiter = {"\\t": "\t", "tab": "\t"}.get(str(text).lower(), str(text))
    if len(delimiter) != 1:
        raise NodeInputError(
            f"delimiter {text!r} is not one character; use e.g. ',' or ';' or \\t (a tab)"
        )
    return delimiter


def json_row(path: Path, number: int, line: str) -> Data:
    try:
        row = json.loads(line)
    except json.JSONDecodeError as exc:
        raise NodeInputError(
            f"{path} line {number} is not valid JSON ({exc.msg}, column {exc.colno}); fix or "
            "remove that line"
        ) from None
    if not isinstance(row, dict):
        raise NodeInputError(
            f"{path} line {number} is a JSON {type(row).__name__}, not an object "
            '({"field": value, ...}); each line must hold one object'
        )
    return row


def pick(row: Data, columns: list[str], where: str) -> Data:
    missing = [c for c in columns if c not in row]
    if missing:
        raise NodeInputError(
            f"{where} has no field {', '.join(map(repr, missing))} (its fields: "
            f"{', '.join(map(repr, row))}); fix the columns parameter"
        )
    return {c: row[c] for c in columns}


# -- writers --------------------------------------------------------------------------------
class TableWriting:
    """What the writers share (a mixin, not a node): the target file written whole or not
    at all.

    `on_start` refuses an existing file a sink did not write (unless `overwrite`) and opens
    the temporary file;
    each dict is written as it arrives and handed on unchanged; `on_end` puts the file in
    place only if the engine says every dict reached this node and was written (`ended_as`
    "done"), and otherwise removes it, leaving the old file, if any, as it was."""

    Outputs: ClassVar[list[str]] = ["out"]
    Category: ClassVar[str] = "Sinks"
    Writes: ClassVar[tuple[str, ...]] = ("path",)
    path: str
    columns: list[str] = []
    overwrite: bool = False
    _target: Path | None = None
    _sink: AbstractContextManager[Path] | None = None
    _fields: list[str] | None = None
    _rows = 0
    ended_as: str | None = None

    if TYPE_CHECKING:  # Step's, which comes after this mixin

        def log(self, message: Any, level: LogLevel = "info") -> None: ...

    def on_start(self) -> None:
        target = local_path(self.path, "path")
        sink = sink_path(target, bool(self.overwrite))
        temporary = sink.__enter__()  # refuses an existing file here, before anything runs
        self._target, self._sink, self._rows = target, sink, 0
        self._fields = [str(c) for c in self.columns] if self.columns else None
        try:
            self.open(temporary)
        except BaseException:
            self._abandon()
            raise

    def on_data(self, data: Data) -> None:
        if self._sink is None:
            raise NodeInputError(f"{type(self).__name__} got a dict before the run started")
        self.write(self.row(data))
        self._rows += 1

    def on_end(self) -> None:
        if self._sink is None:
            return
        try:
            self.close()
        except BaseException:
            self._abandon()
            raise
        if self.ended_as != "done":
            self._abandon()
            self.log(f"the run did not complete: {self._target} is left as it was", "warning")
            return
        sink, self._sink = self._sink, None
        sink.__exit__(None, None, None)
        self.log(f"wrote {self._rows} rows to {self._target}")

    def row(self, data: Data) -> Data:
        """The table row of `data`: the fields asked for, or those of the first dict."""
        if self._fields is None:
            self._fields = [str(k) for k in data]
            return plain_row(data)
        missing = [f for f in self._fields if f not in data]
        if missing and not self.columns:
            raise NodeInputError(
                f"a dict has no field {', '.join(map(repr, missing))}, which the first dict "
                f"written to {self._target} had (its fields: {', '.join(map(repr, data))}); "
                "give every dict the same fields, or set columns to those all dicts have"
            )
        return plain_row(data, self._fields)

    def _abandon(self) -> None:
        sink, self._sink = self._sink, None
        if sink is not None:
            stop = RunIncomplete()
            sink.__exit__(RunIncomplete, stop, None)  # removes the temporary file

    def open(self, temporary: Path) -> None:
        raise NotImplementedError

    def write(self, row: Data) -> None:
        raise NotImplementedError

    def close(self) -> None:
        """Flush and close the temporary file (called at the end of every run)."""


class RunIncomplete(Exception):
    """Thrown into `sink_path` so that it drops the temporary file instead of committing."""


class WriteCSV(TableWriting, Step):
    """Writes every dict it receives as a row of a CSV file and passes the dict on unchanged.

    The columns are `columns`, or the fields of the first dict; a later dict that lacks one
    of them is an error naming the field (fields it has beyond them are not written). Image
    records are written as their path, lists and dicts (an embedding, a top-5) as JSON text,
    None as an empty cell.

    The file appears when the run completes; until then, and for good if the run fails or is
    stopped, the file that was there (if any) stays as it was. The file a sink wrote before
    (unchanged since) is replaced; any other existing file is refused unless `overwrite` is
    set."""

    Parameters: ClassVar[dict[str, Any]] = {
        "path": {
            "type": "string",
            "required": True,
            "path": True,
            "description": "the CSV file to write",
        },
        "columns": WRITE_COLUMNS,
        "overwrite": OVERWRITE,
        "delimiter": DELIMITER,
    }
    delimiter: str = ","
    _file: io.TextIOWrapper | None = None
    _writer: Any = None

    def open(self, temporary: Path) -> None:
        delimiter = delimiter_of(self.delimiter)
        self._file = temporary.open("w", newline="", encoding="utf-8", buffering=1 << 20)
        self._writer = csv.writer(self._file, delimiter=delimiter)

    def write(self, row: Data) -> None:
        if self._rows == 0:
            self._writer.writerow(self._fields or list(row))
        self._writer.writerow([csv_cell(value) for value in row.values()])

    def close(self) -> None:
        if self._rows == 0 and self._file is not None and self._fields:
            self._writer.writerow(self._fields)  # no rows: the header still says the columns
        file, self._file = self._file, None
        if file is not None:
            file.close()


def csv_cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, list | dict):
        return json.dumps(value, default=str)
    return value


class WriteJSONL(TableWriting, Step):
    """Writes every dict it receives as one line of JSON and passes it on unchanged.

    Every field is written (or only `columns`, when set: a dict lacking one is an error naming
    it). Image records are written as their path, arrays and tensors as lists, NaN as null;
    anything JSON cannot hold (a PIL image, bytes) as its text.

    The file appears when the run completes; if the run fails or is stopped, the file that was
    there (if any) stays as it was. The file a sink wrote before (unchanged since) is replaced;
    any other existing file is refused unless `overwrite` is set."""

    Parameters: ClassVar[dict[str, Any]] = {
        "path": {
            "type": "string",
            "required": True,
            "path": True,
            "description": "the JSONL file to write",
        },
        "columns": {
            "type": "list[string]",
            "default": [],
            "description": "fields to write, in this order (empty: every field of each dict)",
        },
        "overwrite": OVERWRITE,
    }
    _file: io.TextIOWrapper | None = None

    def open(self, temporary: Path) -> None:
        self._file = temporary.open("w", encoding="utf-8", buffering=1 << 20)

    def row(self, data: Data) -> Data:
        return plain_row(data, [str(c) for c in self.columns] if self.columns else None)

    def write(self, row: Data) -> None:
        assert self._file is not None
        self._file.write(json.dumps(row, default=str, ensure_ascii=False) + "\n")

    def close(self) -> None:
        file, self._file = self._file, None
        if file is not None:
            file.close()


class WriteParquet(TableWriting, Step):
    """Writes every dict it receives as a row of a Parquet file (pyarrow's ParquetWriter, in
    row groups of `rows_per_group`) and passes the dict on unchanged.

    The columns are `columns`, or the fields of the first dict; a later dict that lacks one
    of them is an error naming the field. Column types come from the first row group: numbers,
    text, booleans, and lists (a numpy `embedding` vector becomes a list<double> column, a
    top-5 a list of structs); image records are written as their path.

    The file appears when the run completes; if the run fails or is stopped, the file that was
    there (if any) stays as it was. The file a sink wrote before (unchanged since) is replaced;
    any other existing file is refused unless `overwrite` is set."""

    Parameters: ClassVar[dict[str, Any]] = {
        "path": {
            "type": "string",
            "required": True,
            "path": True,
            "description": "the Parquet file to write",
        },
        "columns": WRITE_COLUMNS,
        "overwrite": OVERWRITE,
        "rows_per_group": {
            "type": "int",
            "default": 8192,
            "description": "rows held in memory and written together as one row group",
        },
    }
    rows_per_group: int = 8192
    _temporary: Path | None = None
    _writer: pq.ParquetWriter | None = None
    _schema: pa.Schema | None = None
    _buffer: list[Data] = []

    def open(self, temporary: Path) -> None:
        self._temporary, self._writer, self._schema, self._buffer = temporary, None, None, []

    def write(self, row: Data) -> None:
        self._buffer.append(row)
        if len(self._buffer) >= max(1, int(self.rows_per_group)):
            self.flush()

    def flush(self) -> None:
        import pyarrow as pa
        from pyarrow import parquet

        rows, self._buffer = self._buffer, []
        if not rows:
            return
        try:
            table = pa.Table.from_pylist(rows, schema=self._schema)
        except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
            raise self.bad_rows(exc) from None
        if self._writer is None:
            assert self._temporary is not None
            self._schema = table.schema
            self._writer = parquet.ParquetWriter(self._temporary, table.schema)
        self._writer.write_table(table)

    def close(self) -> None:
        try:
            if self.ended_as == "done":
                self.flush()
                if self._writer is None and self._temporary is not None:
                    self.write_empty(self._temporary)
        finally:
            writer, self._writer, self._buffer = self._writer, None, []
            if writer is not None:
                writer.close()

    def write_empty(self, temporary: Path) -> None:
        """No dict arrived: a table of the columns asked for (of no type), and no rows."""
        import pyarrow as pa
        from pyarrow import parquet

        fields = self._fields or []
        parquet.write_table(pa.table({f: pa.array([], pa.null()) for f in fields}), temporary)

    def bad_rows(self, exc: Exception) -> NodeInputError:
        known = f" (types set by the first rows: {self._schema})" if self._schema else ""
        return NodeInputError(
            f"rows for {self._target} do not make a table{known}: {exc}; give each field one "
            "type in every dict (cast it upstream), or drop the field with columns"
        )
