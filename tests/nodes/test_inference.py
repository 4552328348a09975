"""How the image model steps run a model: precision (bf16 under autocast on the CPU, fp16 refused
there, bad values named), inference mode, channels-last weights on CUDA, a batch stacked once
(the workers' slab read where it lies) and only its kept images run."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest
import torch
from PIL import Image

from graphbook import Workflow, run_workflow
from graphbook.engine.executor import RunResult
from graphbook.events import Event, NodeLog
from graphbook.nodes.inference import autocast_dtype, check_precision, to_channels_last
from graphbook.nodes.models.apply import ApplyModel
from graphbook.nodes.preprocess import Unreadable, to_model_batch
from graphbook.resources import Resource
from graphbook.stacking import Loaded
from tests.nodes.test_models import Images, error_of

CUDA = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
COLOURS = {"red": (220, 40, 40), "green": (40, 220, 40), "blue": (40, 40, 220)}


def colour_net() -> torch.nn.Module:
    """A classifier whose class is the image's strongest colour: red, green or blue."""
    conv, linear = torch.nn.Conv2d(3, 3, 1), torch.nn.Linear(3, 3)
    with torch.no_grad():
        conv.weight.copy_(torch.eye(3).view(3, 3, 1, 1))
        linear.weight.copy_(4 * torch.eye(3))
        for bias in (conv.bias, linear.bias):
            assert bias is not None
            bias.zero_()
    pool, flat = torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten()
    return torch.nn.Sequential(conv, pool, flat, linear).eval()


def first_weight(net: torch.nn.Module) -> torch.Tensor:
    return next(net.parameters())


class ColourNet(Resource):
    """The test's model resource: colour_net on its device."""

    Parameters: ClassVar[dict[str, Any]] = {"device": {"type": "string", "default": "cpu"}}
    Category: ClassVar[str] = "Test"
    Gives: ClassVar[str] = "object"

    def value(self) -> torch.nn.Module:
        return colour_net()


class PlainModel(Resource):
    """A model that is not a torch module: a function of the batch."""

    Category: ClassVar[str] = "Test"
    Gives: ClassVar[str] = "object"

    def value(self) -> Any:
        return lambda batch: batch.mean(dim=(2, 3))


def coloured(folder: Path) -> list[str]:
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(1)
    paths = []
    for n, (name, rgb) in enumerate([*COLOURS.items(), *COLOURS.items()]):
        noise = rng.integers(-30, 30, (40, 48, 3))
        pixels = np.clip(np.array(rgb) + noise, 0, 255).astype(np.uint8)
        path = folder / f"{n}-{name}.jpg"
        Image.fromarray(pixels).save(path, quality=90)
        paths.append(str(path))
    return paths


def run(
    paths: list[str],
    step: str = "ClassifyImages",
    model: type[Resource] = ColourNet,
    events: list[Event] | None = None,
    **params: Any,
) -> RunResult:
    workflow = Workflow()
    source = workflow.add(Images, id="images", paths=paths)
    resource = workflow.add(model, id="model")
    node = workflow.add(step, id="step", model=resource, size=40, crop=32, **params)
    workflow.connect(source, node)
    sink = events.append if events is not None else (lambda event: None)
    return run_workflow(workflow, collect=True, continue_on_error=True, sink=sink)


# -- precision ---------------------------------------------------------------------------------
def test_bf16_on_the_cpu_gives_fp32_s_predictions(tmp_path: Path) -> None:
    paths = coloured(tmp_path / "images")
    labels = "red,green,blue"
    fp32 = run(paths, labels=labels, batch_size=4)
    bf16 = run(paths, labels=labels, batch_size=4, precision="bf16")
    assert fp32.ok and bf16.ok, (fp32.errors, bf16.errors)
    expected = [Path(p).stem.split("-")[1] for p in paths]
    assert [d["prediction"] for d in fp32.output("step")] == expected
    assert [d["prediction"] for d in bf16.output("step")] == expected
    for a, b in zip(fp32.output("step"), bf16.output("step"), strict=True):
        assert b["confidence"] == pytest.approx(a["confidence"], abs=2e-2)


def test_bf16_runs_the_model_in_bfloat16(tmp_path: Path) -> None:
    paths = coloured(tmp_path / "images")[:3]
    fp32 = run(paths, step="ApplyModel", preset="none")
    bf16 = run(paths, step="ApplyModel", preset="none", precision="BF16")
    assert fp32.ok and bf16.ok, (fp32.errors, bf16.errors)
    for a, b in zip(fp32.output("step"), bf16.output("step"), strict=True):
        assert b["output"].dtype == np.float32, "outputs come back as float32"
        assert np.allclose(a["output"], b["output"], rtol=2e-2, atol=2e-2)
        assert not np.array_equal(a["output"], b["output"]), "bfloat16 rounds: not fp32's bits"


