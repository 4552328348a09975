"""Batch inference with `torch_batch_process`: ShapesNet classifies shape images (JPEG files
that `make_dataset` writes), in one process or several, checkpointing as it goes. A reducer
computes the accuracy; the predictions are written through `upload_path()`; the run is linked to
the model version it used, so its metrics show under that version.

    python -m graphbook.examples.batch_inference --images 960
    torchrun --nproc_per_node=2 -m graphbook.examples.batch_inference --images 960
    graphbook runs --kind batch
    graphbook metrics --model shapes-net

Stop it with Ctrl-C and run the same command again: it resumes where it stopped.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch
from PIL import Image
from torch.utils.data import Dataset

from graphbook.batch_process import MetricReducer, TorchBatchProcessor, client, torch_batch_process
from graphbook.batch_process.client import ModelVersion
from graphbook.batch_process.context import TorchBatchProcessorContext
from graphbook.examples.shapes import (
    CLASSES,
    WEIGHTS,
    label_of,
    load_model,
    make_dataset,
    preprocess,
)
from graphbook.store import Store, data_home

MODEL = "shapes-net"
IMAGES_DIR = Path("data") / "shapes-batch"
logger = logging.getLogger(__name__)


class ShapeFiles(Dataset[tuple[torch.Tensor, int, int]]):
    """The JPEGs in a folder written by `make_dataset`; item i is (image, label, i)."""

    def __init__(self, folder: Path) -> None:
        self.paths = sorted(folder.glob("*.jpg"))
        if not self.paths:
            raise FileNotFoundError(f"no .jpg images in {folder}")

    def __len__(self) -> int:
        return len(self.paths)

    def __getitem__(self, index: int) -> tuple[torch.Tensor, int, int]:
        path = self.paths[index]
        with Image.open(path) as image:
            tensor = preprocess(image)
        return tensor, CLASSES.index(label_of(path)), index


class AccuracyReducer(MetricReducer):
    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.correct = 0
        self.count = 0

    def update(self, predicted: torch.Tensor, labels: torch.Tensor) -> None:
        self.correct += int((predicted == labels).sum())
        self.count += len(labels)

    def per_slot_reduce(self) -> tuple[int, int]:
        return self.correct, self.count

    def cross_slot_reduce(self, per_slot_metrics: list[tuple[int, int]]) -> float:
        count = sum(n for _, n in per_slot_metrics)
        return sum(c for c, _ in per_slot_metrics) / max(count, 1)


class ShapesInference(TorchBatchProcessor):
    """Classifies each batch; writes `predictions_<first index>.jsonl` at every checkpoint."""

    def __init__(self, context: TorchBatchProcessorContext) -> None:
        self.context = context
        hparams = context.get_hparams()
        version = client.get_model(hparams["model"]).get_version(hparams["version"])
        context.report_task_using_model_version(version)
        weights = version.checkpoint.download() / WEIGHTS.name
        self.model = context.prepare_model_for_inference(load_model(weights))
        self.accuracy = context.wrap_reducer(AccuracyReducer(), name="accuracy")
        self.predictions: list[dict[str, Any]] = []

    def process_batch(self, batch: Any, batch_idx: int) -> None:
        images, labels, indices = batch
        with torch.inference_mode(), self.profiler as p:
            predicted = self.model(self.context.to_device(images)).argmax(1).cpu()
            p.step()
        self.accuracy.update(predicted, labels)
        for index, label, guess in zip(
            indices.tolist(), labels.tolist(), predicted.tolist(), strict=True
        ):
            self.predictions.append(
                {"index": index, "label": CLASSES[label], "predicted": CLASSES[guess]}
            )

    def on_checkpoint_start(self) -> None:
        if not self.predictions:
            return
        with self.context.upload_path() as folder:
            name = f"predictions_{self.predictions[0]['index']:06d}.jsonl"
            lines = (json.dumps(p) + "\n" for p in self.predictions)
            (folder / name).write_text("".join(lines))
        self.predictions = []


def model_version(name: str = MODEL) -> ModelVersion:
    """The latest version of model `name`; the first time, the weights Graphbook ships become
    its version 1. Ranks started together take turns (a file lock), so only one registers it."""
    home = data_home()
    home.mkdir(parents=True, exist_ok=True)
    with (home / f"{name}.lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            return client.get_model(name).get_version()
        except KeyError:
            checkpoint = client.import_checkpoint(WEIGHTS, name=f"{name} (shipped weights)")
            return client.create_model(name).register_version(checkpoint)


def images(folder: Path, count: int) -> ShapeFiles:
    """The folder's images, written first (seed 0) if it has none."""
    if not any(folder.glob("*.jpg")):
        make_dataset(folder, count)
    return ShapeFiles(folder)


def parser() -> argparse.ArgumentParser:
    parse = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parse.add_argument("--images", type=int, default=960, help="how many images to make")
    parse.add_argument("--images-dir", type=Path, default=IMAGES_DIR)
    parse.add_argument("--batch-size", type=int, default=64)
    parse.add_argument("--checkpoint-interval", type=int, default=5)
    parse.add_argument("--workers", type=int, default=0, help="DataLoader worker processes")
    parse.add_argument("--model", default=MODEL)
    parse.add_argument("--run-name", default="shapes batch inference")
    parse.add_argument("--start-over", action="store_true")
    return parse


def main(argv: Sequence[str] | None = None) -> None:
    args = parser().parse_args(argv)
    version = model_version(args.model)
    dataset = images(args.images_dir, args.images)
    torch_batch_process(
        ShapesInference,
        dataset,
        batch_size=args.batch_size,
        checkpoint_interval=args.checkpoint_interval,
        dataloader_kwargs={"num_workers": args.workers},
        run_name=args.run_name,
        start_over=args.start_over,
        hparams={"model": version.model_name, "version": version.version},
    )
    if os.environ.get("RANK", "0") == "0":
        report(args.run_name, version)


def report(run_name: str, version: ModelVersion) -> None:
    """Print the run's accuracy and where its predictions are (this is the example's output)."""
    record = Store().latest_run("batch", run_name)
    assert record is not None
    run = client.get_run(record.id)
    [accuracy] = [m.metrics["accuracy"] for m in run.get_metrics("inference")]
    files = run.files()
    print(f"run {run.id}: accuracy {accuracy:.4f} on {run.record.counts['items_completed']} images")
    print(f"predictions: {len(files)} files under {files[0].parents[3] if files else '-'}")
    print(f"{version.model_name} v{version.version} has {len(version.get_metrics())} metric rows")


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    main()
