"""The Models pack end to end: model resources of every kind, and the steps that classify,
embed and apply them to folders of JPEGs, with 0 and 2 workers and bad inputs."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest
import torch
import torchvision
from PIL import Image

from graphbook import Workflow, run_workflow
from graphbook.engine.executor import RunResult
from graphbook.events import Event, NodeLog
from graphbook.steps import GeneratorSourceStep

os.environ.setdefault("HF_HUB_OFFLINE", "1")
SMALL = {"size": 40, "crop": 32}
"""Tiny inputs keep the models fast; the pipeline is the same at 256/224."""


class Images(GeneratorSourceStep):
    """The test's source: `{"image": record}` a dict, or `per_dict` records in a list."""

    Parameters: ClassVar[dict[str, Any]] = {
        "paths": {"type": "list", "default": []},
        "per_dict": {"type": "int", "default": 0},
    }
    Category: ClassVar[str] = "Test"
    paths: list[str]
    per_dict: int = 0

    def load(self) -> Iterator[dict[str, Any]]:
        records = [{"type": "image", "value": p} for p in self.paths]
        if not self.per_dict:
            yield from ({"image": r, "n": n} for n, r in enumerate(records))
            return
        for start in range(0, len(records), self.per_dict):
            yield {"image": records[start : start + self.per_dict]}


def jpegs(folder: Path, count: int, size: tuple[int, int] = (64, 48)) -> list[str]:
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    paths = []
    for n in range(count):
        pixels = rng.integers(0, 256, (size[1], size[0], 3), dtype=np.uint8)
        path = folder / f"{n:03d}.jpg"
        Image.fromarray(pixels).save(path, quality=85)
        paths.append(str(path))
    return paths


WEIGHTS: dict[tuple[str, int], Path] = {}


def saved_state(tmp_path: Path, arch: str = "mobilenet_v3_small", classes: int = 3) -> Path:
    """A state_dict of random weights, made once for the module (read-only for the tests)."""
    if (arch, classes) not in WEIGHTS or not WEIGHTS[arch, classes].exists():
        torch.manual_seed(0)
        model = torchvision.models.get_model(arch, weights=None, num_classes=classes)
        path = tmp_path / f"{arch}-{classes}.pt"
        torch.save(model.state_dict(), path)
        WEIGHTS[arch, classes] = path
    return WEIGHTS[arch, classes]


def classify(
    paths: list[str],
    model: tuple[str, dict[str, Any]],
    workers: int = 0,
    step: str = "ClassifyImages",
    per_dict: int = 0,
    events: list[Event] | None = None,
    **params: Any,
) -> RunResult:
    workflow = Workflow()
    source = workflow.add(Images, id="images", paths=paths, per_dict=per_dict)
    resource = workflow.add(model[0], id="model", **model[1])
    node = workflow.add(step, id="step", model=resource, **{**SMALL, **params})
    workflow.connect(source, node)
    sink = events.append if events is not None else (lambda event: None)
    return run_workflow(workflow, collect=True, workers=workers, continue_on_error=True, sink=sink)


def error_of(result: RunResult) -> str:
    assert result.errors, f"expected an error; the run ended {result.status}"
    return result.errors[0].error.message


def torchvision_model(weights: Path | str = "", **params: Any) -> tuple[str, dict[str, Any]]:
    return "TorchvisionModel", {"arch": "mobilenet_v3_small", "weights": str(weights), **params}


# -- classify ---------------------------------------------------------------------------------
@pytest.mark.parametrize("workers", [0, 2])
def test_classify_a_folder_with_labels_from_a_file(tmp_path: Path, workers: int) -> None:
    paths = jpegs(tmp_path / "images", 10)
    labels = tmp_path / "labels.txt"
    labels.write_text("cat\ndog\nbird\n")
    model = torchvision_model(saved_state(tmp_path), num_classes=3)
    result = classify(paths, model, workers, labels=str(labels), batch_size=4)
    assert result.ok, result.errors
    out = result.output("step")
    assert [d["n"] for d in out] == list(range(10))
    assert all(d["prediction"] in {"cat", "dog", "bird"} for d in out)
    assert all(0.0 < d["confidence"] <= 1.0 for d in out)
    assert "top_k" not in out[0]


def test_top_k_with_labels_as_a_list(tmp_path: Path) -> None:
    paths = jpegs(tmp_path / "images", 3)
    model = torchvision_model(saved_state(tmp_path), num_classes=3)
    result = classify(paths, model, labels="cat, dog, bird", top_k=2)
    assert result.ok, result.errors
    for data in result.output("step"):
        (first, p1), (_, p2) = data["top_k"]
        assert first == data["prediction"] and p1 == data["confidence"] >= p2


