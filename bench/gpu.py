"""Image pipeline on a GPU: Graphbook against DataLoader(num_workers=N, pin_memory=True), N from 2
to the machine's cores. Graphbook runs through the CLI as: the plain resource and BatchStep
(`torch.stack(images)`), the same with `stack(images)` (the workers' slab, sent to the GPU two
batches ahead), and the node library's ImageFolder -> ClassifyImages -> WriteCSV with JPEGs
decoded on the CPU workers and on the GPU (`decode`), `precision` following `--amp`.

    python -m bench.gpu [--quick] [--models resnet50 vit_b_16] [--workers 2 4 8 16]
                        [--amp off|fp16|bf16] [--images N] [--reps R]
    python -m bench.gpu --apis [--quick] [--workers N] [--amp off|fp16] [--reps R]

`--apis` measures torch_batch_process and the Trainer on the GPU against the same loops by
hand instead (bench/gpu_apis.py).

Without a CUDA device it says so and exits 0: CI has no GPU. The work is the image
benchmark's (bench/nodes/images.py: decode + resize to 224 in the workers, batches of 32, top-5
written as JSON lines), with the model on `cuda` and, with `--amp`, under autocast. Beside
images/s it reports the GPU's busy fraction: the share of `nvidia-smi`'s utilisation samples
(every 100 ms) in which a kernel ran, averaged over the contender's run; 1 - busy is the time
the GPU waited for the rest of the pipeline. Contenders run one after another, each in a fresh
process, repetitions interleaved; compare ratios within one run.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from bench.common import CORES, OUT, machine, median, python, report, run_measured, table
from bench.images import BATCH, NODES, PLAIN_WORKFLOW, _lines, _run_seconds, image_folder
from bench.nodes.images import GPU_MODELS as MODELS

IMAGES = 4000
QUICK_IMAGES = 512
AMP = ("off", "fp16", "bf16")


def cuda_available() -> bool:
    import torch

    return bool(torch.cuda.is_available())


# -- the contenders, each in its own process ----------------------------------------------------
def dataloader(model_name: str, folder: Path, out: Path, workers: int, amp: str) -> dict[str, Any]:
    """DataLoader(num_workers=N, pin_memory=True) as a person writes it for a GPU: batches
    moved with non_blocking, the model under autocast when asked, top-5 back to the CPU."""
    import torch
    from torch.utils.data import DataLoader, Dataset

    from bench.nodes.images import json_lines, load_image

    class Files(Dataset[torch.Tensor]):
        def __init__(self, paths: list[str]) -> None:
            self.paths = paths

        def __len__(self) -> int:
            return len(self.paths)

        def __getitem__(self, index: int) -> torch.Tensor:
            return load_image(self.paths[index])

    paths = sorted(str(p) for p in folder.glob("*.jpg"))
    start = time.perf_counter()
    model = gpu_model(model_name)
    loader = DataLoader(Files(paths), batch_size=BATCH, num_workers=workers, pin_memory=True)
    with out.open("w", encoding="utf-8") as file, torch.inference_mode():
        for n, images in enumerate(loader):
            with autocast(amp):
                probabilities = model(images.cuda(non_blocking=True)).float().softmax(dim=1)
            scores, classes = probabilities.topk(5, dim=1)
            rows = paths[n * BATCH : (n + 1) * BATCH]
            file.write(json_lines(rows, classes.tolist(), scores.tolist()))
    seconds = time.perf_counter() - start
    return {"seconds": seconds, "ips": len(paths) / seconds, "lines": _lines(out)}


def gpu_model(name: str) -> Any:
    import torch
    import torchvision

    torch.manual_seed(0)
    model = getattr(torchvision.models, name)(weights=None)
    return model.eval().cuda()


@contextlib.contextmanager
def autocast(amp: str) -> Iterator[None]:
    import torch

    if amp == "off":
        yield
        return
    dtype = torch.float16 if amp == "fp16" else torch.bfloat16
    with torch.autocast("cuda", dtype=dtype):
        yield


def graphbook(
    model_name: str, folder: Path, out: Path, workers: int, amp: str, stacked: bool = False
) -> Any:
    """`graphbook run` on the plain workflow with the model on `cuda`."""
    doc = json.loads(PLAIN_WORKFLOW.read_text())
    params = {
        "files": {"folder": str(folder)},
        "model": {"model": model_name, "device": "cuda"},
        "classify": {"out": str(out), "amp": "" if amp == "off" else amp, "stacked": stacked},
    }
    for node in doc["nodes"]:
        node["params"].update(params.get(node["id"], {}))
    path = OUT / f"gpu-{model_name}.json"
    path.write_text(json.dumps(doc, indent=2))
    command = ["--workers", str(workers), "--nodes", str(NODES), "--json"]
    return run_measured(python("graphbook", "run", str(path), *command))


def library(model_name: str, folder: Path, out: Path, workers: int, amp: str, decode: str) -> Any:
    """`graphbook run` of the library's nodes: ImageFolder -> ClassifyImages (a TorchvisionModel
    of random weights on `cuda`, `decode` cpu or gpu, `precision` from `amp`) -> WriteCSV."""
    from graphbook import Workflow

    workflow = Workflow(f"Classify a folder on the GPU, decode {decode}")
    images = workflow.add("ImageFolder", id="images", folder=str(folder))
    model = workflow.add("TorchvisionModel", id="model", arch=model_name, device="cuda")
    precision = "fp32" if amp == "off" else amp
    classify = workflow.add(
        "ClassifyImages", id="classify", model=model, decode=decode, precision=precision
    )
    workflow.connect(images, classify)
    workflow.connect(classify, workflow.add("WriteCSV", id="csv", path=str(out), overwrite=True))
    path = OUT / f"gpu-library-{model_name}-{decode}.json"
    workflow.save(path)
    return run_measured(python("graphbook", "run", str(path), "--workers", str(workers), "--json"))


# -- GPU busy fraction ----------------------------------------------------------------------
class GpuBusy:
    """Samples `nvidia-smi`'s GPU utilisation every 100 ms while active; `fraction` is the
    mean, 0..1 (NaN without nvidia-smi)."""

    def __init__(self) -> None:
        self.samples: list[float] = []
        self._process: subprocess.Popen[str] | None = None
        self._thread: threading.Thread | None = None

    def __enter__(self) -> GpuBusy:
        if shutil.which("nvidia-smi"):
            query = ["--query-gpu=utilization.gpu", "--format=csv,noheader,nounits", "-lms", "100"]
            self._process = subprocess.Popen(
                ["nvidia-smi", "-i", "0", *query], stdout=subprocess.PIPE, text=True
            )
            self._thread = threading.Thread(target=self._read, daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._process is not None:
            self._process.terminate()
            self._process.wait()
        if self._thread is not None:
            self._thread.join()

    def _read(self) -> None:
        assert self._process is not None and self._process.stdout is not None
        for line in self._process.stdout:
            with contextlib.suppress(ValueError):
                self.samples.append(float(line.strip()) / 100)

    @property
    def fraction(self) -> float:
        return sum(self.samples) / len(self.samples) if self.samples else float("nan")


# -- the harness ------------------------------------------------------------------------------
Contender = Callable[[str, Path, Path, int, str], Any]
GRAPHBOOK: dict[str, Contender] = {
    "Graphbook (run)": lambda m, f, o, w, a: graphbook(m, f, o, w, a),
    "Graphbook stack() (run)": lambda m, f, o, w, a: graphbook(m, f, o, w, a, stacked=True),
    "library, decode cpu (run)": lambda m, f, o, w, a: library(m, f, o, w, a, "cpu"),
    "library, decode gpu (run)": lambda m, f, o, w, a: library(m, f, o, w, a, "gpu"),
}
"""The Graphbook contenders: each runs `graphbook run` and writes one line per image (and a
CSV header for the library's)."""


def measure(model: str, images: int, workers: int, amp: str, reps: int) -> list[list[Any]]:
    folder = image_folder(images)
    names = ["DataLoader", *GRAPHBOOK]
    rates: dict[str, list[float]] = {name: [] for name in names}
    busy: dict[str, list[float]] = {name: [] for name in names}
    for _ in range(reps):
        out = OUT / f"top5-gpu-dataloader-{model}.jsonl"
        command = _contender(model, folder, out, workers, amp)
        with GpuBusy() as sampler:
            loader = run_measured(command)
        rates["DataLoader"].append(loader.figures["ips"])
        busy["DataLoader"].append(sampler.fraction)
        for name, run_one in GRAPHBOOK.items():
            out = OUT / f"gpu-{model}-{len(rates[name])}.out"
            with GpuBusy() as sampler:
                run = run_one(model, folder, out, workers, amp)
            lines = _lines(out) - (1 if name.startswith("library") else 0)
            if lines != images:
                raise RuntimeError(f"{name} wrote {lines} rows for {images} images")
            rates[name].append(images / _run_seconds(run))
            busy[name].append(sampler.fraction)
        latest = ", ".join(f"{k} {v[-1]:.1f}" for k, v in rates.items())
        print(f"  {model} workers {workers} amp {amp}: {latest} images/s", flush=True)
    loader_rate = median(rates["DataLoader"])
    return [
        [model, amp, workers, name, images, median(values), median(busy[name]),
         median(values) / loader_rate]
        for name, values in rates.items()
    ]  # fmt: skip


def _contender(model: str, folder: Path, out: Path, workers: int, amp: str) -> list[str]:
    return python(
        "bench.gpu", "--contender", "--model", model, "--folder", str(folder),
        "--out", str(out), "--workers", str(workers), "--amp", amp,
    )  # fmt: skip


def main(argv: Sequence[str] | None = None) -> None:
    args = parse(argv)
    if args.apis:
        from bench import gpu_apis

        gpu_apis.run(args.quick, args.reps, args.workers[0], args.amp, args.device)
        return
    if not cuda_available():
        from bench.gpu_apis import why_no_cuda

        print(f"no CUDA device here ({why_no_cuda()}): the GPU benchmark is skipped")
        return
    if args.contender:
        report(dataloader(args.model, args.folder, args.out, args.workers[0], args.amp))
        return
    OUT.mkdir(parents=True, exist_ok=True)
    images = args.images or (QUICK_IMAGES if args.quick else IMAGES)
    reps = args.reps or (1 if args.quick else 3)
    import torch

    print(f"GPU image pipeline, {machine()}, {torch.cuda.get_device_name(0)}", flush=True)
    rows = [
        row
        for model in args.models
        for workers in args.workers
        for row in measure(model, images, workers, args.amp, reps)
    ]
    header = ["model", "amp", "workers", "contender", "images", "images/s", "GPU busy",
              "/ DataLoader"]  # fmt: skip
    print(table(header, rows))


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.gpu", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer images, one repetition")
    parser.add_argument("--models", nargs="+", default=["resnet50"], choices=MODELS)
    steps = sorted({2, *range(4, CORES + 1, 4), CORES})
    parser.add_argument("--workers", type=int, nargs="+", default=steps)
    parser.add_argument("--amp", choices=AMP, default="off", help="autocast dtype on the GPU")
    parser.add_argument("--images", type=int, help=f"images per run (default {IMAGES})")
    parser.add_argument("--reps", type=int, help="repetitions (default 3, quick 1)")
    parser.add_argument(
        "--apis", action="store_true", help="torch_batch_process and the Trainer against loops"
    )
    parser.add_argument("--device", default="cuda", help=argparse.SUPPRESS)  # cpu: harness check
    parser.add_argument("--contender", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--model", help=argparse.SUPPRESS)
    parser.add_argument("--folder", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.apis and args.amp == "bf16":
        parser.error("--apis measures --amp off or fp16 (the Trainer's use_amp() is fp16)")
    return args


if __name__ == "__main__":
    main()
