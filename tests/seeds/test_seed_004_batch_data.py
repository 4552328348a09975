"""Seed 004 (Graphbook's "Batch Data" guide): its code samples run as written.

The samples are copied verbatim below. Two changes, both forced by the sample itself: the
functional MyMLModel uses `@param` without importing it, so `param` is added to its import
line; and `.to("cuda")` becomes `.to("cpu")` on a machine without CUDA. The class version's
`...` placeholder is filled with a `load_fn`, as its text asks of the reader.
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest
import torch
from PIL import Image

from graphbook import Workflow, run_workflow
from graphbook.nodes import library_registry

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"

FUNCTIONAL_LOAD = """
from graphbook import step, batch
from PIL import Image
from typing import List
import torch
import torchvision.transforms.functional as F

# Custom defined function that will execute in parallel
@staticmethod
def convert_to_tensor(item: dict) -> torch.Tensor:
    image_path = item["value"]
    pil_image = Image.open(image_path)
    return F.to_tensor(pil_image)

@step("LoadImages")
@batch(8, "image_paths", load_fn=convert_to_tensor)
@staticmethod
def on_load_images(tensors: List[torch.Tensor], items: List[dict], data: List[dict]):
    for tensor, d in zip(tensors, data):
        if d["tensor"] is None:
            d["tensor"] = []
        d["tensor"].append(tensor)
"""

FUNCTIONAL_MODEL = """
from graphbook import step, batch, param
from typing import List
import torch

@step("MyMLModel")
@batch(8, "image_paths", load_fn=convert_to_tensor)
@param("model", type="resource")
@torch.no_grad()
def on_load_images(ctx, images: List[torch.Tensor], items: List[dict], data: List[dict]):
    batch = torch.stack(images).to("cuda")
    outputs = ctx.model(batch)

    # (Option 1) Store the model's outputs in the items
    for output, item in zip(images, items):
        item["output"] = output

    # (Option 2) Store the model's outputs in the dict
    for output, d in zip(outputs, data):
        if d["output"] is None:
            d["output"] = []
        d["output"].append(output)
"""

CLASS_LOAD = """
from graphbook.steps import BatchStep
from PIL import Image
from typing import List
import torch
import torchvision.transforms.functional as F

class LoadImages(BatchStep):
    RequiresInput = True
    Parameters = {
        "batch_size": {"type": "number", "default": 8},
        "item_key": {"type": "string", "default": "image_paths"}
    }
    Outputs = ["out"]
    Category = ""

    def __init__(self, batch_size, item_key):
        super().__init__(batch_size, item_key)

    # Custom defined function that will execute in parallel
    @staticmethod
    def load_fn(item: dict) -> torch.Tensor:
        image_path = item["value"]
        pil_image = Image.open(image_path)
        return F.to_tensor(pil_image)

    @staticmethod
    def on_item_batch(tensors: List[torch.Tensor], items: List[dict], data: List[dict]):
        for tensor, d in zip(tensors, data):
            if d["tensor"] is None:
                d["tensor"] = []
            d["tensor"].append(tensor)
"""

CLASS_MODEL = """
from graphbook.steps import BatchStep
from typing import List
import torch

class MyMLModel(BatchStep):
    RequiresInput = True
    Parameters = {
        "batch_size": {"type": "number", "default": 8},
        "item_key": {"type": "string", "default": "image_paths"},
        "model": {"type": "resource"}
    }
    Outputs = ["out"]
    Category = ""

    def __init__(self, batch_size, item_key, model):
        super().__init__(batch_size, item_key)
        self.model = model

    load_fn = staticmethod(LoadImages.load_fn)

    @torch.no_grad()
    def on_item_batch(self, images: List[torch.Tensor], items: List[dict], data: List[dict]):
        batch = torch.stack(images).to("cuda")
        outputs = self.model(batch)

        # (Option 1) Store the model's outputs in the items
        for output, item in zip(images, items):
            item["output"] = output

        # (Option 2) Store the model's outputs in the dict
        for output, d in zip(outputs, data):
            if d["output"] is None:
                d["output"] = []
            d["output"].append(output)
"""

SUPPORT = """
import torch
from pathlib import Path
from graphbook import step, source, resource, param

