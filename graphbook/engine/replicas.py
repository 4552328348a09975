"""A model on every GPU of one machine: one replica per device, each batch dealt between them.

A model resource asks for this with its `devices` parameter: `all` (every visible GPU; on a
machine without one, the CPU and no replicas), or a list such as `cuda:0,cuda:2`. The model
itself is the first replica, on the first device; the others are copies. Each batch is cut in one
slice per replica along its first dimension, the slices run at once (one thread each; CUDA
kernels of different devices overlap), and the outputs are joined back on the device the input
came from, so node code sees one model and one output, as with one device. This is
`torch.nn.DataParallel`'s forward without its training machinery: for inference.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import torch

from graphbook.engine.slices import join
from graphbook.errors import GraphbookError

MARK = "_graphbook_replicas"


def devices_of(spec: str | Sequence[str]) -> list[str]:
    """The devices a `devices` parameter names; `all` is every visible GPU (or the CPU)."""
    names = [spec] if isinstance(spec, str) else list(spec)
    names = [n.strip() for name in names for n in str(name).split(",") if n.strip()]
    if names == ["all"]:
        count = torch.cuda.device_count()
        return [f"cuda:{i}" for i in range(count)] if count else ["cpu"]
    if not names:
        raise GraphbookError("devices is empty; give `all` or a list such as cuda:0,cuda:1")
    for name in names:
        check_device(name)
    return names


def check_device(name: str) -> None:
    try:
        device = torch.device(name)
    except RuntimeError:
        raise GraphbookError(
            f"devices: {name!r} is not a device; use cpu, cuda, cuda:N (or `all`)"
        ) from None
    if device.type == "cuda":
        count = torch.cuda.device_count()
        if device.index is not None and device.index >= count:
            raise GraphbookError(
                f"devices: {name!r} asked for, but this machine sees {count} GPU(s); "
                "use `all` or indices below that"
            )


def replicate(model: torch.nn.Module, devices: Sequence[str]) -> torch.nn.Module:
    """Put `model` on `devices[0]` and a copy on each other device; its calls deal each batch
    between them. One device: the model is only moved there. Returns the same model."""
    model.to(devices[0])
    if len(devices) < 2 or MARK in model.__dict__:
        return model
    copies = [copy.deepcopy(model).to(device) for device in devices[1:]]
    replicas: list[Callable[..., Any]] = [model.forward, *copies]
    dealt = Dealt(replicas, [torch.device(d) for d in devices])
    model.__dict__[MARK] = dealt
    model.forward = dealt
    return model


class Dealt:
    """The replacement `forward`: cuts the batch, runs each slice on its replica, joins."""

    def __init__(self, replicas: list[Callable[..., Any]], devices: list[torch.device]) -> None:
        self.replicas = replicas
        self.devices = devices
        self._threads = ThreadPoolExecutor(len(replicas), thread_name_prefix="graphbook-replica")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        first = args[0] if args else None
        if not isinstance(first, torch.Tensor) or first.dim() == 0 or len(first) < 2:
            return self.replicas[0](*args, **kwargs)
        pieces = first.tensor_split(min(len(self.replicas), len(first)))
        modes = torch.is_grad_enabled(), torch.is_inference_mode_enabled()
        home = first.device

        def run(index: int) -> Any:
            device = self.devices[index]
            rest = [to_device(a, device) for a in args[1:]]
            extra = {k: to_device(v, device) for k, v in kwargs.items()}
            # grad and inference mode belong to a thread: take on the caller's
            with torch.inference_mode(modes[1]), torch.set_grad_enabled(modes[0]):
                output = self.replicas[index](pieces[index].to(device), *rest, **extra)
            return to_device(output, home)

        outputs = list(self._threads.map(run, range(len(pieces))))
        return join(outputs)


def to_device(value: Any, device: torch.device) -> Any:
    """Tensors (inside tuples, lists and dicts too) moved to `device`."""
    if isinstance(value, torch.Tensor):
        return value.to(device)
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return type(value)(*(to_device(v, device) for v in value))
    if isinstance(value, list | tuple):
        return type(value)(to_device(v, device) for v in value)
    if isinstance(value, dict):
        return {k: to_device(v, device) for k, v in value.items()}
    return value
