"""Models: resources for torchvision, TorchScript, ONNX and Hugging Face models, and the steps
that use them (classify, embed, caption, apply).

A model resource's value is the model itself; the engine puts a torch module in eval mode on
the device of its `device` parameter, and on the CPU runs it on per-core slices of each batch
(graphbook/engine/devices.py). Nothing here ever downloads: weights come from a local file or
from a cache that already holds them, and a miss is an error that says where to put the file.

The steps decode images in the worker pool (graphbook.nodes.preprocess.ImageLoader: uint8 out,
through shared memory) and normalise each batch on the model's device.
"""

from __future__ import annotations

import difflib
import json
import os
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from graphbook.nodes.common import Data, NodeInputError, local_path
from graphbook.nodes.preprocess import (
    IMAGE_STEP_PARAMETERS,
    ImageBatchStep,
    is_pipeline,
)
from graphbook.resources import Resource

if TYPE_CHECKING:
    import torch

LABELS_ATTR = "graphbook_labels"
"""The attribute of a model value that holds its class names (a list), when they are known."""
ARCH_ATTR = "graphbook_arch"
"""The attribute of a model built by TorchvisionModel that names its architecture."""
DEVICE = {"type": "string", "default": "auto", "description": "cpu, cuda, cuda:1 ... or auto"}


# -- resources ----------------------------------------------------------------------------------
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


class HuggingFaceModel(Resource):
    """A Hugging Face `transformers` model as a pipeline (`pip install graphbook[hf]`), from a
    local folder written by `save_pretrained` or a model id already in the local Hugging Face
    cache. Graphbook never downloads: a model that is not there is an error.

    `task` empty infers it from the model's config (`image-classification` for a
    `...ForImageClassification`; for captioning models `image-to-text`, which transformers 5
    calls `image-text-to-text`). ClassifyImages and
    CaptionImages take it, as does ApplyModel (the pipeline's results as they are).
    """

    Parameters: ClassVar[dict[str, Any]] = {
        "path": {
            "type": "string",
            "required": True,
            "description": "a save_pretrained folder, or a model id in the local HF cache",
        },
        "task": {
            "type": "string",
            "default": "",
            "description": "pipeline task (empty: from the config), e.g. image-classification",
        },
        "device": DEVICE,
    }
    Category: ClassVar[str] = "Models"
    Gives: ClassVar[str] = "object"
    path: str = ""
    task: str = ""
    device: str = "auto"

    def value(self) -> Any:
        try:
            import transformers
        except ImportError:
            raise NodeInputError(
                "HuggingFaceModel needs transformers: install graphbook[hf] (pip install "
                "'graphbook[hf]')"
            ) from None
        from graphbook.resources import choose_device

        source = hf_source(self.path)
        config = hf_config(source)
        task = str(self.task or "").strip() or task_of(config, source)
        task = captioning() if task in CAPTION_TASKS else task
        parts = hf_parts(source, task)
        try:
            make: Any = transformers.pipeline
            return make(task, device=choose_device(self.device), **parts)
        except Exception as exc:
            raise NodeInputError(
                f"cannot make a {task!r} pipeline of {source}: {first_line(exc)}; check the "
                "task parameter"
            ) from None


# -- building and loading -------------------------------------------------------------------------
def known_arch(name: str) -> str:
    import torchvision

    arch = str(name or "").strip()
    names = torchvision.models.list_models()
    if arch in names:
        return arch
    close = difflib.get_close_matches(arch.lower(), names, n=5, cutoff=0.5)
    hint = f"did you mean {', '.join(close)}?" if close else f"({len(names)} to choose from)"
    raise NodeInputError(
        f"torchvision has no architecture {arch!r}; {hint} torchvision.models.list_models() "
        "lists them all"
    )


def build_arch(arch: str, num_classes: int) -> torch.nn.Module:
    import torchvision

    extra = {"num_classes": num_classes} if num_classes > 0 else {}
    try:
        model: torch.nn.Module = torchvision.models.get_model(arch, weights=None, **extra)
    except (TypeError, ValueError) as exc:
        raise NodeInputError(f"cannot build {arch} with num_classes={num_classes}: {exc}") from None
    return model