def test_fp16_on_the_cpu_is_refused_with_what_runs_there(tmp_path: Path) -> None:
    message = error_of(run(coloured(tmp_path / "images")[:1], precision="fp16"))
    assert "precision fp16 runs on CUDA, but the model is on cpu" in message
    assert "set precision to bf16 or fp32" in message


def test_an_unknown_precision_names_the_choices(tmp_path: Path) -> None:
    message = error_of(run(coloured(tmp_path / "images")[:1], precision="fp8"))
    assert message == 'precision is "fp32", "bf16" or "fp16", not \'fp8\''
    with pytest.raises(Exception, match="not 'half'"):
        check_precision("half")


def test_precision_on_a_model_that_is_not_torch_s_says_so(tmp_path: Path) -> None:
    events: list[Event] = []
    paths = coloured(tmp_path / "images")[:2]
    result = run(paths, step="ApplyModel", model=PlainModel, events=events, precision="bf16")
    assert result.ok, result.errors
    logs = [str(e.message) for e in events if isinstance(e, NodeLog)]
    assert any("precision bf16 applies to torch models" in m for m in logs), logs
    assert result.output("step")[0]["output"].shape == (3,)


def test_autocast_dtypes_by_device() -> None:
    cpu = torch.device("cpu")
    assert autocast_dtype("fp32", cpu) is None
    assert autocast_dtype("bf16", cpu) == torch.bfloat16
    with pytest.raises(Exception, match="precision bf16 runs on CUDA or the CPU, but the model"):
        autocast_dtype("bf16", torch.device("meta"))


# -- how a batch meets the model ---------------------------------------------------------------
def test_the_forward_pass_runs_under_inference_mode() -> None:
    step = ApplyModel(model=colour_net(), size=0, crop=0)
    images = [torch.full((3, 8, 8), 200, dtype=torch.uint8) for _ in range(2)]
    output = step.forward(step.model, images)
    assert output.is_inference() and not output.requires_grad


def test_a_batch_laid_out_by_the_workers_is_read_where_it_lies() -> None:
    values = [torch.zeros(3, 2, 2, dtype=torch.uint8) for _ in range(2)]
    slab = torch.full((2, 3, 2, 2), 255, dtype=torch.uint8)
    batch = to_model_batch(Loaded(values, stacked=slab), "none")
    assert batch.min() == 1.0, "the slab's pixels, not a stack of the list's"
    assert to_model_batch(values, "none").max() == 0.0


def test_only_the_kept_images_of_a_batch_are_run() -> None:
    step = ApplyModel(model=colour_net(), preset="none", size=0, crop=0, on_error="skip")
    red, blue = (torch.zeros(3, 4, 4, dtype=torch.uint8) for _ in range(2))
    red[0], blue[2] = 255, 255
    data: list[dict[str, Any]] = [{"image": f"{n}.jpg"} for n in range(3)]
    outputs = Loaded([red, Unreadable("1.jpg", "truncated"), blue])
    step.on_item_batch(outputs, [d["image"] for d in data], data)
    assert int(np.argmax(data[0]["output"])) == 0 and int(np.argmax(data[2]["output"])) == 2
    assert "output" not in data[1] and step.skipped == 1
    assert step.route(data[1]) is None and step.route(data[0]) == "out"


def test_channels_last_weights_once() -> None:
    net = colour_net()
    to_channels_last(net)
    weight = first_weight(net)
    assert weight.is_contiguous(memory_format=torch.channels_last)
    weight.data = weight.data.contiguous()
    to_channels_last(net)
    assert weight.is_contiguous(), "converted once: a second call leaves it be"


# -- on CUDA -----------------------------------------------------------------------------------
class CudaColourNet(ColourNet):
    Parameters: ClassVar[dict[str, Any]] = {"device": {"type": "string", "default": "cuda"}}


@CUDA
@pytest.mark.parametrize("precision", ["bf16", "fp16"])
def test_reduced_precision_on_cuda_gives_fp32_s_predictions(tmp_path: Path, precision: str) -> None:
    paths = coloured(tmp_path / "images")
    fp32 = run(paths, model=CudaColourNet, labels="red,green,blue", decode="cpu")
    reduced = run(paths, model=CudaColourNet, labels="red,green,blue", precision=precision)
    assert fp32.ok and reduced.ok, (fp32.errors, reduced.errors)
    assert [d["prediction"] for d in reduced.output("step")] == [
        d["prediction"] for d in fp32.output("step")
    ]


@CUDA
def test_on_cuda_the_model_runs_channels_last() -> None:
    net = colour_net().cuda()
    step = ApplyModel(model=net, size=0, crop=0, decode="cpu")
    step.forward(net, [torch.zeros(3, 8, 8, dtype=torch.uint8)])
    assert first_weight(net).is_contiguous(memory_format=torch.channels_last)
