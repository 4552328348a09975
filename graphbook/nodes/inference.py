"""Running a model on batches of images: the base of the library's image model steps
(ClassifyImages, EmbedImages, ApplyModel, CaptionImages), their parameters, and how a batch
meets the model.

Images are decoded in the load workers (graphbook/nodes/preprocess.py), or with `decode` "gpu"
read there and decoded on the model's GPU (graphbook/nodes/gpudecode.py); the batch is
normalised on the model's device in channels-last memory format and run under
`torch.inference_mode()`. On CUDA a torch model's weights are put in channels-last format too,
once (convolutions then run in the layout their input comes in). `precision` "bf16" or "fp16"
runs a torch model under `torch.autocast` on its device: bf16 on CUDA (GPUs that have it) and on
the CPU, fp16 on CUDA only (refused on the CPU, whose float16 kernels are few and slow: bf16 is
the CPU's half precision). ONNX models and Hugging Face pipelines run as they were loaded.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from graphbook.lifecycle import BatchStep
from graphbook.nodes.common import Data, NodeInputError, targets
from graphbook.nodes.gpudecode import JpegBytes, choose_decode, decode_batch, device_facts
from graphbook.nodes.preprocess import (
    ImageLoader,
    Mode,
    Unreadable,
    check_on_error,
    to_model_batch,
)

if TYPE_CHECKING:
    import torch

Precision = Literal["fp32", "bf16", "fp16"]
PRECISIONS: tuple[Precision, ...] = ("fp32", "bf16", "fp16")
CHANNELS_LAST = "_graphbook_channels_last"
"""Marks a model whose weights were put in channels-last memory format."""


def is_pipeline(model: Any) -> bool:
    transformers = sys.modules.get("transformers")
    pipelines = getattr(transformers, "Pipeline", None) if transformers else None
    return pipelines is not None and isinstance(model, pipelines)


def is_module(model: Any) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(model, torch.nn.Module)


def device_of(model: Any) -> torch.device:
    """The device of the model's first parameter; the CPU for one without (ONNX, ...)."""
    import torch

    parameters = getattr(model, "parameters", None)
    if callable(parameters):
        for parameter in parameters():
            return parameter.device  # type: ignore[no-any-return]
    return torch.device("cpu")


# -- precision ---------------------------------------------------------------------------------
def check_precision(value: Any) -> Precision:
    text = str(value or "").strip().lower()
    for precision in PRECISIONS:
        if text == precision:
            return precision
    raise NodeInputError(f'precision is "fp32", "bf16" or "fp16", not {value!r}')


def autocast_dtype(precision: Precision, device: torch.device) -> torch.dtype | None:
    """The dtype `torch.autocast` runs a model on `device` in (None: fp32, no autocast); a
    precision the device cannot run is refused, saying what it can."""
    import torch

    if precision == "fp32":
        return None
    dtype = torch.bfloat16 if precision == "bf16" else torch.float16
    if device.type == "cuda":
        with torch.cuda.device(device):
            if precision == "bf16" and not torch.cuda.is_bf16_supported(including_emulation=False):
                name = torch.cuda.get_device_name(device)
                raise NodeInputError(
                    f"precision is bf16, but {name} has no bfloat16 arithmetic; set precision "
                    "to fp16 (or fp32)"
                )
        return dtype
    if device.type == "cpu" and precision == "bf16":
        return dtype
    other = "bf16 or fp32" if device.type == "cpu" else "fp32"
    runs_on = "CUDA" if precision == "fp16" else "CUDA or the CPU"
    raise NodeInputError(
        f"precision {precision} runs on {runs_on}, but the model is on {device}; set precision "
        f"to {other}, or put the model on a CUDA device (its device parameter)"
    )


def autocast(
    dtype: torch.dtype | None, device: torch.device
) -> contextlib.AbstractContextManager[Any]:
    """`torch.autocast` on the device in `dtype`; nothing for None."""
    import torch

    if dtype is None:
        return contextlib.nullcontext()
    return torch.autocast(device_type=device.type, dtype=dtype)


