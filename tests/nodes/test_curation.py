"""The curation pack end to end: filters, routes, samples, splits, de-duplication, field edits."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path
from typing import Any

import pytest

from graphbook import Workflow, WorkflowError, run_workflow
from graphbook.engine.executor import RunResult
from graphbook.nodes import library_registry
from graphbook.nodes.curation.near_duplicates import HammingIndex

Rows = list[dict[str, Any]]
REGISTRY = library_registry()
"""Built once: building it reads every node's source (about a second a run)."""


def run(tmp_path: Path, rows: Rows, node: str, workers: int = 0, **params: Any) -> RunResult:
    """LoadJSONL of `rows` -> `node` (id "node") with `params`, collected."""
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    workflow = Workflow()
    source = workflow.add("LoadJSONL", id="rows", jsonl_path=str(path))
    workflow.connect(source, workflow.add(node, id="node", **params))
    return run_workflow(workflow, registry=REGISTRY.copy(), collect=True, workers=workers)


def ok(result: RunResult) -> RunResult:
    assert result.ok, [e.error.message for e in result.errors]
    return result


def error(result: RunResult) -> str:
    assert result.status == "failed" and result.errors, result.status
    assert result.errors[0].node_id == "node"
    return result.errors[0].error.message


def column(dicts: Rows, name: str = "i") -> list[Any]:
    return [d[name] for d in dicts]


ANIMALS = [
    {"i": 0, "label": "cat", "confidence": 0.9},
    {"i": 1, "label": "dog", "confidence": 0.95},
    {"i": 2, "label": "dog", "confidence": 0.5},
    {"i": 3, "label": "bird", "confidence": 0.85},
    {"i": 4, "label": "cat", "confidence": 0.3},
]


def test_every_node_is_in_the_curation_section_with_help_and_described_parameters() -> None:
    specs = [spec for spec in REGISTRY if spec.pack == "curation"]
    assert len(specs) == 14
    for spec in specs:
        assert spec.category == "Curation" and len(spec.doc) > 80, spec.name
        assert all(param.description for param in spec.params), spec.name


# -- Filter -----------------------------------------------------------------------------------
def test_filter_keeps_what_the_expression_accepts(tmp_path: Path) -> None:
    result = ok(run(tmp_path, ANIMALS, "Filter", expression='confidence >= 0.8 and label != "cat"'))
    assert column(result.output("node", "keep")) == [1, 3]
    assert column(result.output("node", "drop")) == [0, 2, 4]
    result = ok(run(tmp_path, ANIMALS, "Filter", expression='data["label"] == "cat"'))
    assert column(result.output("node", "keep")) == [0, 4]


def test_filter_names_a_missing_field_and_lists_the_dicts_fields(tmp_path: Path) -> None:
    message = error(run(tmp_path, ANIMALS, "Filter", expression="score > 0.5"))
    assert "'score'" in message and "'label', 'confidence'" in message


def test_filter_with_a_syntax_error_fails_before_the_run_starts(tmp_path: Path) -> None:
    with pytest.raises(WorkflowError) as refused:  # the expression is declared: checked first
        run(tmp_path, ANIMALS, "Filter", expression="confidence >")
    (problem,) = refused.value.problems
    assert problem.node_id == "node" and "not a Python expression" in problem.message


# -- RouteByField, Limit ----------------------------------------------------------------------
def test_threshold_keeps_numbers_at_least_the_minimum_and_names_a_non_number(
    tmp_path: Path,
) -> None:
    result = ok(run(tmp_path, ANIMALS, "Threshold", field="confidence", minimum=0.85))
    assert column(result.output("node", "keep")) == [0, 1, 3]
    assert column(result.output("node", "drop")) == [2, 4]
    message = error(run(tmp_path, ANIMALS, "Threshold", field="label", minimum=0.5))
    assert "'label'" in message and "not a number" in message


def test_route_by_field_compares_the_value_as_text(tmp_path: Path) -> None:
    result = ok(run(tmp_path, ANIMALS, "RouteByField", field="label", values=["cat", "bird"]))
    assert column(result.output("node", "match")) == [0, 3, 4]
    assert column(result.output("node", "other")) == [1, 2]
    result = ok(run(tmp_path, ANIMALS, "RouteByField", field="i", values=["2", "4"]))
    assert column(result.output("node", "match")) == [2, 4]