def test_many_images_per_dict_put_results_on_each_record(tmp_path: Path) -> None:
    paths = jpegs(tmp_path / "images", 7)
    model = torchvision_model(saved_state(tmp_path), num_classes=3)
    result = classify(paths, model, workers=2, per_dict=3, labels="a,b,c", batch_size=2)
    assert result.ok, result.errors
    out = result.output("step")
    assert [len(d["image"]) for d in out] == [3, 3, 1]
    records = [r for d in out for r in d["image"]]
    assert all(r["prediction"] in "abc" and "confidence" in r for r in records)
    assert "prediction" not in out[0]


def test_more_outputs_than_labels_is_an_error(tmp_path: Path) -> None:
    paths = jpegs(tmp_path / "images", 2)
    model = torchvision_model(saved_state(tmp_path), num_classes=3)
    message = error_of(classify(paths, model, labels="cat,dog"))
    assert "3 outputs but there are 2 labels" in message


def test_random_weights_say_so(tmp_path: Path) -> None:
    events: list[Event] = []
    result = classify(jpegs(tmp_path / "images", 2), torchvision_model(), events=events)
    assert result.ok, result.errors
    logs = [str(e.message) for e in events if isinstance(e, NodeLog)]
    assert any("random weights" in m for m in logs), logs
    assert isinstance(result.output("step")[0]["prediction"], int), "no names: class indices"


# -- bad images ---------------------------------------------------------------------------------
def truncated(folder: Path) -> str:
    good = jpegs(folder, 1, (160, 120))[0]
    path = folder / "broken.jpg"
    path.write_bytes(Path(good).read_bytes()[:600])
    return str(path)


@pytest.mark.parametrize("workers", [0, 2])
def test_a_truncated_jpeg_fails_its_item_and_the_rest_go_through(
    tmp_path: Path, workers: int
) -> None:
    paths = jpegs(tmp_path / "images", 4)
    paths.insert(2, truncated(tmp_path / "images"))
    model = torchvision_model(saved_state(tmp_path), num_classes=3)
    result = classify(paths, model, workers, batch_size=2)
    assert result.status == "completed"
    assert len(result.errors) == 1
    message = error_of(result)
    assert "broken.jpg" in message and "truncated JPEG" in message and "on_error" in message
    assert len(result.output("step")) == 4


def test_on_error_skip_drops_and_counts(tmp_path: Path) -> None:
    folder = tmp_path / "images"
    paths = [*jpegs(folder, 3), truncated(folder), str(folder / "missing.jpg")]
    (folder / "notes.jpg").write_text("not a picture")
    paths.append(str(folder / "notes.jpg"))
    model = torchvision_model(saved_state(tmp_path), num_classes=3)
    events: list[Event] = []
    result = classify(paths, model, 2, on_error="skip", events=events)
    assert result.ok, result.errors
    assert len(result.output("step")) == 3
    logs = [str(e.message) for e in events if isinstance(e, NodeLog)]
    summary = [m for m in logs if m.startswith("skipped")]
    assert summary and summary[0].startswith("skipped 3 unreadable images: first "), logs


def test_on_error_skip_drops_records_and_a_dict_left_empty(tmp_path: Path) -> None:
    folder = tmp_path / "images"
    paths = [*jpegs(folder, 2), truncated(folder), str(folder / "gone.jpg")]
    model = torchvision_model(saved_state(tmp_path), num_classes=3)
    result = classify(paths, model, per_dict=2, on_error="skip", labels="a,b,c")
    assert result.ok, result.errors
    out = result.output("step")
    assert len(out) == 1 and len(out[0]["image"]) == 2


# -- model resources: bad inputs ---------------------------------------------------------------
def test_a_missing_weights_file(tmp_path: Path) -> None:
    message = error_of(classify([], torchvision_model(tmp_path / "nope.pt")))
    assert "nope.pt" in message and "does not exist" in message


def test_weights_for_another_num_classes_name_the_mismatch(tmp_path: Path) -> None:
    model = torchvision_model(saved_state(tmp_path, classes=5), num_classes=3)
    message = error_of(classify([], model))
    assert "classifier.3.weight: weights [5, 1024], model [3, 1024]" in message
    assert "num_classes" in message and "5 outputs" in message


def test_weights_in_a_checkpoint_dict(tmp_path: Path) -> None:
    state = torch.load(saved_state(tmp_path), weights_only=True)
    checkpoint = tmp_path / "checkpoint.pt"
    torch.save({"epoch": 3, "model": {f"module.{k}": v for k, v in state.items()}}, checkpoint)
    result = classify(jpegs(tmp_path / "images", 2), torchvision_model(checkpoint, num_classes=3))
    assert result.ok, result.errors


