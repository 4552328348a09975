"""A source's `{output: value}` hands on the value itself, as Graphbook 0.13 does."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from graphbook import run_workflow


def test_a_function_source_yielding_a_named_output_sends_the_plain_value(project: Path) -> None:
    result = run_workflow(project / "Links.json", nodes=[project / "custom_nodes"], collect=True)
    assert result.ok, result.errors
    outputs: dict[str, Any] = result.outputs  # plain values, not dicts: what this test is about
    assert outputs["0"] == {"url": ["http://127.0.0.1/index.html"]}
    assert outputs["1"] == {"out": ["http://127.0.0.1/index.html"]}


def test_a_class_source_returning_one_value_sends_it_as_one_item(project: Path) -> None:
    run_workflow(project / "Links.json", nodes=[project / "custom_nodes"])
    collected = [json.loads(line) for line in (project / "collected.jsonl").read_text().split()]
    assert sorted(collected) == ["http://127.0.0.1/about.html", "http://127.0.0.1/index.html"]


def test_a_generator_source_yielding_out_sends_each_link(project: Path) -> None:
    result = run_workflow(project / "Routing.json", nodes=[project / "custom_nodes"], collect=True)
    links: list[Any] = result.outputs["0"]["out"]
    assert links == [f"http://127.0.0.1/page{i}.html" for i in range(12)]
