"""The code samples of seeds 000-002 (Determined's Torch Batch Processing API), as written.

What differs from the seeds, and why:
- imports: `graphbook.batch_process` instead of `determined.pytorch.experimental`,
  `determined.pytorch` and `determined.experimental` (same names: torch_batch_process,
  TorchBatchProcessor, MetricReducer, client);
- data: torchvision's FakeData instead of CIFAR10 with download=True (no network); the seeds'
  own transform and file lock are kept;
- what the seeds leave undefined: `get_model()` (a small CIFAR-shaped CNN), the metric reducer
  class, and `process_batch` of the reducer example (a processor needs one);
- `dataset` is the name the seeds' call uses for the `inference_data` they build;
- the checkpoint and model version the lineage example links to are imported into the store
  first (the seeds take them from a Determined cluster).
"""

from __future__ import annotations

import os
import pathlib
from pathlib import Path
from typing import Any

import filelock
import torch
import torchvision as tv
from torch import nn
from torchvision import transforms

from graphbook.batch_process import MetricReducer, TorchBatchProcessor, client, torch_batch_process

IMAGES = 700  # 11 batches of 64: one checkpoint at 10, then the last one


def get_model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(
        nn.Conv2d(3, 6, 5),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(6 * 14 * 14, 10),
    )


def inference_dataset() -> Any:
    # seed 000/001, step "Initialize dataset" (CIFAR10 -> FakeData)
    transform = transforms.Compose(
        [transforms.ToTensor(), transforms.Normalize((0.5, 0.5, 0.5), (0.5, 0.5, 0.5))]
    )
    with filelock.FileLock(os.path.join("/tmp", "inference.lock")):
        inference_data = tv.datasets.FakeData(
            size=IMAGES, image_size=(3, 32, 32), num_classes=10, transform=transform
        )
    return inference_data


# -- seed 001, step 1 (with the profiler lines of seed 000), as written ----------------------
class InferenceProcessor(TorchBatchProcessor):
    def __init__(self, context):
        self.context = context
        self.model = context.prepare_model_for_inference(get_model())
        self.output = []
        self.last_index = 0

    def process_batch(self, batch, batch_idx) -> None:
        model_input = batch[0]
        model_input = self.context.to_device(model_input)

        with torch.no_grad():  # noqa: SIM117 (as the seed writes it)
            with self.profiler as p:
                pred = self.model(model_input)
                p.step()
                output = {"predictions": pred, "input": batch}
                self.output.append(output)

        self.last_index = batch_idx

    def on_checkpoint_start(self):
        """
        During checkpoint, we persist prediction result
        """
        if len(self.output) == 0:
            return
        file_name = f"prediction_output_{self.last_index}"
        with self.context.upload_path() as path:
            file_path = pathlib.Path(path, file_name)
            torch.save(self.output, file_path)

        self.output = []


def test_inference_processor_runs_as_written(home: Path) -> None:
    dataset = inference_dataset()
    # seed 001, step 4, as written
    torch_batch_process(InferenceProcessor, dataset, batch_size=64, checkpoint_interval=10)

    [run] = client.list_runs("batch")
    assert run.status == "completed"
    files = run.files()
    assert [f.name for f in files] == ["prediction_output_9", "prediction_output_10"]
    outputs = [o for f in files for o in torch.load(f)]
    assert sum(len(o["predictions"]) for o in outputs) == IMAGES
    model = get_model().eval()
    first = outputs[0]
    with torch.no_grad():
        assert torch.equal(first["predictions"], model(first["input"][0]))
    assert torch.equal(first["input"][1], torch.tensor([dataset[i][1] for i in range(64)]))
    [profiled] = run.get_metrics("profiler")
    assert profiled.metrics["blocks"] == profiled.metrics["steps"] == 11


class AccuracyMetricReducer(MetricReducer):
    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.correct = 0
        self.count = 0

    def update(self, predictions: torch.Tensor, labels: torch.Tensor) -> None:
        self.correct += int((predictions == labels).sum())
        self.count += len(labels)

    def per_slot_reduce(self) -> tuple[int, int]:
        return self.correct, self.count

    def cross_slot_reduce(self, per_slot_metrics: list[tuple[int, int]]) -> float:
        correct = sum(c for c, _ in per_slot_metrics)
        return correct / sum(n for _, n in per_slot_metrics)


# -- seed 001, "TorchBatchProcessor" section, as written (plus the process_batch it needs) ---
class MyProcessor(TorchBatchProcessor):
    def __init__(self, context):
        self.reducer = context.wrap_reducer(reducer=AccuracyMetricReducer(), name="accuracy")

    def process_batch(self, batch: Any, batch_idx: int) -> None:
        _images, labels = batch
        self.reducer.update(predictions=labels % 2, labels=labels % 2)


def test_reducer_example_runs_as_written(home: Path) -> None:
    dataset = torch.utils.data.Subset(inference_dataset(), range(40))
    torch_batch_process(batch_processor_cls=MyProcessor, dataset=dataset)  # seed 001, "Usage"
    [run] = client.list_runs("batch")
    assert run.record.counts["batches_completed"] == 40  # the default batch size is 1
    [metric] = run.get_metrics("inference")
    assert metric.metrics == {"accuracy": 1.0}


# -- seed 001, steps 2 and 5, as written ------------------------------------------------------
class LinkedProcessor(TorchBatchProcessor):
    def __init__(self, context):
        self.context = context
        hparams = self.context.get_hparams()

        # Model Version
        model = client.get_model(hparams.get("model_name"))
        model_version = model.get_version(hparams.get("model_version"))
        self.context.report_task_using_model_version(model_version)

        # Or Checkpoint
        ckpt = client.get_checkpoint(hparams.get("checkpoint_uuid"))
        self.context.report_task_using_checkpoint(ckpt)

    def process_batch(self, batch: Any, batch_idx: int) -> None:
        pass

    def on_finish(self):
        self.context.report_metrics(
            group="inference",
            steps_completed=self.rank,
            metrics={
                "my_metric": 1.0,
            },
        )


def test_lineage_and_metric_queries_run_as_written(home: Path, tmp_path: Path) -> None:
    weights = tmp_path / "model.pt"
    torch.save(get_model().state_dict(), weights)
    trained = client.import_checkpoint(weights, name="cifar net")
    other = client.import_checkpoint(weights, name="another cifar net")
    version = client.create_model("cifar-net").register_version(trained)
    hparams = {"model_name": "cifar-net", "model_version": 1, "checkpoint_uuid": other.uuid}
    dataset = torch.utils.data.Subset(inference_dataset(), range(8))
    torch_batch_process(LinkedProcessor, dataset, batch_size=4, hparams=hparams)

    # seed 001, step 5, "check the metric afterwards from the SDK"
    ckpt = client.get_checkpoint(other.uuid)
    metrics = ckpt.get_metrics("inference")
    assert [m.metrics for m in metrics] == [{"my_metric": 1.0}]

    model = client.get_model("cifar-net")
    model_version = model.get_version(version.version)
    metrics = model_version.get_metrics("inference")
    assert [(m.steps_completed, m.metrics) for m in metrics] == [(0, {"my_metric": 1.0})]
    # a model version's checkpoint was used too
    assert client.get_checkpoint(trained.uuid).get_metrics("inference") == metrics