def test_an_unknown_arch_lists_close_names() -> None:
    message = error_of(classify([], ("TorchvisionModel", {"arch": "resnet19"})))
    assert "no architecture 'resnet19'" in message and "resnet18" in message


def test_default_weights_that_are_not_cached(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "torch"))
    message = error_of(classify([], torchvision_model("default")))
    assert "mobilenet_v3_small-047dcff4.pth" in message
    assert str(tmp_path / "torch" / "hub" / "checkpoints") in message
    assert "never downloads" in message


def test_default_weights_from_the_cache_bring_their_class_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "torch"))
    cache = tmp_path / "torch" / "hub" / "checkpoints"
    cache.mkdir(parents=True)
    model = torchvision.models.mobilenet_v3_small(weights=None)
    torch.save(model.state_dict(), cache / "mobilenet_v3_small-047dcff4.pth")
    result = classify(jpegs(tmp_path / "images", 2), torchvision_model("default"))
    assert result.ok, result.errors
    names = torchvision.models.MobileNet_V3_Small_Weights.DEFAULT.meta["categories"]
    assert all(d["prediction"] in names for d in result.output("step"))


# -- other model kinds -------------------------------------------------------------------------
def tiny_net() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Conv2d(3, 4, 3), torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(),
        torch.nn.Linear(4, 3),
    ).eval()  # fmt: skip


def test_torchscript_model(tmp_path: Path) -> None:
    path = tmp_path / "net.pt"
    traced = torch.jit.trace(tiny_net(), torch.zeros(1, 3, 32, 32))  # type: ignore[no-untyped-call]
    torch.jit.save(traced, str(path))
    result = classify(jpegs(tmp_path / "images", 3), ("TorchScriptModel", {"path": str(path)}))
    assert result.ok, result.errors
    assert all(d["prediction"] in range(3) for d in result.output("step"))
    bad = tmp_path / "bad.pt"
    bad.write_text("not a model")
    message = error_of(classify([], ("TorchScriptModel", {"path": str(bad)})))
    assert "bad.pt is not a TorchScript file" in message


def test_onnx_model(tmp_path: Path) -> None:
    path = tmp_path / "net.onnx"
    torch.onnx.export(
        tiny_net(), (torch.zeros(1, 3, 32, 32),), str(path), dynamo=False,
        input_names=["x"], dynamic_axes={"x": {0: "n"}},
    )  # fmt: skip
    paths = jpegs(tmp_path / "images", 5)
    result = classify(paths, ("ONNXModel", {"path": str(path)}), labels="a,b,c", batch_size=2)
    assert result.ok, result.errors
    assert all(d["prediction"] in "abc" for d in result.output("step"))
    applied = classify(paths, ("ONNXModel", {"path": str(path)}), step="ApplyModel")
    assert applied.output("step")[0]["output"].shape == (3,)
    message = error_of(classify([], ("ONNXModel", {"path": str(tmp_path / "none.onnx")})))
    assert "none.onnx does not exist" in message