def torchvision_default(arch: str, num_classes: int) -> torch.nn.Module:
    """The architecture with torchvision's default weights, read from the local torch hub
    cache only; their class names are kept on the model."""
    import torch
    import torchvision

    try:
        weights: Any = torchvision.models.get_model_weights(arch).DEFAULT
    except (ValueError, AttributeError):
        raise NodeInputError(
            f"torchvision has no pretrained weights for {arch}; give a weights file"
        ) from None
    categories = list(weights.meta.get("categories") or [])
    if num_classes and categories and num_classes != len(categories):
        raise NodeInputError(
            f"torchvision's {weights} has {len(categories)} classes, not num_classes="
            f"{num_classes}; set num_classes to 0 (or {len(categories)}), or give your own weights"
        )
    cached = Path(torch.hub.get_dir()) / "checkpoints" / os.path.basename(weights.url)
    if not cached.is_file():
        raise FileNotFoundError(
            f"torchvision's weights for {arch} ({weights}) are not in the local cache: "
            f"{cached} is missing. Graphbook never downloads; copy {weights.url} there "
            "(or set TORCH_HOME to where it is), or give a weights file"
        )
    model: torch.nn.Module = torchvision.models.get_model(arch, weights=weights)
    setattr(model, LABELS_ATTR, categories or None)
    return model


def load_weights(model: torch.nn.Module, path: Path, arch: str) -> None:
    """Load a state_dict file (or a checkpoint dict holding one) into `model`, refusing weights
    that do not fit it with the keys and shapes that differ."""
    state = state_dict_of(read_weights(existing_file(path, "weights file")), path)
    problems = mismatches(model.state_dict(), state)
    if problems:
        raise NodeInputError(
            f"the weights in {path} do not fit {arch}: {'; '.join(problems[:3])}"
            f"{' ...' if len(problems) > 3 else ''}. Check arch and num_classes"
            f"{class_hint(model, state)}"
        )
    model.load_state_dict(state)


def read_weights(path: Path) -> Any:
    import torch

    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:
        raise NodeInputError(
            f"cannot read weights from {path}: {first_line(exc)}. Save them with "
            "torch.save(model.state_dict(), PATH); a torch.jit.save file goes to TorchScriptModel"
        ) from None


def state_dict_of(loaded: Any, path: Path) -> dict[str, Any]:
    import torch

    for key in ("state_dict", "model", "model_state_dict"):
        if isinstance(loaded, dict) and isinstance(loaded.get(key), dict):
            loaded = loaded[key]
            break
    if not isinstance(loaded, dict) or not all(
        isinstance(v, torch.Tensor) for v in loaded.values()
    ):
        raise NodeInputError(
            f"{path} holds no state_dict (a dict of tensors, or a checkpoint with one under "
            "'state_dict' or 'model'); save one with torch.save(model.state_dict(), PATH)"
        )
    prefix = "module."  # saved from DataParallel / DistributedDataParallel
    state: dict[str, Any] = dict(loaded)
    if state and all(k.startswith(prefix) for k in state):
        state = {k[len(prefix) :]: v for k, v in state.items()}
    return state


def mismatches(expected: dict[str, Any], given: dict[str, Any]) -> list[str]:
    """What differs between a model's state_dict and the weights given for it."""
    problems = [
        f"{key}: weights {list(given[key].shape)}, model {list(value.shape)}"
        for key, value in expected.items()
        if key in given and given[key].shape != value.shape
    ]
    missing = [k for k in expected if k not in given]
    extra = [k for k in given if k not in expected]
    if missing:
        problems.append(f"missing {len(missing)} keys ({', '.join(missing[:3])})")
    if extra:
        problems.append(f"{len(extra)} keys the model has not ({', '.join(extra[:3])})")
    return problems


def class_hint(model: torch.nn.Module, state: dict[str, Any]) -> str:
    """`; the weights have N classes: set num_classes to N` when the last layer says so."""
    last = last_linear_name(model)
    weight = state.get(f"{last}.weight") if last else None
    if weight is None or weight.dim() != 2:
        return ""
    return (
        f" (the weights' last layer has {weight.shape[0]} outputs: num_classes {weight.shape[0]}?)"
    )


def existing_file(text: str | Path, what: str) -> Path:
    path = local_path(str(text), what)
    if not path.exists():
        raise FileNotFoundError(f"{what} {path} does not exist; check the path")
    if not path.is_file():
        raise NodeInputError(f"{what} {path} is a folder; give the file")
    return path


def first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0][:300]


def hf_source(text: str) -> str:
    """A local folder as given, else a model id (to be found in the local cache)."""
    path = local_path(text, "path")
    return str(path) if path.exists() else str(text).strip()