def test_route_by_field_fails_on_a_missing_field_unless_told_other(tmp_path: Path) -> None:
    rows: Rows = [*ANIMALS, {"i": 5}]
    assert "'label'" in error(run(tmp_path, rows, "RouteByField", field="label", values=["cat"]))
    result = run(tmp_path, rows, "RouteByField", field="label", values=["cat"], missing="other")
    assert column(ok(result).output("node", "other")) == [1, 2, 3, 5]


def test_limit_hands_on_the_first_dicts(tmp_path: Path) -> None:
    rows = [{"i": i} for i in range(50)]
    assert column(ok(run(tmp_path, rows, "Limit", count=7)).output("node")) == list(range(7))
    assert ok(run(tmp_path, rows, "Limit", count=0)).output("node") == []
    assert "0 or more" in error(run(tmp_path, rows, "Limit", count=-1))


# -- Sample, RandomSplit ----------------------------------------------------------------------
ROWS = [{"i": i, "path": f"img/{i:04d}.jpg"} for i in range(400)]


def test_sample_by_fraction_is_repeatable_by_seed(tmp_path: Path) -> None:
    first = ok(run(tmp_path, ROWS, "Sample", fraction=0.25, seed=3))
    again = ok(run(tmp_path, ROWS, "Sample", fraction=0.25, seed=3))
    other = ok(run(tmp_path, ROWS, "Sample", fraction=0.25, seed=4))
    chosen = column(first.output("node"))
    assert chosen == column(again.output("node")) != column(other.output("node"))
    assert 60 < len(chosen) < 140
    assert sorted(chosen + column(first.output("node", "rest"))) == list(range(400))


def test_sample_by_count_takes_exactly_that_many_in_input_order(tmp_path: Path) -> None:
    first = ok(run(tmp_path, ROWS, "Sample", count=30, seed=1, workers=2))
    chosen = column(first.output("node"))
    assert len(chosen) == 30 and chosen == sorted(chosen)
    assert chosen == column(ok(run(tmp_path, ROWS, "Sample", count=30, seed=1)).output("node"))
    assert chosen != column(ok(run(tmp_path, ROWS, "Sample", count=30, seed=2)).output("node"))
    assert max(chosen) > 200, "a reservoir reaches the whole input, not its start"
    rest = column(first.output("node", "rest"))
    assert sorted(chosen + rest) == list(range(400))
    few = ok(run(tmp_path, ROWS[:5], "Sample", count=30))
    assert column(few.output("node")) == [0, 1, 2, 3, 4]


def test_a_sample_by_count_flows_on_to_the_next_node(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in ROWS), encoding="utf-8")
    workflow = Workflow()
    source = workflow.add("LoadJSONL", id="rows", jsonl_path=str(path))
    sample = workflow.add("Sample", id="sample", count=20, seed=1)
    workflow.connect(source, sample)
    workflow.connect(sample, workflow.add("Filter", id="node", expression="i % 2 == 0"))
    result = ok(run_workflow(workflow, registry=REGISTRY.copy(), collect=True))
    chosen = column(result.output("sample"))
    assert column(result.output("node", "keep")) == [i for i in chosen if i % 2 == 0]
    assert result.counts["node"]["keep"] + result.counts["node"]["drop"] == 20


def test_sample_refuses_a_fraction_outside_0_to_1(tmp_path: Path) -> None:
    assert "from 0 to 1" in error(run(tmp_path, ROWS, "Sample", fraction=1.5))


def test_random_split_shares_and_repeats(tmp_path: Path) -> None:
    params: dict[str, Any] = {"val_fraction": 0.2, "test_fraction": 0.1, "seed": 5}
    first = ok(run(tmp_path, ROWS, "RandomSplit", **params))
    sides = {side: column(first.output("node", side)) for side in ("train", "val", "test")}
    assert 50 < len(sides["val"]) < 110 and 15 < len(sides["test"]) < 65
    assert sorted(sides["train"] + sides["val"] + sides["test"]) == list(range(400))
    again = ok(run(tmp_path, ROWS, "RandomSplit", **params))
    assert column(again.output("node", "val")) == sides["val"]


def test_random_split_by_a_field_is_stable_when_the_order_changes(tmp_path: Path) -> None:
    forward = ok(run(tmp_path, ROWS, "RandomSplit", by="path", seed=2))
    backward = ok(run(tmp_path, ROWS[::-1], "RandomSplit", by="path", seed=2))
    assert sorted(column(forward.output("node", "val"))) == sorted(
        column(backward.output("node", "val"))
    )
    more = ok(run(tmp_path, ROWS, "RandomSplit", by="path", seed=2, val_fraction=0.3))
    assert set(column(forward.output("node", "val"))) < set(column(more.output("node", "val")))
    assert "add up to more than 1" in error(
        run(tmp_path, ROWS, "RandomSplit", val_fraction=0.7, test_fraction=0.5)
    )
    assert "'missing'" in error(run(tmp_path, ROWS, "RandomSplit", by="missing"))


