"""Classify a folder of camera-sized JPEGs: the node library against torchvision by hand.

    python -m bench.classify_folder [--quick] [--images N] [--arch mobilenet_v3_small resnet18]
                                    [--reps R]

Contenders, each in a fresh process, repetitions interleaved, ratios taken within a repetition:

* **Graphbook**: the library's nodes only, ImageFolder -> ClassifyImages (TorchvisionModel,
  random weights) -> WriteCSV, run by `run_workflow` with the CLI's default workers (one per
  core) and every node at its defaults but the folder, the arch and the CSV's path. The
  workflow is saved to out/bench/classify-ARCH.json: `graphbook run` runs the same.
* **DataLoader**: what a person writes: torchvision's `ImageFolder` with Resize(256),
  CenterCrop(224), ToTensor, Normalize; `DataLoader(num_workers=2, batch_size=32)`; the same
  model under `torch.inference_mode()` with torch's default threads; the same CSV.
* **parts**: CPU ms per image of each part alone, in one process on one torch thread:
  decoding (the library's ImageLoader, and torchvision's transforms), and the model on batches
  of 32 (contiguous, and channels-last as the library hands it).

Each pipeline contender also reports where its CPU went: its load workers (decoding), its
other threads (the model: Graphbook's per-core slices, torch's intra-op threads), and its main
thread (Graphbook: the engine, stacking and normalising batches, softmax, the CSV; DataLoader:
collating, the CSV, and torch's first intra-op thread).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import resource
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.common import OUT, machine, median, python, report, run_measured, spread, table

ARCHS = ("mobilenet_v3_small", "resnet18")
SIZE = (1024, 768)
BATCH = 32
CONTENDERS = ("parts", "graphbook", "dataloader")


# -- the images ---------------------------------------------------------------------------------
def image_folder(count: int) -> Path:
    """A folder of `count` distinct 1024x768 JPEGs (in a class sub-folder, as torchvision's
    ImageFolder wants): hard links to out/bench/camera/, where each image is made once."""
    originals = OUT / "camera"
    folder = OUT / f"camera-{count}" / "photos"
    originals.mkdir(parents=True, exist_ok=True)
    folder.mkdir(parents=True, exist_ok=True)
    for n in range(count):
        original, path = originals / f"{n:06d}.jpg", folder / f"{n:06d}.jpg"
        if not original.exists():
            camera_image(n).save(original, quality=90)
        if not path.exists():
            path.hardlink_to(original)
    return folder.parent


def camera_image(seed: int) -> Any:
    """A smooth scene with soft texture, edges and sensor grain: 200-260 KB at quality 90, as
    a camera's 1024x768 JPEG."""
    import numpy as np
    from PIL import Image, ImageDraw

    rng = np.random.default_rng(seed)
    width, height = SIZE
    coarse = rng.normal(0, 1, (height // 16, width // 16, 3))
    base = Image.fromarray(np.clip(128 + 40 * coarse, 0, 255).astype(np.uint8))
    pixels = np.asarray(base.resize(SIZE, Image.Resampling.BICUBIC)).astype(np.float32)
    fine = rng.normal(0, 1, (height // 2, width // 2)).astype(np.float32)
    grain = Image.fromarray(np.clip(128 + 60 * fine, 0, 255).astype(np.uint8))
    texture = np.asarray(grain.resize(SIZE, Image.Resampling.BILINEAR)).astype(np.float32) - 128
    pixels += 0.5 * texture[..., None] + rng.normal(0, 3, (height, width, 3)).astype(np.float32)
    image = Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8))
    draw = ImageDraw.Draw(image)
    for _ in range(12):
        x0, y0 = int(rng.integers(0, width - 100)), int(rng.integers(0, height - 100))
        box = (x0, y0, x0 + int(rng.integers(40, 300)), y0 + int(rng.integers(40, 300)))
        draw.ellipse(box, fill=tuple(int(v) for v in rng.integers(0, 256, 3)))
    return image


# -- the contenders -----------------------------------------------------------------------------
def build_model(arch: str) -> Any:
    import torch
    import torchvision

    torch.manual_seed(0)
    return torchvision.models.get_model(arch, weights=None).eval()


def cpu_now() -> dict[str, float]:
    """CPU seconds so far: this process's main thread, the whole process, its reaped children."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {
        "main": time.thread_time(),
        "process": time.process_time(),
        "children": children.ru_utime + children.ru_stime,
    }


def cpu_parts(before: dict[str, float], images: int) -> dict[str, float]:
    """CPU ms per image since `before`: workers, other threads, main thread."""
    after = cpu_now()
    main = after["main"] - before["main"]
    threads = after["process"] - before["process"] - main
    workers = after["children"] - before["children"]
    scale = 1e3 / images
    return {"workers_ms": workers * scale, "threads_ms": threads * scale, "main_ms": main * scale}


def graphbook(arch: str, folder: Path, out: Path) -> dict[str, Any]:
    from graphbook import Workflow, run_workflow

    workflow = Workflow("Classify a folder: the library's nodes at their defaults")
    images = workflow.add("ImageFolder", id="images", folder=str(folder))
    model = workflow.add("TorchvisionModel", id="model", arch=arch)
    classify = workflow.add("ClassifyImages", id="classify", model=model)
    write = workflow.add("WriteCSV", id="csv", path=str(out), overwrite=True)
    workflow.connect(images, classify)
    workflow.connect(classify, write)
    workflow.save(OUT / f"classify-{arch}.json")
    workers = len(os.sched_getaffinity(0))  # `graphbook run`'s default: one per core
    before, start = cpu_now(), time.perf_counter()
    result = run_workflow(workflow, workers=workers)
    seconds = time.perf_counter() - start
    if not result.ok:
        raise RuntimeError(f"the Graphbook run ended {result.status}: {result.errors[:1]}")
    count = result.counts["classify"]["out"]
    return {"seconds": seconds, "ips": count / seconds, "images": count, **cpu_parts(before, count)}


def dataloader(arch: str, folder: Path, out: Path) -> dict[str, Any]:
    import torch
    import torchvision
    from torch.utils.data import DataLoader
    from torchvision import transforms

    recipe = transforms.Compose([
        transforms.Resize(256), transforms.CenterCrop(224), transforms.ToTensor(),
        transforms.Normalize((0.485, 0.456, 0.406), (0.229, 0.224, 0.225)),
    ])  # fmt: skip
    before, start = cpu_now(), time.perf_counter()
    model = build_model(arch)
    dataset = torchvision.datasets.ImageFolder(str(folder), transform=recipe)
    loader = DataLoader(dataset, batch_size=BATCH, num_workers=2)
    paths = [path for path, _ in dataset.samples]
    done = 0
    with out.open("w", newline="", encoding="utf-8") as file:
        rows = csv.writer(file)
        rows.writerow(["image", "prediction", "confidence"])
        for images, _ in loader:
            with torch.inference_mode():
                confidence, index = model(images).softmax(dim=1).max(dim=1)
            batch = paths[done : done + len(images)]
            rows.writerows(zip(batch, index.tolist(), confidence.tolist(), strict=True))
            done += len(images)
    del loader  # its workers end and are reaped: their CPU counts
    seconds = time.perf_counter() - start
    return {"seconds": seconds, "ips": done / seconds, "images": done, **cpu_parts(before, done)}


def parts(arch: str, folder: Path, samples: int) -> dict[str, float]:
    """CPU ms per image of each part alone, one torch thread."""
    import torch
    from PIL import Image
    from torchvision import transforms

    from graphbook.nodes.preprocess import ImageLoader, to_model_batch

    torch.set_num_threads(1)
    paths = sorted(str(p) for p in folder.glob("*/*.jpg"))[:samples]
    recipe = transforms.Compose([
        transforms.Resize(256), transforms.CenterCrop(224), transforms.ToTensor(),
        transforms.Normalize((0.485, 0.456, 0.406), (0.229, 0.224, 0.225)),
    ])  # fmt: skip

    def by_hand(path: str) -> Any:
        with Image.open(path) as image:
            return recipe(image.convert("RGB"))

    load = ImageLoader()
    figures = {
        "decode_library_ms": _cpu_ms(lambda: [load(p) for p in paths]) / len(paths),
        "decode_torchvision_ms": _cpu_ms(lambda: [by_hand(p) for p in paths]) / len(paths),
    }
    model = build_model(arch)
    tensors = [load(p) for p in paths[:BATCH]]
    batch = to_model_batch(tensors)  # type: ignore[arg-type]
    reps = 3 if arch == "mobilenet_v3_small" else 1
    for name, form in (("model_ms", torch.contiguous_format), ("model_cl_ms", torch.channels_last)):
        shaped = batch.contiguous(memory_format=form)
        with torch.inference_mode():
            model(shaped)  # warm-up: first-call allocations and kernel choices
            start = time.process_time()
            for _ in range(reps):
                model(shaped)
            figures[name] = (time.process_time() - start) * 1e3 / (reps * BATCH)
    figures["normalise_ms"] = _cpu_ms(lambda: to_model_batch(tensors)) / BATCH  # type: ignore[arg-type]
    return figures


def _cpu_ms(work: Any) -> float:
    start = time.process_time()
    work()
    return (time.process_time() - start) * 1e3


# -- the harness --------------------------------------------------------------------------------
def contender(name: str, arch: str, folder: Path, *extra: str) -> dict[str, Any]:
    command = python("bench.classify_folder", "--contender", name, "--one-arch", arch)
    measured = run_measured([*command, "--folder", str(folder), *extra])
    return {**measured.figures, "others": measured.others}


def repetition(arch: str, folder: Path, images: int) -> dict[str, dict[str, Any]]:
    samples = str(min(images, 128))
    figures = {"parts": contender("parts", arch, folder, "--samples", samples)}
    for name in ("dataloader", "graphbook"):
        out = OUT / f"classify-{name}-{arch}.csv"
        figures[name] = contender(name, arch, folder, "--out", str(out))
        if figures[name]["images"] != images:
            raise RuntimeError(f"{name} classified {figures[name]['images']} of {images} images")
    return figures


def summary(results: dict[str, list[dict[str, dict[str, Any]]]], images: int) -> str:
    rows, costs, cpu = [], [], []
    for arch, reps in results.items():
        for name, label in (("dataloader", "DataLoader"), ("graphbook", "Graphbook")):
            rates = [r[name]["ips"] for r in reps]
            ratio = median([r[name]["ips"] / r["dataloader"]["ips"] for r in reps])
            left = median([left_ratio(r, name) for r in reps])
            load = median([r[name]["others"] for r in reps])
            rows.append([arch, label, images, median(rates), spread(rates), load, ratio, left])
            parts_of = [median([r[name][k] for r in reps]) for k in CPU_KEYS]
            cpu.append([arch, label, *parts_of, sum(parts_of)])
        costs.append([arch, *(median([r["parts"][k] for r in reps]) for k in PART_KEYS)])
    return "\n\n".join([
        table(["arch", "contender", "images", "images/s (median)", "min..max",
               "others' load (cores)", "/ DataLoader", "/ DataLoader, per core left"], rows),
        table(["arch", "contender", "workers (decode) ms", "other threads (model) ms",
               "main thread ms", "CPU ms per image"], cpu),
        table(["arch", "decode, library ms", "decode, torchvision ms", "model ms",
               "model, channels-last ms", "normalise in batch ms"], costs),
    ])  # fmt: skip


def left_ratio(rep: dict[str, dict[str, Any]], name: str) -> float:
    """The ratio of images/s per core that other processes left each contender: on a shared
    machine a contender that ran while others took a core got half the machine."""
    cores = len(os.sched_getaffinity(0))

    def per_core(who: str) -> float:
        return float(rep[who]["ips"]) / max(cores - float(rep[who]["others"]), 0.1)

    return per_core(name) / per_core("dataloader")


CPU_KEYS = ("workers_ms", "threads_ms", "main_ms")
PART_KEYS = (
    "decode_library_ms",
    "decode_torchvision_ms",
    "model_ms",
    "model_cl_ms",
    "normalise_ms",
)


def main(argv: Sequence[str] | None = None) -> None:
    args = parse(argv)
    if args.contender:
        run_contender(args)
        return
    if args.summary:  # the figures of an earlier run, summarised again
        saved = json.loads(args.summary.read_text())
        count = next(iter(saved.values()))[0]["graphbook"]["images"]
        print(summary(saved, count))
        return
    images = args.images or (256 if args.quick else 2000)
    reps = args.reps or (1 if args.quick else 3)
    print(f"classify a folder, {machine()}, {images} images, {reps} rep(s)", flush=True)
    folder = image_folder(images)
    results: dict[str, list[dict[str, dict[str, Any]]]] = {}
    for arch in args.arch:
        for n in range(reps):
            rep = repetition(arch, folder, images)
            results.setdefault(arch, []).append(rep)
            gb, dl = rep["graphbook"], rep["dataloader"]
            print(f"  {arch} rep {n + 1}/{reps}: Graphbook {gb['ips']:.1f}, DataLoader "
                  f"{dl['ips']:.1f} images/s ({gb['ips'] / dl['ips']:.2f}x); others' load "
                  f"{gb['others']:.2f} / {dl['others']:.2f} cores", flush=True)  # fmt: skip
    print(summary(results, images))
    (OUT / "classify-folder.json").write_text(json.dumps(results, indent=1))  # see --summary


def run_contender(args: argparse.Namespace) -> None:
    if args.contender == "parts":
        report(parts(args.one_arch, args.folder, args.samples))
    elif args.contender == "graphbook":
        report(graphbook(args.one_arch, args.folder, args.out))
    else:
        report(dataloader(args.one_arch, args.folder, args.out))


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.classify_folder", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="256 images, one repetition")
    parser.add_argument("--images", type=int, help="images (default 2000)")
    parser.add_argument("--arch", nargs="+", default=list(ARCHS), help="torchvision archs")
    parser.add_argument("--reps", type=int, help="repetitions (default 3, quick 1)")
    parser.add_argument("--summary", type=Path, help="summarise a saved classify-folder.json")
    parser.add_argument("--contender", choices=CONTENDERS, help=argparse.SUPPRESS)
    parser.add_argument("--one-arch", help=argparse.SUPPRESS)
    parser.add_argument("--folder", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--samples", type=int, default=128, help=argparse.SUPPRESS)
    return parser.parse_args(argv)


if __name__ == "__main__":
    main()