def to_channels_last(model: Any) -> None:
    """A torch model's 4-D weights in channels-last memory format, once."""
    import torch

    if not is_module(model) or model.__dict__.get(CHANNELS_LAST):
        return
    try:
        model.to(memory_format=torch.channels_last)
        model.__dict__[CHANNELS_LAST] = True
    except (AttributeError, RuntimeError, TypeError):  # a TorchScript module may refuse: as it is
        return


# -- the parameters ----------------------------------------------------------------------------
IMAGE_STEP_PARAMETERS: dict[str, Any] = {
    "model": {"type": "resource", "required": True, "description": "a model resource"},
    "batch_size": {"type": "int", "default": 32, "description": "images per forward pass"},
    "item_key": {
        "type": "string",
        "default": "image",
        "description": "the field holding the image (or a list of image records)",
    },
    "preset": {
        "type": "string",
        "default": "imagenet",
        "description": "normalisation: imagenet, clip or none (0..1)",
    },
    "size": {"type": "int", "default": 256, "description": "short side after resizing (0: keep)"},
    "crop": {"type": "int", "default": 224, "description": "centre crop side (0: none)"},
    "on_error": {
        "type": "string",
        "default": "fail",
        "description": 'an unreadable image: "fail" (that dict fails) or "skip" (dropped, counted)',
    },
}
"""What every image model step takes."""

MODEL_STEP_PARAMETERS: dict[str, Any] = {
    **IMAGE_STEP_PARAMETERS,
    "precision": {
        "type": "string",
        "default": "fp32",
        "description": "the model's arithmetic: fp32, bf16 (autocast; CUDA or the CPU) or fp16 "
        "(autocast; CUDA only); torch models only",
    },
    "decode": {
        "type": "string",
        "default": "auto",
        "description": "where JPEGs are decoded: cpu (the load workers), gpu (nvJPEG on the "
        "model's CUDA device) or auto (gpu on a GPU with hardware JPEG decoders, else cpu)",
    },
}
"""What the steps that run a torch, TorchScript or ONNX model on pixels take besides."""