def hf_classifier(folder: Path) -> Path:
    from transformers import ViTConfig, ViTForImageClassification, ViTImageProcessor

    torch.manual_seed(0)
    config = ViTConfig(
        image_size=32, patch_size=8, num_hidden_layers=1, hidden_size=32,
        num_attention_heads=2, intermediate_size=64,
        id2label={0: "cat", 1: "dog", 2: "bird"}, label2id={"cat": 0, "dog": 1, "bird": 2},
    )  # fmt: skip
    ViTForImageClassification(config).save_pretrained(folder)
    ViTImageProcessor(size={"height": 32, "width": 32}).save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def vit(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return hf_classifier(tmp_path_factory.mktemp("vit"))


@pytest.mark.parametrize("workers", [0, 2])
def test_hugging_face_image_classifier(tmp_path: Path, vit: Path, workers: int) -> None:
    folder = vit
    paths = jpegs(tmp_path / "images", 5)
    result = classify(paths, ("HuggingFaceModel", {"path": str(folder)}), workers, top_k=2)
    assert result.ok, result.errors
    for data in result.output("step"):
        assert data["prediction"] in {"cat", "dog", "bird"}
        assert len(data["top_k"]) == 2 and data["top_k"][0][0] == data["prediction"]


def test_hugging_face_model_not_in_the_cache(tmp_path: Path) -> None:
    model = ("HuggingFaceModel", {"path": "someone/not-a-cached-model"})
    message = error_of(classify(jpegs(tmp_path / "images", 1), model))
    assert "someone/not-a-cached-model" in message and "never downloads" in message


# -- embed and apply ------------------------------------------------------------------------------
@pytest.mark.parametrize(("arch", "width"), [("mobilenet_v3_small", 1024), ("resnet18", 512)])
def test_embed_gives_unit_vectors_of_the_penultimate_width(
    tmp_path: Path, arch: str, width: int
) -> None:
    paths = jpegs(tmp_path / "images", 5)
    weights = str(saved_state(tmp_path, arch))
    model = ("TorchvisionModel", {"arch": arch, "weights": weights, "num_classes": 3})
    result = classify(paths, model, step="EmbedImages", batch_size=4)
    assert result.ok, result.errors
    for data in result.output("step"):
        vector = data["embedding"]
        assert vector.dtype == np.float32 and vector.shape == (width,)
        assert abs(float(np.linalg.norm(vector)) - 1.0) < 1e-4


def test_embed_a_model_as_it_is_and_classify_it_in_the_same_run(tmp_path: Path) -> None:
    paths = jpegs(tmp_path / "images", 3)
    workflow = Workflow()
    source = workflow.add(Images, id="images", paths=paths)
    model = workflow.add("TorchvisionModel", id="model", arch="mobilenet_v3_small")
    embed = workflow.add("EmbedImages", id="embed", model=model, normalize=False, **SMALL)
    label = workflow.add("ClassifyImages", id="classify", model=model, **SMALL)
    workflow.connect(source, embed)
    workflow.connect(embed, label)
    result = run_workflow(workflow, collect=True)
    assert result.ok, result.errors
    for data in result.output("classify"):
        assert data["embedding"].shape == (1024,) and isinstance(data["prediction"], int)


def test_apply_model_writes_raw_outputs(tmp_path: Path) -> None:
    paths = jpegs(tmp_path / "images", 3)
    model = torchvision_model(saved_state(tmp_path), num_classes=3)
    result = classify(paths, model, step="ApplyModel", output_field="logits", preset="none")
    assert result.ok, result.errors
    logits = [d["logits"] for d in result.output("step")]
    assert all(isinstance(v, np.ndarray) and v.shape == (3,) for v in logits)


def test_labels_from_a_json_file_that_is_missing(tmp_path: Path) -> None:
    labels = tmp_path / "labels.json"
    labels.write_text(json.dumps(["a", "b", "c"]))
    model = torchvision_model(saved_state(tmp_path), num_classes=3)
    paths = jpegs(tmp_path / "images", 1)
    assert classify(paths, model, labels=str(labels)).output("step")[0]["prediction"] in "abc"
    message = error_of(classify(paths, model, labels=str(tmp_path / "nope.json")))
    assert "nope.json does not exist" in message


def hf_captioner(folder: Path) -> Path:
    """A tiny BLIP captioner with its processor (a BERT tokenizer of eleven words)."""
    from transformers import (
        BertTokenizer,
        BlipConfig,
        BlipForConditionalGeneration,
        BlipImageProcessor,
        BlipProcessor,
    )

    torch.manual_seed(0)
    words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "[DEC]", "a", "cat", "on", "mat"]
    (folder / "vocab.txt").write_text("\n".join(words) + "\n")
    tokenizer = BertTokenizer(str(folder / "vocab.txt"), bos_token="[DEC]")
    tiny = {"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 1}
    config = BlipConfig(
        vision_config={**tiny, "image_size": 32, "patch_size": 8, "num_attention_heads": 2},
        text_config={
            **tiny, "vocab_size": len(words), "num_attention_heads": 2,
            "encoder_hidden_size": 32, "bos_token_id": 5, "pad_token_id": 0,
            "sep_token_id": 3, "eos_token_id": 3,
        },
    )  # fmt: skip
    BlipForConditionalGeneration(config).save_pretrained(folder)
    processor = BlipImageProcessor(size={"height": 32, "width": 32})
    blip = BlipProcessor(image_processor=processor, tokenizer=tokenizer)  # type: ignore[no-untyped-call]
    blip.save_pretrained(folder)
    return folder


def test_caption_images_with_a_local_captioner(tmp_path: Path) -> None:
    folder = hf_captioner(tmp_path)
    paths = jpegs(tmp_path / "images", 3)
    model = ("HuggingFaceModel", {"path": str(folder)})
    result = classify(paths, model, step="CaptionImages", max_new_tokens=4, per_dict=2)
    assert result.ok, result.errors
    records = [r for d in result.output("step") for r in d["image"]]
    assert len(records) == 3 and all(isinstance(r["caption"], str) for r in records)
    message = error_of(classify(paths, torchvision_model(), step="CaptionImages"))
    assert "CaptionImages takes a HuggingFaceModel of a captioning model" in message