def hf_config(source: str) -> Any:
    from transformers import AutoConfig

    try:
        return AutoConfig.from_pretrained(source, local_files_only=True)
    except Exception as exc:
        where = "is not a folder here and "
        raise NodeInputError(
            f"{source} {where if not Path(source).exists() else ''}is not a model in the local "
            f"Hugging Face cache ({first_line(exc)}); Graphbook never downloads: fetch it "
            "once (huggingface-cli download ID) or give the folder save_pretrained wrote"
        ) from None


TASKS = (
    ("ForImageClassification", "image-classification"),
    ("ForVision2Seq", "image-to-text"),
    ("ForImageTextToText", "image-to-text"),
    ("VisionEncoderDecoderModel", "image-to-text"),
    ("ForConditionalGeneration", "image-to-text"),
)
MODEL_CLASSES = {
    "image-classification": ("AutoModelForImageClassification",),
    "image-to-text": ("AutoModelForVision2Seq", "AutoModelForImageTextToText"),
    "image-text-to-text": ("AutoModelForImageTextToText",),
}
"""The transformers class that loads a model for a task; another task loads with AutoModel."""


def hf_parts(source: str, task: str) -> dict[str, Any]:
    """The model and its processors, each loaded from local files only (a pipeline given a
    name would look on the Hub), as keyword arguments for `transformers.pipeline`."""
    import transformers

    names = [n for n in MODEL_CLASSES.get(task, ()) if hasattr(transformers, n)] or ["AutoModel"]
    loader = getattr(transformers, names[0])
    try:
        parts: dict[str, Any] = {"model": loader.from_pretrained(source, local_files_only=True)}
    except Exception as exc:
        raise NodeInputError(
            f"cannot load {source} as a {task!r} model ({first_line(exc)}); check the task "
            "parameter"
        ) from None
    wanted = [("image_processor", "AutoImageProcessor"), ("tokenizer", "AutoTokenizer")]
    if task in CAPTION_TASKS:
        wanted.append(("processor", "AutoProcessor"))
    for key, name in wanted:
        try:
            auto = getattr(transformers, name)
            parts[key] = auto.from_pretrained(source, local_files_only=True)
        except Exception:  # a model without one: the pipeline says if it needs it
            continue
    return parts


def task_of(config: Any, source: str) -> str:
    for arch in getattr(config, "architectures", None) or []:
        for suffix, task in TASKS:
            if str(arch).endswith(suffix):
                return captioning() if task == "image-to-text" else task
    raise NodeInputError(
        f"cannot tell the task of {source} from its config (architectures: "
        f"{getattr(config, 'architectures', None)}); set the task parameter, e.g. "
        "image-classification or image-to-text"
    )


CAPTION_TASKS = ("image-to-text", "image-text-to-text")


def captioning() -> str:
    """The captioning task of the transformers installed: `image-to-text` until version 5,
    which folded it into `image-text-to-text`."""
    from transformers.pipelines import SUPPORTED_TASKS

    return CAPTION_TASKS[0] if CAPTION_TASKS[0] in SUPPORTED_TASKS else CAPTION_TASKS[1]


# -- what steps ask of a model value ----------------------------------------------------------
def last_linear_name(model: Any) -> str | None:
    import torch

    names = [n for n, m in model.named_modules() if isinstance(m, torch.nn.Linear)]
    return names[-1] if names else None


def feature_model(model: torch.nn.Module) -> torch.nn.Module:
    """A copy of a torchvision classifier whose last Linear layer is an Identity: its output
    is the vector the classifier reads."""
    import copy

    import torch

    name = last_linear_name(model)
    if name is None:
        return model
    features = copy.deepcopy(model)
    parent_name, _, leaf = name.rpartition(".")
    parent = features.get_submodule(parent_name) if parent_name else features
    setattr(parent, leaf, torch.nn.Identity())
    return features


def read_labels(text: str) -> list[str] | None:
    """Class names from a parameter: a text file (one a line), a JSON list file, or a
    comma-separated list; None when empty."""
    text = str(text or "").strip()
    if not text:
        return None
    path = Path(os.path.expanduser(text))
    if path.is_file():
        return labels_in_file(path)
    if "," not in text and (os.sep in text or path.suffix.lower() in {".txt", ".json", ".csv"}):
        raise FileNotFoundError(f"labels file {path} does not exist; check the path")
    return [label.strip() for label in text.split(",")]


def labels_in_file(path: Path) -> list[str]:
    content = path.read_text(encoding="utf-8")
    if path.suffix.lower() == ".json":
        loaded = json.loads(content)
        if isinstance(loaded, dict):  # {"0": "cat", ...} as in id2label
            loaded = [loaded[k] for k in sorted(loaded, key=int)]
        if not isinstance(loaded, list):
            raise NodeInputError(f"{path} holds no JSON list of labels")
        return [str(label) for label in loaded]
    return [line.strip() for line in content.splitlines() if line.strip()]