# -- exact duplicates -------------------------------------------------------------------------
def test_deduplicate_exact_by_fields_and_by_the_whole_dict(tmp_path: Path) -> None:
    rows = [
        {"url": "a", "n": 1},
        {"url": "b", "n": 1},
        {"url": "a", "n": 2},
        {"url": "b", "n": 1},
    ]
    result = ok(run(tmp_path, rows, "DeduplicateExact", fields=["url"]))
    assert column(result.output("node", "unique"), "n") == [1, 1]
    assert column(result.output("node", "duplicate"), "duplicate_of") == ["a", "b"]
    result = ok(run(tmp_path, rows, "DeduplicateExact"))
    assert [d["url"] for d in result.output("node", "unique")] == ["a", "b", "a"]
    assert result.output("node", "duplicate") == [{"url": "b", "n": 1, "duplicate_of": 1}]
    result = ok(run(tmp_path, rows, "DeduplicateExact", fields=["url", "n"]))
    assert column(result.output("node", "duplicate"), "duplicate_of") == [["b", 1]]
    assert "'nope'" in error(run(tmp_path, rows, "DeduplicateExact", fields=["nope"]))


@pytest.mark.parametrize("workers", [0, 2])
def test_deduplicate_files_finds_the_same_bytes_under_other_names(
    tmp_path: Path, workers: int
) -> None:
    for name, text in [("a.bin", "one"), ("b.bin", "two"), ("c.bin", "one"), ("d.bin", "two")]:
        (tmp_path / name).write_text(text)
    rows = [{"image": str(tmp_path / f"{n}.bin")} for n in "abc"] + [
        {"image": {"type": "image", "value": str(tmp_path / "d.bin")}}
    ]
    result = ok(run(tmp_path, rows, "DeduplicateFiles", workers=workers))
    assert [Path(d["image"]).name for d in result.output("node", "unique")] == ["a.bin", "b.bin"]
    duplicates = result.output("node", "duplicate")
    assert [Path(d["duplicate_of"]).name for d in duplicates] == ["a.bin", "b.bin"]
    assert len({d["sha256"] for d in result.output("node", "unique")}) == 2


def test_deduplicate_files_fails_on_a_missing_file_or_skips_it(tmp_path: Path) -> None:
    (tmp_path / "a.bin").write_text("one")
    rows = [{"image": str(tmp_path / "a.bin")}, {"image": str(tmp_path / "gone.bin")}]
    message = error(run(tmp_path, rows, "DeduplicateFiles"))
    assert "gone.bin" in message and "on_error" in message
    result = ok(run(tmp_path, rows, "DeduplicateFiles", on_error="skip"))
    assert len(result.output("node", "unique")) == 1 and not result.output("node", "duplicate")


# -- near-duplicate images --------------------------------------------------------------------
def pattern(path: Path, seed: int, size: tuple[int, int] = (64, 48)) -> Path:
    """A picture of its own: a random 5x4 colour grid blown up smoothly."""
    from PIL import Image

    rng = random.Random(seed)
    grid = Image.new("RGB", (5, 4))
    grid.putdata([(rng.randrange(256), rng.randrange(256), rng.randrange(256)) for _ in range(20)])
    grid.resize(size, Image.Resampling.BICUBIC).save(path)
    return path


@pytest.fixture
def photos(tmp_path: Path) -> list[Path]:
    """Four different pictures, then a larger re-encoded JPEG copy of the second."""
    from PIL import Image

    paths = [pattern(tmp_path / f"photo{n}.png", seed=n) for n in range(1, 5)]
    copy = tmp_path / "copy.jpg"
    with Image.open(paths[1]) as image:
        image.resize((320, 240)).save(copy, quality=85)
    return [*paths, copy]