# -- the base of image model steps --------------------------------------------------------------
class ImageBatchStep(BatchStep):
    """What the image model steps share: decoding in the workers (or on the GPU), a batch on
    the model's device, results on each dict (or each record of a list), unreadable images
    skipped."""

    Parameters: ClassVar[dict[str, Any]] = IMAGE_STEP_PARAMETERS
    Category: ClassVar[str] = "Models"
    model: Any
    preset: str = "imagenet"

    def __init__(
        self,
        model: Any = None,
        batch_size: int = 32,
        item_key: str = "image",
        preset: str = "imagenet",
        size: int = 256,
        crop: int = 224,
        on_error: str = "fail",
        precision: str = "fp32",
        decode: str = "auto",
        **params: Any,
    ) -> None:
        super().__init__(batch_size=batch_size, item_key=item_key or "image", **params)
        if model is None:
            raise NodeInputError("no model: wire a model resource (TorchvisionModel, ...) to it")
        self.model = model
        self.preset = preset
        self.on_error = check_on_error(on_error)
        self.precision = check_precision(precision)
        device = device_of(model)
        if is_module(model):
            autocast_dtype(self.precision, device)  # refused here, before data flows
        mode: Mode = "array" if is_pipeline(model) else "tensor"
        self.loader = ImageLoader(preset, int(size), int(crop), self.on_error, mode)
        facts = device_facts(device)
        self.decode, why = choose_decode(decode, facts, arrays=mode == "array")
        self.decode_reason = why if facts.type == "cuda" else ""
        """Said in the log when the model is on CUDA, where the choice matters."""
        load = JpegBytes(self.loader) if self.decode == "gpu" else self.loader
        self.load_fn = load  # type: ignore[misc]  # the engine reads the instance's
        self.skipped_ids: set[int] = set()
        self.skipped = 0
        self.first_skip = ""
        self.cpu_fallbacks = 0

    def on_start(self) -> None:
        self.skipped, self.first_skip, self.cpu_fallbacks = 0, "", 0
        self.skipped_ids.clear()
        if self.decode_reason:
            where = "on the GPU" if self.decode == "gpu" else "in the load workers (CPU)"
            self.log(f"decoding {where}: {self.decode_reason}")
        if self.precision != "fp32" and not is_module(self.model):
            self.log(
                f"precision {self.precision} applies to torch models; this "
                f"{type(self.model).__name__} runs as it was loaded",
                "warning",
            )

    def on_end(self) -> None:
        if self.skipped:
            self.log(f"skipped {self.skipped} unreadable images: first {self.first_skip}")
        if self.cpu_fallbacks:
            self.log(f"{self.cpu_fallbacks} JPEGs nvJPEG could not decode were decoded on the CPU")

    def on_item_batch(self, outputs: list[Any], items: list[Any], data: list[Data]) -> None:
        images = self.decoded(outputs, items)
        keep = [self.keep(o, i, d) for o, i, d in zip(images, items, data, strict=True)]
        if not any(keep):
            return
        kept = images if all(keep) else [o for o, k in zip(images, keep, strict=True) if k]
        owners = [self.target(i, d) for i, d, k in zip(items, data, keep, strict=True) if k]
        for owner, result in zip(owners, self.results(kept), strict=True):
            owner.update(result)

    def decoded(self, outputs: list[Any], items: list[Any]) -> Sequence[Any]:
        """The batch's images as the model takes them: `outputs` as they came (decoded in the
        workers; a batch laid out as one slab stays one), or with decode gpu, on the GPU."""
        if self.decode != "gpu":
            return outputs
        batch = decode_batch(outputs, items, self.loader, device_of(self.model))
        self.cpu_fallbacks += batch.cpu_fallbacks
        return batch.images

    def results(self, images: Sequence[Any]) -> list[Data]:
        """One dict of fields for each image of the batch."""
        raise NotImplementedError

    def keep(self, output: Any, item: Any, owner: Data) -> bool:
        if not isinstance(output, Unreadable):
            return True
        if not self.skipped:
            self.first_skip = f"{output.file}: {output.reason}"
            self.log(f"skipping unreadable image {self.first_skip}", "warning")
        self.skipped += 1
        self.skipped_ids.add(id(self.target(item, owner)))
        return False

    def target(self, item: Any, owner: Data) -> Data:
        """The dict an image's results go on: the dict itself, or the image's record."""
        key = str(self.item_key)
        if isinstance(owner.get(key), list | tuple):
            targets(owner, key, 0)  # refuses a list of plain paths, saying why
            return item  # type: ignore[no-any-return]
        return owner

    def route(self, data: Data) -> str | None:
        if not self.skipped_ids:
            return self.Outputs[0]
        if id(data) in self.skipped_ids:
            self.skipped_ids.discard(id(data))
            return None
        value = data.get(str(self.item_key))
        if isinstance(value, list) and any(id(r) in self.skipped_ids for r in value):
            kept = [r for r in value if id(r) not in self.skipped_ids]
            self.skipped_ids.difference_update(id(r) for r in value)
            data[str(self.item_key)] = kept
            if not kept:
                return None
        return self.Outputs[0]

    def forward(self, model: Any, images: Sequence[Any]) -> Any:
        """The model's output on a batch of decoded images: under inference mode, channels-
        last (on CUDA the model's weights too), in the step's precision."""
        import torch

        device = device_of(model)
        if device.type == "cuda":
            to_channels_last(model)
        batch = to_model_batch(images, self.preset, device, channels_last=device.type != "mps")
        dtype = autocast_dtype(self.precision, device) if is_module(model) else None
        with torch.inference_mode(), autocast(dtype, device):
            return model(batch)
