"""The table readers and writers end to end: streaming in chunks, columns, limits, round
trips between formats, and sinks that never leave half a file or replace one unasked."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.parquet as pq  # type: ignore[import-untyped]
import pytest

from graphbook import Workflow, param, run_workflow, source, step
from graphbook.engine.executor import RunControl, RunResult
from graphbook.nodes import library_registry

Data = dict[str, Any]
REGISTRY = library_registry()
"""One registry for the file's runs: building one reads every node's source."""
ROWS: list[Data] = [
    {"id": i, "name": f"img_{i}.jpg", "score": i / 4, "keep": i % 2 == 0, "note": None}
    for i in range(10)
]


@step("Test/Rows")
@source()
@param("rows", "list", default=[])
@param("fail_after", "int", default=-1)
def rows_source(ctx: Any) -> Iterator[Data]:
    """Yields `rows`; raises after `fail_after` of them (when >= 0)."""
    for number, row in enumerate(ctx.rows):
        if number == ctx.fail_after:
            raise RuntimeError("the source broke midway")
        yield dict(row)


@pytest.fixture
def table_csv(tmp_path: Path) -> Path:
    path = tmp_path / "table.csv"
    lines = ["id,name,score,keep,note"]
    lines += [f"{r['id']},{r['name']},{r['score']},{str(r['keep']).lower()}," for r in ROWS]
    path.write_text("\n".join(lines) + "\n")
    return path


def run(workflow: Workflow, workers: int = 0, control: RunControl | None = None) -> RunResult:
    return run_workflow(workflow, collect=True, workers=workers, registry=REGISTRY, control=control)


def read(kind: str, **params: Any) -> list[Data]:
    workflow = Workflow()
    workflow.add(kind, id="src", **params)
    result = run(workflow)
    assert result.ok, result.errors
    return result.output("src")


def read_error(kind: str, **params: Any) -> str:
    workflow = Workflow()
    workflow.add(kind, id="src", **params)
    result = run(workflow)
    assert result.status == "failed" and result.errors
    return result.errors[0].error.message


def write(kind: str, rows: list[Data], fail_after: int = -1, **params: Any) -> RunResult:
    workflow = Workflow()
    made = workflow.add(rows_source, id="rows", rows=rows, fail_after=fail_after)
    workflow.connect(made, workflow.add(kind, id="sink", **params))
    return run(workflow)


def temporary_files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


# -- readers ----------------------------------------------------------------------------------
def test_csv_streams_in_chunks_with_inferred_types(table_csv: Path) -> None:
    assert read("ReadCSV", path=str(table_csv), chunk_rows=3) == ROWS
    assert read("ReadCSV", path=str(table_csv), chunk_rows=3, limit=4) == ROWS[:4]


def test_csv_columns_are_picked_in_order_and_a_missing_one_is_named(table_csv: Path) -> None:
    rows = read("ReadCSV", path=str(table_csv), columns=["score", "id"])
    assert rows[2] == {"score": 0.5, "id": 2} and list(rows[2]) == ["score", "id"]
    message = read_error("ReadCSV", path=str(table_csv), columns=["id", "label"])
    assert f"{table_csv} has no column 'label'" in message
    assert "'id', 'name', 'score', 'keep', 'note'" in message


def test_csv_delimiter(tmp_path: Path) -> None:
    path = tmp_path / "semi.csv"
    path.write_text("a;b\n1;x\n2;y\n")
    assert read("ReadCSV", path=str(path), delimiter=";") == [
        {"a": 1, "b": "x"},
        {"a": 2, "b": "y"},
    ]
    assert "not one character" in read_error("ReadCSV", path=str(path), delimiter=";;")


def test_a_missing_table_file_is_named(tmp_path: Path) -> None:
    for kind in ("ReadCSV", "ReadJSONL", "ReadParquet"):
        message = read_error(kind, path=str(tmp_path / "gone.table"))
        assert str(tmp_path / "gone.table") in message and "does not exist" in message


def test_jsonl_line_by_line_with_columns_and_bad_lines_by_number(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in ROWS[:3]) + "\n")
    assert read("ReadJSONL", path=str(path)) == ROWS[:3], "the blank line is skipped"
    assert read("ReadJSONL", path=str(path), columns=["name"], limit=2) == [
        {"name": "img_0.jpg"},
        {"name": "img_1.jpg"},
    ]
    missing = read_error("ReadJSONL", path=str(path), columns=["label"])
    assert f"{path} line 1 has no field 'label'" in missing and "'score'" in missing
    path.write_text('{"id": 1}\n{"id": 2,\n{"id": 3}\n')
    assert f"{path} line 2 is not valid JSON" in read_error("ReadJSONL", path=str(path))
    path.write_text('{"id": 1}\n[1, 2]\n')
    assert "line 2 is a JSON list, not an object" in read_error("ReadJSONL", path=str(path))


def test_parquet_iterates_batches_of_the_columns_asked_for(tmp_path: Path) -> None:
    path = tmp_path / "rows.parquet"
    pq.write_table(pa.Table.from_pylist(ROWS), path, row_group_size=4)
    assert read("ReadParquet", path=str(path), chunk_rows=3) == ROWS
    assert read("ReadParquet", path=str(path), columns=["name"], limit=1) == [{"name": "img_0.jpg"}]
    message = read_error("ReadParquet", path=str(path), columns=["embedding"])
    assert "has no column 'embedding'" in message and "'keep'" in message
    not_parquet = tmp_path / "fake.parquet"
    not_parquet.write_text("hello")
    assert "cannot be read as Parquet" in read_error("ReadParquet", path=str(not_parquet))


# -- writers ----------------------------------------------------------------------------------
def test_a_round_trip_csv_parquet_jsonl_keeps_every_row(table_csv: Path, tmp_path: Path) -> None:
    steps = [
        ("ReadCSV", table_csv, "WriteParquet", tmp_path / "t.parquet"),
        ("ReadParquet", tmp_path / "t.parquet", "WriteJSONL", tmp_path / "t.jsonl"),
        ("ReadJSONL", tmp_path / "t.jsonl", "WriteCSV", tmp_path / "back.csv"),
    ]
    for reader, source_path, writer, target in steps:
        workflow = Workflow()
        rows = workflow.add(reader, id="read", path=str(source_path), chunk_rows=4)
        workflow.connect(rows, workflow.add(writer, id="write", path=str(target)))
        result = run(workflow, workers=2)
        assert result.ok, result.errors
        assert result.output("write") == ROWS, "the sink hands every dict on unchanged"
    assert read("ReadJSONL", path=str(tmp_path / "t.jsonl")) == ROWS
    assert read("ReadCSV", path=str(tmp_path / "back.csv")) == ROWS
    assert temporary_files(tmp_path) == []


def test_an_existing_file_is_refused_unless_overwrite(tmp_path: Path) -> None:
    for kind, name in [("WriteCSV", "a.csv"), ("WriteJSONL", "a.jsonl"), ("WriteParquet", "a.pq")]:
        target = tmp_path / name
        target.write_text("precious")
        result = write(kind, ROWS, path=str(target))
        assert result.status == "failed"
        message = result.errors[0].error.message
        assert f"{target} exists" in message and "overwrite" in message
        assert result.counts["rows"]["out"] == 0, "refused before anything ran"
        assert target.read_text() == "precious"
        assert write(kind, ROWS[:2], path=str(target), overwrite=True).ok
        assert target.read_bytes() != b"precious"
    assert temporary_files(tmp_path) == []


@pytest.mark.parametrize("kind", ["WriteCSV", "WriteJSONL", "WriteParquet"])
def test_a_run_that_fails_midway_leaves_the_old_file_as_it_was(tmp_path: Path, kind: str) -> None:
    target = tmp_path / "out.table"
    target.write_text("the old file")
    many = [{**ROWS[i % 10], "id": i} for i in range(1000)]  # more than an inbox holds
    result = write(kind, many, fail_after=900, path=str(target), overwrite=True)
    assert result.status == "failed"
    assert "the source broke midway" in result.errors[0].error.message
    assert result.counts["sink"]["out"] >= 256, "rows were written to the temporary file"
    assert target.read_text() == "the old file"
    assert temporary_files(tmp_path) == []


def test_a_stopped_run_writes_no_file(tmp_path: Path) -> None:
    control = RunControl()

    @step("Test/StopAfterThree")
    def stop_after_three(ctx: Any, data: Data) -> None:
        if data["id"] == 2:
            control.stop()

    workflow = Workflow()
    rows = workflow.add(rows_source, rows=ROWS)
    stopper = workflow.add(stop_after_three)
    workflow.connect(rows, stopper)
    workflow.connect(stopper, workflow.add("WriteJSONL", path=str(tmp_path / "out.jsonl")))
    assert run(workflow, control=control).status == "stopped"
    assert list(tmp_path.iterdir()) == []


def test_later_dicts_need_the_first_dicts_fields(tmp_path: Path) -> None:
    rows = [{"a": 1, "b": 2}, {"a": 3}]
    for kind in ("WriteCSV", "WriteParquet"):
        result = write(kind, rows, path=str(tmp_path / "t"))
        message = result.errors[0].error.message
        assert "a dict has no field 'b', which the first dict" in message and "columns" in message
        assert not (tmp_path / "t").exists() and temporary_files(tmp_path) == []
    picked = write("WriteCSV", rows, path=str(tmp_path / "a.csv"), columns=["a"])
    assert picked.ok and (tmp_path / "a.csv").read_text().split() == ["a", "1", "3"]
    anything = write("WriteJSONL", rows, path=str(tmp_path / "t.jsonl"))
    assert anything.ok and read("ReadJSONL", path=str(tmp_path / "t.jsonl")) == rows


def test_image_records_and_arrays_are_written_plainly(tmp_path: Path) -> None:
    def row(i: int) -> Data:
        return {
            "image": {"type": "image", "value": f"/data/{i}.jpg"},
            "embedding": np.arange(3, dtype=np.float32) + i,
            "count": np.int64(i),
            "top": [{"label": "cat", "score": 0.5}],
        }

    workflow = Workflow()

    @step("Test/Arrays")
    @source()
    def arrays(ctx: Any) -> Iterator[Data]:
        yield from (row(i) for i in range(3))

    made = workflow.add(arrays)
    for kind, name in [("WriteParquet", "e.parquet"), ("WriteCSV", "e.csv"), ("WriteJSONL", "e.j")]:
        extra: Data = {"rows_per_group": 2} if kind == "WriteParquet" else {}
        workflow.connect(made, workflow.add(kind, path=str(tmp_path / name), **extra))
    assert run(workflow).ok
    table = pq.read_table(tmp_path / "e.parquet")
    assert pa.types.is_list(table.schema.field("embedding").type)
    assert pa.types.is_floating(table.schema.field("embedding").type.value_type)
    assert table.num_rows == 3 and pq.ParquetFile(tmp_path / "e.parquet").num_row_groups == 2
    first = table.to_pylist()[1]
    assert first == {
        "image": "/data/1.jpg",
        "embedding": [1.0, 2.0, 3.0],
        "count": 1,
        "top": [{"label": "cat", "score": 0.5}],
    }
    assert read("ReadJSONL", path=str(tmp_path / "e.j"))[1] == first
    csv_lines = (tmp_path / "e.csv").read_text().splitlines()
    assert csv_lines[0] == "image,embedding,count,top"
    top = '"[{""label"": ""cat"", ""score"": 0.5}]"'
    assert csv_lines[2] == f'/data/1.jpg,"[1.0, 2.0, 3.0]",1,{top}'


def test_a_parquet_column_keeps_the_type_of_its_first_rows(tmp_path: Path) -> None:
    rows: list[Data] = [{"x": 1}, {"x": "one"}]
    result = write("WriteParquet", rows, path=str(tmp_path / "t.parquet"), rows_per_group=1)
    message = result.errors[0].error.message
    assert "do not make a table" in message and "x: int64" in message
    assert list(tmp_path.iterdir()) == []


def test_the_packs_offer_their_nodes_documented_and_no_base_class() -> None:
    offered = {
        spec.name: spec.category
        for spec in REGISTRY
        if spec.pack in ("files", "tables", "datasets") and spec.pack_kind == "builtin"
    }
    assert offered == {
        "ImageFolder": "Sources",
        "Files": "Sources",
        "HuggingFaceDataset": "Sources",
        "TorchvisionDataset": "Sources",
        "ReadCSV": "Tables",
        "ReadJSONL": "Tables",
        "ReadParquet": "Tables",
        "WriteCSV": "Sinks",
        "WriteJSONL": "Sinks",
        "WriteParquet": "Sinks",
    }
    for name in offered:
        spec = REGISTRY.get(name)
        assert len(spec.doc) > 200, name
        assert all(param.description for param in spec.params), name
