"""Building torchvision architectures and reading weights into them: a state_dict file
checked against the model (the keys and shapes that differ named), torchvision's own weights
from the local cache only; the attributes a built model carries; model files and their errors."""

from __future__ import annotations

import difflib
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graphbook.nodes.common import NodeInputError, local_path

if TYPE_CHECKING:
    import torch


LABELS_ATTR = "graphbook_labels"
"""The attribute of a model value that holds its class names (a list), when they are known."""
ARCH_ATTR = "graphbook_arch"
"""The attribute of a model built by TorchvisionModel that names its architecture."""


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


def last_linear_name(model: Any) -> str | None:
    import torch

    names = [n for n, m in model.named_modules() if isinstance(m, torch.nn.Linear)]
    return names[-1] if names else None
