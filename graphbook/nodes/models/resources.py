"""Model resources whose value is called on a batch of pixels: TorchvisionModel,
TorchScriptModel, ONNXModel (an onnxruntime session called like a module)."""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any, ClassVar

from graphbook.nodes.common import NodeInputError, local_path
from graphbook.nodes.models.weights import (
    ARCH_ATTR,
    build_arch,
    existing_file,
    first_line,
    known_arch,
    load_weights,
    torchvision_default,
)
from graphbook.resources import Resource

if TYPE_CHECKING:
    import torch


DEVICE = {"type": "string", "default": "auto", "description": "cpu, cuda, cuda:1 ... or auto"}


class TorchvisionModel(Resource):
    """A torchvision model by architecture name, with weights from a local file or from
    torchvision's own weights when they are already in the local cache (never downloaded).

    - `weights` empty: random weights (the run's log says so), for trying a pipeline out.
    - `weights` a path: a `state_dict` saved with `torch.save(model.state_dict(), PATH)`, or a
      checkpoint dict holding one under `state_dict` or `model`.
    - `weights` `default`: torchvision's pretrained weights for the architecture, read from
      `$TORCH_HOME/hub/checkpoints` (~/.cache/torch/hub/checkpoints); the class names come
      with them, and ClassifyImages uses them.

    Example: arch `resnet18`, weights `~/models/resnet18-pets.pt`, num_classes `37`.
    """

    Parameters: ClassVar[dict[str, Any]] = {
        "arch": {
            "type": "string",
            "default": "resnet18",
            "description": "torchvision architecture: resnet18, mobilenet_v3_small, "
            "efficientnet_b0, vit_b_16 ...",
        },
        "weights": {
            "type": "string",
            "default": "",
            "description": 'a state_dict file, "default" (torchvision\'s, from the local cache) '
            'or "" (random)',
        },
        "num_classes": {
            "type": "int",
            "default": 0,
            "description": "outputs of the classifier (0: the architecture's default)",
        },
        "device": DEVICE,
    }
    Category: ClassVar[str] = "Models"
    Gives: ClassVar[str] = "object"
    arch: str = "resnet18"
    weights: str = ""
    num_classes: int = 0

    def value(self) -> torch.nn.Module:
        arch = known_arch(self.arch)
        choice = str(self.weights or "").strip()
        if choice.lower() == "default":
            model = torchvision_default(arch, int(self.num_classes))
        else:
            model = build_arch(arch, int(self.num_classes))
            if choice:
                load_weights(model, local_path(choice, "weights"), arch)
            else:
                self.log(
                    f"{arch}: random weights (no weights file given): predictions mean nothing"
                )
        setattr(model, ARCH_ATTR, arch)
        return model


class TorchScriptModel(Resource):
    """A TorchScript model: a file written by `torch.jit.save(torch.jit.script(model), PATH)`
    (or `torch.jit.trace`). Its class names, if any, come from ClassifyImages' `labels`."""

    Parameters: ClassVar[dict[str, Any]] = {
        "path": {
            "type": "string",
            "required": True,
            "path": True,
            "description": "file from torch.jit.save",
        },
        "device": DEVICE,
    }
    Category: ClassVar[str] = "Models"
    Gives: ClassVar[str] = "object"
    path: str = ""

    def value(self) -> Any:
        import torch

        path = existing_file(self.path, "TorchScript file")
        try:
            with warnings.catch_warnings():  # torch calls TorchScript deprecated; its files load
                warnings.simplefilter("ignore", FutureWarning)
                return torch.jit.load(str(path), map_location="cpu")  # type: ignore[no-untyped-call]
        except Exception as exc:
            raise NodeInputError(
                f"{path} is not a TorchScript file (torch.jit.load says: {first_line(exc)}); "
                "save one with torch.jit.save(torch.jit.script(model), PATH), or load a "
                "state_dict with TorchvisionModel"
            ) from None


class ONNXModel(Resource):
    """An ONNX model run by onnxruntime (`pip install graphbook[onnx]`). Its value is called
    like a torch module: a batch (tensor or array) in, the first output as a tensor out."""

    Parameters: ClassVar[dict[str, Any]] = {
        "path": {"type": "string", "required": True, "path": True, "description": "an .onnx file"},
        "providers": {
            "type": "string",
            "default": "CPUExecutionProvider",
            "description": "onnxruntime execution providers, comma-separated, first preferred",
        },
    }
    Category: ClassVar[str] = "Models"
    Gives: ClassVar[str] = "object"
    path: str = ""
    providers: str = "CPUExecutionProvider"

    def value(self) -> OnnxRunner:
        path = existing_file(self.path, "ONNX file")
        providers = [p.strip() for p in str(self.providers).split(",") if p.strip()]
        return OnnxRunner(str(path), providers or ["CPUExecutionProvider"])


class OnnxRunner:
    """An onnxruntime session called like a module: `runner(batch) -> torch.Tensor`."""

    def __init__(self, path: str, providers: list[str]) -> None:
        try:
            import onnxruntime  # type: ignore[import-untyped]
        except ImportError:
            raise NodeInputError(
                "ONNXModel needs onnxruntime: install graphbook[onnx] (pip install "
                "'graphbook[onnx]')"
            ) from None
        available = onnxruntime.get_available_providers()
        missing = [p for p in providers if p not in available]
        if missing:
            raise NodeInputError(
                f"onnxruntime has no provider {', '.join(missing)} here (it has: "
                f"{', '.join(available)}); fix the providers parameter"
            )
        try:
            self.session = onnxruntime.InferenceSession(path, providers=providers)
        except Exception as exc:
            raise NodeInputError(
                f"{path} is not an ONNX model onnxruntime can run ({first_line(exc)}); export "
                "one with torch.onnx.export"
            ) from None
        self.path = path
        self.input_name = self.session.get_inputs()[0].name
        self.graphbook_labels: list[str] | None = None

    def __call__(self, batch: Any) -> torch.Tensor:
        import numpy as np
        import torch

        if isinstance(batch, torch.Tensor):
            batch = batch.detach().cpu().contiguous().numpy()
        array = np.ascontiguousarray(batch, dtype=np.float32)
        output = self.session.run(None, {self.input_name: array})[0]
        return torch.from_numpy(np.asarray(output))

    def __repr__(self) -> str:
        return f"OnnxRunner({self.path!r})"
