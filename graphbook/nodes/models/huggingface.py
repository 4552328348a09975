"""Hugging Face `transformers` models as pipelines, from local files only (HuggingFaceModel),
and CaptionImages, which takes a captioning one."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from graphbook.nodes.common import Data, NodeInputError, local_path
from graphbook.nodes.inference import (
    IMAGE_STEP_PARAMETERS,
    ImageBatchStep,
    is_pipeline,
)
from graphbook.nodes.models.resources import DEVICE
from graphbook.nodes.models.weights import first_line
from graphbook.resources import Resource


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

    def results(self, images: Sequence[Any]) -> list[Data]:
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
