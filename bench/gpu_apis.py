"""The batch API and the Trainer on a GPU, each against the same loop written by hand.

    python -m bench.gpu --apis [--quick] [--reps R] [--amp off|fp16] [--workers N]

- inference: resnet50 (random weights) over in-memory 224x224 float images, batch 32, the
  top-5 classes of every image brought back to the CPU: by hand (`DataLoader(num_workers=N,
  pin_memory=True)`, `.cuda(non_blocking=True)`) against `torch_batch_process` with its
  defaults on CUDA (pinned memory, non-blocking `context.to_device`; no checkpoint until the
  end) and with `pin_memory=False` (what the pinned default buys);
- training: resnet18 (random weights, 10 classes) on in-memory 224x224 images, batch 64, SGD,
  shuffled, the mean loss read every 10 batches: by hand (the same DataLoader, `autocast` and
  a `GradScaler` under `--amp fp16`) against `context.train` (`experimental.use_amp()` under
  `--amp fp16`), checkpointing only at the end.

Everything runs in this one process on `cuda:0`, repetitions interleaved after a warm-up of
each contender (cuDNN's algorithm search, allocations); figures are images per second and the
ratio to the loop by hand. Without CUDA it says why and exits 0; `--device cpu` runs the same
code on the CPU with a tiny model, only to check the harness.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import time
from collections.abc import Callable, Iterator
from typing import Any

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import graphbook.det as det
from bench.common import median, table
from bench.trainer import Trial
from graphbook.batch_process import TorchBatchProcessor, torch_batch_process
from graphbook.batch_process.context import TorchBatchProcessorContext

INFER_BATCH = 32
TRAIN_BATCH = 64
NEVER = 10**9
Build = Callable[[], nn.Module]


@contextlib.contextmanager
def data_home() -> Iterator[None]:
    """A fresh run store for one contender."""
    before = os.environ.get("GRAPHBOOK_HOME")
    with tempfile.TemporaryDirectory() as home:
        os.environ["GRAPHBOOK_HOME"] = home
        try:
            yield
        finally:
            if before is None:
                os.environ.pop("GRAPHBOOK_HOME", None)
            else:
                os.environ["GRAPHBOOK_HOME"] = before


def models(device: torch.device) -> tuple[Build, Build]:
    """The inference and the training model (tiny ones on a CPU: a harness check)."""
    import torchvision

    if device.type == "cuda":
        return (
            lambda: torchvision.models.resnet50(weights=None),
            lambda: torchvision.models.resnet18(weights=None, num_classes=10),
        )

    def tiny() -> nn.Module:  # 64x64 in: 4 maps of 8x8
        return nn.Sequential(nn.Conv2d(3, 4, 7, stride=8), nn.Flatten(), nn.Linear(256, 10))

    return tiny, tiny


def images(count: int, size: int, labels: bool) -> TensorDataset:
    g = torch.Generator().manual_seed(0)
    tensors = [torch.rand(count, 3, size, size, generator=g)]
    if labels:
        tensors.append(torch.randint(0, 10, (count,), generator=g))
    return TensorDataset(*tensors)


def autocast(device: torch.device, amp: str) -> Any:
    if amp == "off" or device.type != "cuda":
        return contextlib.nullcontext()
    return torch.autocast("cuda", dtype=torch.float16)


def synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


# -- inference -----------------------------------------------------------------------------
def infer_by_hand(
    build: Build, data: TensorDataset, device: torch.device, workers: int, amp: str
) -> float:
    start = time.perf_counter()
    model = build().eval().to(device)
    loader = DataLoader(
        data, batch_size=INFER_BATCH, num_workers=workers, pin_memory=device.type == "cuda"
    )
    top: list[torch.Tensor] = []
    with torch.inference_mode():
        for (x,) in loader:
            with autocast(device, amp):
                logits = model(x.to(device, non_blocking=True))
            top.append(logits.float().topk(5, dim=1).indices.cpu())
    synchronize(device)
    assert sum(len(t) for t in top) == len(data)
    return time.perf_counter() - start


class Classify(TorchBatchProcessor):
    build: Build
    amp = "off"

    def __init__(self, context: TorchBatchProcessorContext) -> None:
        self.context = context
        self.model = context.prepare_model_for_inference(type(self).build())
        self.top: list[torch.Tensor] = []

    def process_batch(self, batch: Any, batch_idx: int) -> None:
        with torch.inference_mode(), autocast(self.context.device, type(self).amp):
            logits = self.model(self.context.to_device(batch[0]))
        self.top.append(logits.float().topk(5, dim=1).indices.cpu())


def infer_batch_api(
    build: Build, data: TensorDataset, workers: int, amp: str, pin: bool | None
) -> float:
    Classify.build, Classify.amp = staticmethod(build), amp
    kwargs: dict[str, Any] = {"num_workers": workers}
    if pin is not None:
        kwargs["pin_memory"] = pin
    with data_home():
        start = time.perf_counter()
        torch_batch_process(
            Classify,
            data,
            batch_size=INFER_BATCH,
            checkpoint_interval=NEVER,
            dataloader_kwargs=kwargs,
            run_name="bench-gpu",
        )
        return time.perf_counter() - start


# -- training ------------------------------------------------------------------------------
def train_by_hand(
    build: Build, data: TensorDataset, device: torch.device, workers: int, amp: str
) -> float:
    start = time.perf_counter()
    torch.manual_seed(0)
    model = build().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    scaler = torch.amp.GradScaler("cuda", enabled=amp == "fp16" and device.type == "cuda")
    loader = DataLoader(
        data,
        batch_size=TRAIN_BATCH,
        shuffle=True,
        num_workers=workers,
        pin_memory=device.type == "cuda",
        generator=torch.Generator().manual_seed(0),
    )
    losses: list[torch.Tensor] = []
    for x, y in loader:
        with autocast(device, amp):
            loss = nn.functional.cross_entropy(
                model(x.to(device, non_blocking=True)), y.to(device, non_blocking=True)
            )
        torch.autograd.backward(scaler.scale(loss))
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
        losses.append(loss.detach())
        if len(losses) == 10:
            float(torch.stack(losses).mean())  # read, as a person logs it
            losses = []
    synchronize(device)
    return time.perf_counter() - start


class Fit(Trial):
    """bench.trainer's trial (its train and evaluate batches) with SGD, and AMP when asked."""

    amp = "off"

    def __init__(self, context: Any) -> None:
        self.context = context
        if type(self).amp == "fp16" and context.device.type == "cuda":
            context.experimental.use_amp()
        self.model = context.wrap_model(type(self).build())
        self.opt = context.wrap_optimizer(
            torch.optim.SGD(self.model.parameters(), lr=0.01, momentum=0.9)
        )


