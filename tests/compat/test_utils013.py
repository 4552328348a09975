"""The helpers 0.13 node files use, `graphbook.utils` and `graphbook.core.utils`."""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image

from graphbook import run_workflow


def test_image_nodes_using_utils_image_run(project: Path) -> None:
    result = run_workflow(
        project / "ImageTransforms.json", nodes=[project / "custom_nodes"], collect=True
    )
    assert result.ok, result.errors
    assert result.counts["2"] == {"out": 3}
    shown = result.outputs["2"]["out"][0]["img"]
    assert shown["type"] == "image"
    assert shown["value"].mode == "L" and shown["value"].size == (16, 8)


def test_every_import_path_holds_the_same_helpers() -> None:
    import graphbook.utils
    from graphbook.core import utils as core_utils
    from graphbook.utils import image, transform_function_string

    assert graphbook.utils.image is core_utils.image is image
    assert transform_function_string("def f(x):\n    return x + 1\n")(1) == 2
    assert graphbook.utils.image("a.png") == {"type": "image", "value": "a.png"}
    picture = Image.new("RGB", (4, 2))
    assert core_utils.image(picture)["value"] is picture
    with pytest.raises(TypeError, match=r"path \(str\) or a PIL image"):
        graphbook.utils.image(42)


def test_the_small_helpers_behave_as_in_013() -> None:
    from graphbook.core.utils import (
        ExecutionContext,
        convert_dict_values_to_list,
        is_batchable,
        transform_function_string,
        transform_json_log,
    )

    assert transform_function_string("def f(x):\n    return x + 1")(1) == 2
    with pytest.raises(ValueError, match="start with def"):
        transform_function_string("lambda x: x")
    assert is_batchable([1]) and not is_batchable((1,))
    logged = transform_json_log({"b": b"abc", "i": Image.new("RGB", (3, 2)), "n": [1, 2.5]})
    assert logged == {"b": "(bytes of length 3)", "i": "(PIL Image of size (3, 2))", "n": [1, 2.5]}
    d: dict[str, object] = {"a": 1, "b": [2]}
    convert_dict_values_to_list(d)
    assert d == {"a": [1], "b": [2]}
    ExecutionContext.update(node_id="7")
    assert ExecutionContext.get("node_id") == "7" and ExecutionContext.get("x", 3) == 3


def test_the_filter_guide_compiles_a_function_resource_it_is_handed(project: Path) -> None:
    """0.13's Function resource handed the source, ours the function; the
    filter guide's nodes call transform_function_string on it either way."""
    result = run_workflow(project / "Filter.json", nodes=[project / "custom_nodes"], collect=True)
    assert result.ok, result.errors
    for node_id in ("2", "3"):  # the class and the function form of the guide's Filter
        assert [d["value"] for d in result.output(node_id, "TRUE")] == [3, 4, 5]
        assert [d["value"] for d in result.output(node_id, "FALSE")] == [0, 1, 2]


def test_transform_function_string_takes_a_function_or_its_source() -> None:
    from graphbook.utils import transform_function_string

    def double(x: int) -> int:
        return x * 2

    assert transform_function_string(double) is double
    assert transform_function_string("def f(x):\n    return x * 3")(2) == 6
    with pytest.raises(TypeError, match=r"a `def \.\.\.` string\) or a function, not int"):
        transform_function_string(3)  # type: ignore[arg-type]