@pytest.mark.parametrize("workers", [0, 2])
def test_deduplicate_images_finds_a_resized_jpeg_copy(
    tmp_path: Path, photos: list[Path], workers: int
) -> None:
    rows = [{"image": {"type": "image", "value": str(path)}} for path in photos]
    result = ok(run(tmp_path, rows, "DeduplicateImages", workers=workers, batch_size=2))
    unique = result.output("node", "unique")
    assert [d["image"]["value"] for d in unique] == [str(p) for p in photos[:4]]
    assert all(len(d["phash"]) == 16 for d in unique)
    [duplicate] = result.output("node", "duplicate")
    assert duplicate["duplicate_of"] == str(photos[1]) and duplicate["distance"] <= 4
    exact = ok(run(tmp_path, rows, "DeduplicateImages", workers=workers, max_distance=0))
    assert len(exact.output("node", "unique")) + len(exact.output("node", "duplicate")) == 5


def test_deduplicate_images_keeps_the_first_seen(tmp_path: Path, photos: list[Path]) -> None:
    rows = [{"image": str(path)} for path in reversed(photos)]
    result = ok(run(tmp_path, rows, "DeduplicateImages"))
    [duplicate] = result.output("node", "duplicate")
    assert duplicate["image"] == str(photos[1]) and duplicate["duplicate_of"] == str(photos[4])


@pytest.mark.parametrize("workers", [0, 2])
def test_an_unreadable_image_fails_naming_the_file_or_is_skipped(
    tmp_path: Path, photos: list[Path], workers: int
) -> None:
    broken = tmp_path / "broken.jpg"
    broken.write_bytes(b"\xff\xd8\xff not a jpeg")
    rows = [{"image": str(photos[0])}, {"image": str(broken)}, {"image": str(photos[2])}]
    message = error(run(tmp_path, rows, "DeduplicateImages", workers=workers))
    assert "broken.jpg" in message and "on_error" in message
    result = ok(run(tmp_path, rows, "DeduplicateImages", workers=workers, on_error="skip"))
    assert [d["image"] for d in result.output("node", "unique")] == [str(photos[0]), str(photos[2])]


def test_deduplicate_images_refuses_bad_settings_before_data_flows(tmp_path: Path) -> None:
    rows = [{"image": "x.jpg"}]
    message = error(run(tmp_path, rows, "DeduplicateImages", max_distance=40))
    assert "max_distance is 40" in message
    message = error(run(tmp_path, rows, "DeduplicateImages", on_error="maybe"))
    assert "on_error is 'maybe'" in message
    listed = [{"image": ["a.jpg", "b.jpg"]}]
    assert "one image per dict" in error(run(tmp_path, listed, "DeduplicateImages"))


def test_the_hamming_index_finds_neighbours_without_comparing_all_pairs() -> None:
    rng = random.Random(0)
    index = HammingIndex(4)
    for n in range(20_000):
        hashed = rng.getrandbits(64)
        assert index.nearest(hashed) is None
        index.add(hashed, n)
    assert index.comparisons < 20_000 * 20, "quadratic would be 200 million"
    stored = index.hashes[1234]
    assert index.nearest(stored ^ 0b1011) == (1234, 3)
    far = stored ^ 0b11111  # five bits: beyond max_distance
    assert index.nearest(far) is None or index.nearest(far) != (1234, 5)


def test_the_hamming_index_agrees_with_brute_force() -> None:
    rng = random.Random(1)
    bases = [rng.getrandbits(64) for _ in range(50)]
    index = HammingIndex(6)
    for n, base in enumerate(bases):
        index.add(base, n)
    for _ in range(300):
        query = rng.choice(bases) ^ rng.getrandbits(64) & rng.getrandbits(64) & rng.getrandbits(64)
        brute = min((((b ^ query).bit_count(), n) for n, b in enumerate(bases)))
        expected = (brute[1], brute[0]) if brute[0] <= 6 else None
        assert index.nearest(query) == expected


# -- near-duplicate embeddings ----------------------------------------------------------------
def turned(angle_cos: float) -> list[float]:
    """A unit vector whose cosine with [1, 0, 0] is `angle_cos`."""
    return [angle_cos, math.sqrt(1 - angle_cos**2), 0.0]


def test_deduplicate_embeddings_by_cosine(tmp_path: Path) -> None:
    rows = [
        {"image": {"type": "image", "value": "a.jpg"}, "embedding": [2.0, 0.0, 0.0]},
        {"image": {"type": "image", "value": "b.jpg"}, "embedding": turned(0.99)},
        {"image": {"type": "image", "value": "c.jpg"}, "embedding": turned(0.5)},
        {"image": {"type": "image", "value": "d.jpg"}, "embedding": [0.0, 0.0, 3.0]},
    ]
    result = ok(run(tmp_path, rows, "DeduplicateEmbeddings"))
    unique = [d["image"]["value"] for d in result.output("node", "unique")]
    assert unique == ["a.jpg", "c.jpg", "d.jpg"]
    [duplicate] = result.output("node", "duplicate")
    assert duplicate["duplicate_of"] == "a.jpg" and duplicate["similarity"] == pytest.approx(0.99)
    loose = ok(run(tmp_path, rows, "DeduplicateEmbeddings", threshold=0.4))
    assert len(loose.output("node", "duplicate")) == 2


