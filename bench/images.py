"""Image pipeline: Graphbook (through the CLI) against DataLoader and the machine's limit.

    python -m bench.images [--quick] [--models mobilenet_v3_small resnet18] [--reps 3]
                           [--graphbook decorated plain unsliced]

Each contender runs in its own process, repetitions interleaved (limit, DataLoader, Graphbook,
limit, ...), and the medians are compared: the machine is shared and noisy, so ratios taken
within one run mean more than images/s taken across runs.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.common import (
    CORES,
    OUT,
    ROOT,
    Measured,
    machine,
    median,
    python,
    report,
    run_measured,
    spread,
    table,
)

WORKFLOW = ROOT / "bench" / "workflows" / "images.json"
PLAIN_WORKFLOW = ROOT / "bench" / "workflows" / "plain.json"
NODES = ROOT / "bench" / "nodes"
IMAGES = {"mobilenet_v3_small": 2000, "resnet18": 384}
QUICK_IMAGES = {"mobilenet_v3_small": 256, "resnet18": 64}
BATCH = 32
WORKERS = 2
CONTENDERS = ("limit", "dataloader", "graphbook")


# -- the contenders, each run in its own process ------------------------------------------
def limit(model_name: str, folder: Path, samples: int) -> dict[str, float]:
    """CPU-seconds per image of decoding and of the model (batch 32), one thread, one process;
    the limit is all cores kept busy with nothing but that work."""
    import torch

    from bench.nodes.images import build_model, load_image, top5

    torch.set_num_threads(1)
    paths = sorted(str(p) for p in folder.glob("*.jpg"))[:samples]
    start = time.process_time()
    images = [load_image(p) for p in paths]
    decode = (time.process_time() - start) / len(paths)
    model = build_model(model_name)
    batches = [torch.stack(images[i : i + BATCH]) for i in range(0, len(images) - BATCH + 1, BATCH)]
    top5(model, batches[0])  # warm-up: first-call allocations and kernel choices
    start = time.process_time()
    for batch in batches:
        top5(model, batch)
    infer = (time.process_time() - start) / (len(batches) * BATCH)
    return {"decode_ms": decode * 1e3, "model_ms": infer * 1e3, "ips": CORES / (decode + infer)}


def dataloader(model_name: str, folder: Path, out: Path) -> dict[str, float]:
    """The same work as a person writes it with DataLoader: 2 workers decode, batch 32;
    the model and the writing in the main process (torch's default threads)."""
    import torch
    from torch.utils.data import DataLoader, Dataset

    from bench.nodes.images import build_model, json_lines, load_image, top5

    class Files(Dataset[torch.Tensor]):
        def __init__(self, paths: list[str]) -> None:
            self.paths = paths

        def __len__(self) -> int:
            return len(self.paths)

        def __getitem__(self, index: int) -> torch.Tensor:
            return load_image(self.paths[index])

    paths = sorted(str(p) for p in folder.glob("*.jpg"))
    start = time.perf_counter()
    model = build_model(model_name)
    loader = DataLoader(Files(paths), batch_size=BATCH, num_workers=WORKERS)
    with out.open("w", encoding="utf-8") as file:
        for n, images in enumerate(loader):
            classes, scores = top5(model, images)
            file.write(json_lines(paths[n * BATCH : (n + 1) * BATCH], classes, scores))
    seconds = time.perf_counter() - start
    return {"seconds": seconds, "ips": len(paths) / seconds, "lines": _lines(out)}


def graphbook(
    model_name: str,
    folder: Path,
    out: Path,
    variant: str = "decorated",
    memory: bool = False,
    batch_size: int = BATCH,
) -> Measured:
    """`graphbook run` on a benchmark workflow, timed whole (start-up included); the run's own
    time comes from its event stream. Variants: `decorated` (bench/workflows/images.json, the
    `Classifier` resource with its `cpu_slices` parameter), `plain` (bench/workflows/plain.json,
    a plain Resource class and BatchStep as a person writes them, Graphbook's defaults) and
    `unsliced` (the plain workflow with GRAPHBOOK_CPU_SLICES=1: the model as torch runs it,
    torch's default threads) and `onethread` (the same with one torch thread: the thread count
    chosen against the workers' load, cores - workers). `memory` samples the process tree's
    memory (bench/memory.py); `batch_size` is the batch step's."""
    workflow = _workflow(model_name, folder, out, variant, batch_size)
    command = ["--workers", str(WORKERS), "--nodes", str(NODES), "--json"]
    env = ENVIRONMENTS.get(variant)
    return run_measured(python("graphbook", "run", str(workflow), *command), memory=memory, env=env)


def _workflow(
    model_name: str, folder: Path, out: Path, variant: str, batch_size: int = BATCH
) -> Path:
    doc = json.loads((WORKFLOW if variant == "decorated" else PLAIN_WORKFLOW).read_text())
    params: dict[str, dict[str, Any]] = {
        "files": {"folder": str(folder)},
        "model": {"model": model_name},
        "classify": {"out": str(out), "batch_size": batch_size},
    }
    for node in doc["nodes"]:
        node["params"].update(params.get(node["id"], {}))
    suffix = "" if batch_size == BATCH else f"-batch{batch_size}"
    path = OUT / f"images-{model_name}-{variant}{suffix}.json"
    path.write_text(json.dumps(doc, indent=2))
    return path


def _lines(path: Path) -> int:
    with path.open(encoding="utf-8") as file:
        return sum(1 for _ in file)


# -- the harness --------------------------------------------------------------------------------
@dataclass(frozen=True)
class Rep:
    """One repetition: the limit, and each contender's images/s and the others' load."""

    limit: float
    decode_ms: float
    model_ms: float
    rates: dict[str, float]
    """images/s by contender: DataLoader, Graphbook (run), Graphbook (whole CLI)."""
    others: dict[str, float]
    """Cores' worth of CPU other processes used while each contender ran."""

    def available(self, contender: str) -> float:
        """The limit for the CPU that other processes left free."""
        return self.limit * max(CORES - self.others[contender], 0.1) / CORES


@dataclass
class Results:
    """Every repetition's figures for one model; ratios are taken within a repetition."""

    model: str
    images: int
    reps: list[Rep] = field(default_factory=list)

    def rows(self) -> list[list[Any]]:
        limits = [r.limit for r in self.reps]
        rows: list[list[Any]] = [[self.model, "limit", self.images, median(limits),
                                  spread(limits), "", 1.0, 1.0, ""]]  # fmt: skip
        for name in (DATALOADER, *VARIANTS.values(), GRAPHBOOK_CLI):
            if name not in self.reps[0].rates:
                continue
            rates = [r.rates[name] for r in self.reps]
            rows.append([
                self.model, name, self.images, median(rates), spread(rates),
                median([r.others[name] for r in self.reps]),
                median([r.rates[name] / r.limit for r in self.reps]),
                median([r.rates[name] / r.available(name) for r in self.reps]),
                median([r.rates[name] / r.rates[DATALOADER] for r in self.reps]),
            ])  # fmt: skip
        return rows


DATALOADER, GRAPHBOOK_CLI = "DataLoader", "Graphbook (whole CLI)"
VARIANTS = {
    "decorated": "Graphbook (run)",
    "plain": "Graphbook, plain resource (run)",
    "unsliced": "Graphbook, plain resource, GRAPHBOOK_CPU_SLICES=1 (run)",
    "onethread": "Graphbook, plain resource, no slices, 1 torch thread (run)",
}
ENVIRONMENTS = {
    "unsliced": {"GRAPHBOOK_CPU_SLICES": "1"},
    "onethread": {"GRAPHBOOK_CPU_SLICES": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"},
}
"""Contender names by workflow variant (see `graphbook`). *whole CLI* is the first variant
run, timed with its start-up."""


def measure(model: str, images: int, reps: int, variants: Sequence[str]) -> Results:
    folder = image_folder(images)
    results = Results(model, images)
    for n in range(reps):
        rep = repetition(model, folder, images, variants)
        results.reps.append(rep)
        rates = ", ".join(f"{k} {v:.1f}" for k, v in rep.rates.items())
        load = max(rep.others.values())
        print(f"  {model} rep {n + 1}/{reps}: limit {rep.limit:.1f}, {rates} images/s; "
              f"others' load up to {load:.2f} cores", flush=True)  # fmt: skip
    return results


def repetition(model: str, folder: Path, images: int, variants: Sequence[str]) -> Rep:
    samples = str(min(images, 256 if model == "mobilenet_v3_small" else 128))
    limits = run_measured(_contender("limit", model, folder, "--samples", samples)).figures
    out = OUT / f"top5-dataloader-{model}.jsonl"
    loader = run_measured(_contender("dataloader", model, folder, "--out", str(out)))
    _check(loader.figures["lines"], images, "DataLoader")
    rates = {DATALOADER: loader.figures["ips"]}
    others = {DATALOADER: loader.others}
    for variant in variants:
        out = OUT / f"top5-graphbook-{variant}-{model}.jsonl"
        run = graphbook(model, folder, out, variant)
        _check(_lines(out), images, f"Graphbook ({variant})")
        name = VARIANTS[variant]
        rates[name], others[name] = images / _run_seconds(run), run.others
        if GRAPHBOOK_CLI not in rates:
            rates[GRAPHBOOK_CLI], others[GRAPHBOOK_CLI] = images / run.wall, run.others
    return Rep(limits["ips"], limits["decode_ms"], limits["model_ms"], rates, others)


def image_folder(count: int) -> Path:
    """A folder of `count` benchmark images, made if missing."""
    from bench.nodes.images import make_images

    folder = OUT / f"images-{count}"
    make_images(folder, count, OUT / "originals")
    return folder


def _contender(name: str, model: str, folder: Path, *extra: str) -> list[str]:
    return python(
        "bench.images", "--contender", name, "--model", model, "--folder", str(folder), *extra
    )


def _run_seconds(measured: Measured) -> float:
    """The run's own seconds, from the `run_finished` event of `graphbook run --json`."""
    for line in measured.stdout.splitlines():
        event = json.loads(line)
        if event.get("type") == "run_finished":
            if event["status"] != "completed" or event["errors"]:
                raise RuntimeError(f"the Graphbook run did not complete: {line}")
            return float(event["seconds"])
    raise RuntimeError("graphbook run printed no run_finished event")


def _check(lines: int, images: int, who: str) -> None:
    if lines != images:
        raise RuntimeError(f"{who} wrote {lines} lines for {images} images")


def summary(results: list[Results]) -> str:
    header = ["model", "contender", "images", "images/s (median)", "min..max",
              "others' load (cores)", "/ limit", "/ limit for the CPU left",
              "/ DataLoader"]  # fmt: skip
    rows = [row for r in results for row in r.rows()]
    costs = [
        [r.model, median([x.decode_ms for x in r.reps]), median([x.model_ms for x in r.reps]),
         median([x.limit for x in r.reps])]
        for r in results
    ]  # fmt: skip
    cost_header = ["model", "decode CPU ms/image", "model CPU ms/image", "limit images/s"]
    return f"{table(header, rows)}\n\n{table(cost_header, costs)}"


def main(argv: Sequence[str] | None = None) -> None:
    args = parse(argv)
    if args.contender is not None:
        run_contender(args)
        return
    OUT.mkdir(parents=True, exist_ok=True)
    counts = QUICK_IMAGES if args.quick else IMAGES
    reps = args.reps or (1 if args.quick else 3)
    print(f"image pipeline, {machine()}, {reps} rep(s)", flush=True)
    variants = list(dict.fromkeys([*args.graphbook, *(["plain"] if args.plain else [])]))
    results = [measure(m, args.images or counts[m], reps, variants) for m in args.models]
    print(summary(results))


def run_contender(args: argparse.Namespace) -> None:
    if args.contender == "limit":
        report(limit(args.model, args.folder, args.samples))
    elif args.contender == "dataloader":
        report(dataloader(args.model, args.folder, args.out))


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.images", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer images, one repetition")
    parser.add_argument("--models", nargs="+", default=list(IMAGES), choices=list(IMAGES))
    parser.add_argument("--reps", type=int, help="repetitions (default 3, quick 1)")
    parser.add_argument("--images", type=int, help="images per run (default: by model)")
    parser.add_argument(
        "--graphbook",
        nargs="+",
        default=["decorated"],
        choices=list(VARIANTS),
        help="Graphbook workflows to run (default: decorated); see graphbook() in this file",
    )
    parser.add_argument("--plain", action="store_true", help="same as adding `plain`")
    parser.add_argument("--contender", choices=CONTENDERS, help=argparse.SUPPRESS)
    parser.add_argument("--model", help=argparse.SUPPRESS)
    parser.add_argument("--folder", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--samples", type=int, default=256, help=argparse.SUPPRESS)
    return parser.parse_args(argv)


if __name__ == "__main__":
    main()