def train_trainer(
    build: Build, data: TensorDataset, device: torch.device, workers: int, amp: str
) -> float:
    Fit.build, Fit.amp = staticmethod(build), amp
    small = TensorDataset(*(t[:TRAIN_BATCH] for t in data.tensors))
    with data_home():
        start = time.perf_counter()
        context = det.pytorch.init(seed=0, run_name="bench-gpu")
        trial = context.build_trial(Fit)
        context.train(
            trial,
            det.pytorch.DataLoader(data, batch_size=TRAIN_BATCH, shuffle=True, num_workers=workers),
            det.pytorch.DataLoader(small, batch_size=TRAIN_BATCH),
            max_length=det.Epochs(1),
            progress=False,
        )
        synchronize(device)
        seconds = time.perf_counter() - start
        context.close()
        return seconds


# -- the harness ---------------------------------------------------------------------------
def measure(device: torch.device, count: int, reps: int, workers: int, amp: str) -> list[list[Any]]:
    infer_model, train_model = models(device)
    size = 224 if device.type == "cuda" else 64
    infer_data, train_data = images(count, size, False), images(count, size, True)
    contenders: dict[str, Callable[[], float]] = {
        "inference: by hand": lambda: infer_by_hand(infer_model, infer_data, device, workers, amp),
        "inference: torch_batch_process": lambda: infer_batch_api(
            infer_model, infer_data, workers, amp, None
        ),
        "inference: torch_batch_process, pin_memory=False": lambda: infer_batch_api(
            infer_model, infer_data, workers, amp, False
        ),
        "training: by hand": lambda: train_by_hand(train_model, train_data, device, workers, amp),
        "training: Trainer": lambda: train_trainer(train_model, train_data, device, workers, amp),
    }
    for run in contenders.values():  # warm-up
        run()
    seconds: dict[str, list[float]] = {name: [] for name in contenders}
    for rep in range(reps):
        for name, run in contenders.items():
            seconds[name].append(run())
        latest = ", ".join(f"{n} {count / s[-1]:.0f}" for n, s in seconds.items())
        print(f"  rep {rep + 1}: {latest} images/s", flush=True)
    rows = []
    for name, values in seconds.items():
        hand = median(seconds[name.split(":")[0] + ": by hand"])
        rows.append([name, amp, workers, count, count / median(values), hand / median(values)])
    return rows


def why_no_cuda() -> str:
    built = torch.version.cuda
    if built is None:
        return "this torch was built without CUDA"
    return f"torch {torch.__version__} (CUDA {built}) sees no CUDA device"


def run(quick: bool, reps: int | None, workers: int, amp: str, device_name: str) -> None:
    device = torch.device(device_name)
    if device.type == "cuda" and not torch.cuda.is_available():
        print(f"no CUDA device here ({why_no_cuda()}): the GPU API benchmark is skipped")
        return
    count = (256 if quick else 2048) if device.type == "cuda" else 256
    reps = reps or (1 if quick else 3)
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "CPU (harness check)"
    print(
        f"# GPU APIs: {name}; {count} images per contender, {workers} loader workers, "
        f"amp {amp}; load average {os.getloadavg()[0]:.1f}",
        flush=True,
    )
    header = ["contender", "amp", "workers", "images", "images/s", "/ by hand"]
    print(table(header, measure(device, count, reps, workers, amp)))