def test_deduplicate_embeddings_grows_past_its_first_block(tmp_path: Path) -> None:
    rows = [{"id": n, "vec": [1.0 if k == n else 0.0 for k in range(100)]} for n in range(100)]
    rows.append({"id": "again", "vec": [0.0] * 99 + [5.0]})
    result = ok(run(tmp_path, rows, "DeduplicateEmbeddings", field="vec", id_field="id"))
    assert len(result.output("node", "unique")) == 100
    assert result.output("node", "duplicate")[0]["duplicate_of"] == 99


def test_deduplicate_embeddings_explains_bad_vectors(tmp_path: Path) -> None:
    rows = [{"image": "a", "embedding": [1.0, 0.0]}, {"image": "b", "embedding": [1.0, 0.0, 0.0]}]
    assert "has 3 values, but the first dict's had 2" in error(
        run(tmp_path, rows, "DeduplicateEmbeddings")
    )
    rows = [{"image": "a", "vector": [1.0, 0.0]}]
    message = error(run(tmp_path, rows, "DeduplicateEmbeddings"))
    assert "'embedding'" in message and "'vector'" in message
    rows = [{"image": "a", "embedding": [0.0, 0.0]}]
    assert "all zeros" in error(run(tmp_path, rows, "DeduplicateEmbeddings"))


# -- field edits ------------------------------------------------------------------------------
def test_set_field_from_an_expression(tmp_path: Path) -> None:
    result = ok(run(tmp_path, ANIMALS[:2], "SetField", field="label", value="label.upper()"))
    assert column(result.output("node"), "label") == ["CAT", "DOG"]
    result = ok(run(tmp_path, ANIMALS[:2], "SetField", field="pct", value="confidence * 100"))
    assert column(result.output("node"), "pct") == [90.0, 95.0]
    result = ok(run(tmp_path, ANIMALS[:1], "SetField", field="state", value='"fixed"'))
    assert result.output("node")[0]["state"] == "fixed"
    message = error(run(tmp_path, ANIMALS[:1], "SetField", field="state", value="fixed"))
    assert "'fixed'" in message and "quotes" in message


def test_rename_fields_keeps_order_and_swaps(tmp_path: Path) -> None:
    mapping = {"label": "class", "confidence": "score"}
    [renamed] = ok(run(tmp_path, ANIMALS[:1], "RenameFields", mapping=mapping)).output("node")
    assert list(renamed.items()) == [("i", 0), ("class", "cat"), ("score", 0.9)]
    swap = {"label": "confidence", "confidence": "label"}
    [swapped] = ok(run(tmp_path, ANIMALS[:1], "RenameFields", mapping=swap)).output("node")
    assert swapped == {"i": 0, "confidence": "cat", "label": 0.9}


def test_rename_fields_errors(tmp_path: Path) -> None:
    message = error(run(tmp_path, ANIMALS, "RenameFields", mapping={"pred": "label2"}))
    assert "'pred'" in message and "'label'" in message
    result = run(tmp_path, ANIMALS, "RenameFields", mapping={"pred": "x"}, missing="ignore")
    assert ok(result).output("node")[0] == ANIMALS[0]
    assert "overwrite" in error(run(tmp_path, ANIMALS, "RenameFields", mapping={"i": "label"}))


def test_drop_and_keep_fields(tmp_path: Path) -> None:
    result = ok(run(tmp_path, ANIMALS[:1], "DropFields", fields=["confidence", "nope"]))
    assert result.output("node") == [{"i": 0, "label": "cat"}]
    assert "'nope'" in error(run(tmp_path, ANIMALS, "DropFields", fields=["nope"], missing="fail"))
    result = ok(run(tmp_path, ANIMALS[:1], "KeepFields", fields=["label", "i"]))
    assert list(result.output("node")[0].items()) == [("label", "cat"), ("i", 0)]
    assert "'nope'" in error(run(tmp_path, ANIMALS, "KeepFields", fields=["nope"]))