@step("ImagePaths")
@source()
@param("folder", "string", required=True)
@param("per_dict", "int", default=3)
def image_paths(ctx):
    paths = sorted(Path(ctx.folder).glob("*.png"))
    for start in range(0, len(paths), ctx.per_dict):
        chunk = paths[start:start + ctx.per_dict]
        yield {
            "image_paths": [{"type": "image", "value": str(p)} for p in chunk],
            "tensor": None,
            "output": None,
        }

@resource("SeedModel")
@param("device", "string", default="cpu")
def seed_model(ctx):
    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Conv2d(3, 4, 3), torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(),
        torch.nn.Linear(4, 3),
    )
"""


def on_this_machine(code: str) -> str:
    return code.replace('"cuda"', repr(DEVICE))


@pytest.fixture
def images(tmp_path: Path) -> Path:
    folder = tmp_path / "images"
    folder.mkdir()
    for i in range(10):
        Image.new("RGB", (16, 12), (i * 20, 100, 200 - i * 10)).save(folder / f"{i:02d}.png")
    return folder


def write_nodes(folder: Path, *parts: str) -> Path:
    folder.mkdir()
    body = "\n".join(textwrap.dedent(p) for p in parts)
    (folder / "batch_steps.py").write_text(on_this_machine(body))
    (folder / "support.py").write_text(SUPPORT)
    return folder


def seed_workflow(images: Path) -> tuple[Workflow, str, str]:
    wf = Workflow()
    src = wf.add("ImagePaths", folder=str(images), per_dict=3)
    load = wf.add("LoadImages", batch_size=4)
    model = wf.add("SeedModel", device=DEVICE)
    infer = wf.add("MyMLModel", batch_size=4, model=model)
    wf.connect(src, load)
    wf.connect(load, infer)
    return wf, load.id, infer.id


def check_results(result: Any, load_id: str, infer_id: str) -> None:
    assert result.ok, [e.error.traceback for e in result.errors]
    loaded = result.output(load_id)
    assert [len(d["image_paths"]) for d in loaded] == [3, 3, 3, 1]
    for d in loaded:
        assert [tuple(t.shape) for t in d["tensor"]] == [(3, 12, 16)] * len(d["image_paths"])
    inferred = result.output(infer_id)
    for d in inferred:
        assert [tuple(o.shape) for o in d["output"]] == [(3,)] * len(d["image_paths"])
        assert all(item["output"].shape == (3, 12, 16) for item in d["image_paths"])


def test_functional_version_runs_as_written(
    tmp_path: Path, images: Path, backend: dict[str, Any]
) -> None:
    nodes = write_nodes(tmp_path / "custom_nodes", FUNCTIONAL_LOAD)
    model_file = nodes / "model_steps.py"
    model_file.write_text(
        "from graphbook_nodes.batch_steps import convert_to_tensor\n"
        + on_this_machine(textwrap.dedent(FUNCTIONAL_MODEL))
    )
    registry = library_registry()
    registry.load_folder(nodes)
    assert not registry.failures, registry.failures
    wf, load_id, infer_id = seed_workflow(images)
    result = run_workflow(wf, registry=registry, **backend, collect=True)
    check_results(result, load_id, infer_id)


def test_functional_versions_in_one_file_both_register(tmp_path: Path) -> None:
    """The guide puts both samples in custom_nodes/batch_steps.py; both functions are named
    on_load_images, yet both steps must be found."""
    nodes = write_nodes(tmp_path / "custom_nodes", FUNCTIONAL_LOAD, FUNCTIONAL_MODEL)
    registry = library_registry()
    registry.load_folder(nodes)
    assert not registry.failures, registry.failures
    assert "LoadImages" in registry and "MyMLModel" in registry


def test_class_version_runs_as_written(
    tmp_path: Path, images: Path, backend: dict[str, Any]
) -> None:
    nodes = write_nodes(tmp_path / "custom_nodes", CLASS_LOAD, CLASS_MODEL)
    registry = library_registry()
    registry.load_folder(nodes)
    assert not registry.failures, registry.failures
    wf, load_id, infer_id = seed_workflow(images)
    result = run_workflow(wf, registry=registry, **backend, collect=True)
    check_results(result, load_id, infer_id)