def labels_of(model: Any) -> list[str] | None:
    """The class names a model value carries: torchvision's weights', a HF config's id2label."""
    labels = getattr(model, LABELS_ATTR, None)
    if labels:
        return list(labels)
    config = getattr(getattr(model, "model", model), "config", None)
    id2label = getattr(config, "id2label", None)
    if isinstance(id2label, dict) and id2label:
        return [str(id2label[k]) for k in sorted(id2label, key=int)]
    return None


# -- steps --------------------------------------------------------------------------------------
class ClassifyImages(ImageBatchStep):
    """Classifies each image with an image classifier (TorchvisionModel, TorchScriptModel,
    ONNXModel, or a HuggingFaceModel of task image-classification).

    Each dict gets `prediction` (the class name; its index when no names are known) and
    `confidence` (its softmax probability), and with `top_k` above 1, `top_k`: the best
    classes as `[[label, probability], ...]`. With a list of image records under `item_key`,
    each record gets them. Class names: `labels`, else the model's own (torchvision's weights,
    a Hugging Face config's id2label).

    Example: `{"image": {"type": "image", "value": "cat.jpg"}}` becomes
    `{"image": ..., "prediction": "tabby", "confidence": 0.91}`.
    """

    Parameters: ClassVar[dict[str, Any]] = {
        **IMAGE_STEP_PARAMETERS,
        "top_k": {"type": "int", "default": 1, "description": "best classes listed (1: none)"},
        "labels": {
            "type": "string",
            "default": "",
            "description": "class names: a .txt (one a line) or .json file, or a comma-"
            "separated list; empty: the model's own",
        },
    }
    top_k: int = 1
    labels: str = ""
    names: list[str] | None = None

    def on_start(self) -> None:
        super().on_start()
        self.names = read_labels(self.labels) or labels_of(self.model)
        if self.names is None:
            self.log("no class names (no labels given, none in the model): predictions are indices")

    def results(self, images: list[Any]) -> list[Data]:
        if is_pipeline(self.model):
            return self.pipeline_results(images)
        import torch

        logits = self.forward(self.model, images)
        probabilities = torch.as_tensor(logits).float().reshape(len(images), -1).softmax(dim=1)
        self.check_width(probabilities.shape[1])
        k = max(1, min(int(self.top_k), probabilities.shape[1]))
        values, indices = probabilities.topk(k, dim=1)
        return [self.fields(i, v) for i, v in zip(indices.tolist(), values.tolist(), strict=True)]

    def check_width(self, outputs: int) -> None:
        if self.names is not None and outputs > len(self.names):
            raise NodeInputError(
                f"the model has {outputs} outputs but there are {len(self.names)} labels; give "
                f"one label per output (labels parameter) or check the model's num_classes"
            )

    def label(self, index: int) -> Any:
        return self.names[index] if self.names is not None else index

    def fields(self, indices: list[int], scores: list[float]) -> Data:
        result: Data = {"prediction": self.label(indices[0]), "confidence": round(scores[0], 6)}
        if int(self.top_k) > 1:
            pairs = zip(indices, scores, strict=True)
            result["top_k"] = [[self.label(i), round(s, 6)] for i, s in pairs]
        return result

    def pipeline_results(self, images: list[Any]) -> list[Data]:
        from PIL import Image

        pictures = [Image.fromarray(image) for image in images]
        k = max(1, int(self.top_k))
        found = self.model(pictures, top_k=k, batch_size=len(pictures))
        results = []
        for ranked in found:
            ranked = ranked if isinstance(ranked, list) else [ranked]
            labels = [r["label"] for r in ranked]
            scores = [float(r["score"]) for r in ranked]
            result: Data = {"prediction": labels[0], "confidence": round(scores[0], 6)}
            if k > 1:
                result["top_k"] = [
                    [lab, round(s, 6)] for lab, s in zip(labels, scores, strict=True)
                ]
            results.append(result)
        return results


class EmbedImages(ImageBatchStep):
    """Turns each image into a vector: `embedding`, a float32 numpy array (unit length when
    `normalize` is on), on the dict or on each record of a list under `item_key`.

    For a TorchvisionModel classifier the vector is what its final classifier layer reads
    (resnet18: 512 numbers, mobilenet_v3_small: 1024): the step runs a copy of the model whose
    last Linear layer is replaced by an Identity (a copy, so the model stays whole for other
    steps, and no forward hook, which would stop the engine from running it on per-core
    slices). Any other model's output is flattened and used as it is.
    """

    Parameters: ClassVar[dict[str, Any]] = {
        **IMAGE_STEP_PARAMETERS,
        "normalize": {"type": "boolean", "default": True, "description": "L2-normalise vectors"},
    }
    normalize: bool = True
    features: Any = None

    def on_start(self) -> None:
        super().on_start()
        if is_pipeline(self.model):
            raise NodeInputError(
                "EmbedImages takes a torch, TorchScript or ONNX model, not a Hugging Face "
                "pipeline; use ApplyModel for the pipeline's results"
            )
        self.features = self.model
        if getattr(self.model, ARCH_ATTR, None):
            self.features = feature_model(self.model)

    def results(self, images: list[Any]) -> list[Data]:
        import torch

        output = self.forward(self.features, images)
        vectors = torch.as_tensor(output).float().reshape(len(images), -1)
        if self.normalize:
            vectors = torch.nn.functional.normalize(vectors, dim=1)
        return [{"embedding": v} for v in vectors.cpu().numpy()]


class ApplyModel(ImageBatchStep):
    """Runs any model on each batch of images and writes its raw output for each image under
    `output_field`: a numpy array (a tuple or dict of them for a model with several outputs;
    a Hugging Face pipeline's results as it returns them)."""

    Parameters: ClassVar[dict[str, Any]] = {
        **IMAGE_STEP_PARAMETERS,
        "output_field": {"type": "string", "default": "output", "description": "field written"},
    }
    output_field: str = "output"

    def results(self, images: list[Any]) -> list[Data]:
        field = str(self.output_field or "output")
        if is_pipeline(self.model):
            from PIL import Image

            found = self.model([Image.fromarray(i) for i in images], batch_size=len(images))
            return [{field: r} for r in found]
        per_item = split_output(self.forward(self.model, images), len(images))
        return [{field: value} for value in per_item]


def split_output(output: Any, count: int) -> list[Any]:
    """A batch's output as one value per item: arrays, or tuples/dicts of arrays."""
    import torch

    if isinstance(output, torch.Tensor):
        return (
            list(output.detach().float().cpu().numpy()) if output.dim() else [output.item()] * count
        )
    if isinstance(output, dict):
        parts = {k: split_output(v, count) for k, v in output.items()}
        return [{k: v[n] for k, v in parts.items()} for n in range(count)]
    if isinstance(output, list | tuple):
        columns = [split_output(v, count) for v in output]
        return [tuple(c[n] for c in columns) for n in range(count)]
    raise NodeInputError(
        f"cannot split the model's output of type {type(output).__name__} by image"
    )


class CaptionImages(ImageBatchStep):
    """Writes a caption for each image with a HuggingFaceModel of a captioning model (BLIP,
    GIT, ...; task image-to-text, image-text-to-text in transformers 5): `caption` (text) on
    the dict, or on each record of a list under `item_key`. The images go to the model's own
    processor unresized (`preset`, `size` and `crop` are not used).

    Example: `{"image": "beach.jpg"}` becomes `{"image": "beach.jpg", "caption": "a dog on
    the sand"}`."""

    Parameters: ClassVar[dict[str, Any]] = {
        **IMAGE_STEP_PARAMETERS,
        "max_new_tokens": {
            "type": "int",
            "default": 30,
            "description": "longest caption, in tokens",
        },
    }
    max_new_tokens: int = 30

    def on_start(self) -> None:
        super().on_start()
        if not is_pipeline(self.model) or self.model.task not in CAPTION_TASKS:
            raise NodeInputError(
                "CaptionImages takes a HuggingFaceModel of a captioning model (task "
                f"{captioning()}); wire one (or set its task parameter to {captioning()})"
            )

    def results(self, images: list[Any]) -> list[Data]:
        from PIL import Image

        pictures = [Image.fromarray(image) for image in images]
        tokens = int(self.max_new_tokens)
        if self.model.task == "image-text-to-text":
            prompts = [""] * len(pictures)  # no prompt: a caption
            found = self.model(
                images=pictures, text=prompts, max_new_tokens=tokens, batch_size=len(pictures)
            )
        else:
            found = self.model(pictures, max_new_tokens=tokens, batch_size=len(pictures))
        return [{"caption": caption_text(r)} for r in found]


def caption_text(result: Any) -> str:
    first = result[0] if isinstance(result, list) and result else result
    return str(first.get("generated_text", "")) if isinstance(first, dict) else str(first)
