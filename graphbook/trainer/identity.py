"""What identifies a run's models: their state's tensor shapes, recorded with each checkpoint
so that a resume says which layer changed instead of failing in load_state_dict."""

from __future__ import annotations

from typing import Any

import torch


def model_shapes(models: list[torch.nn.Module]) -> list[dict[str, list[int]]]:
    """Each model's state (parameters and buffers) by name, as shapes."""
    shapes = []
    for model in models:
        entries: dict[str, list[int]] = {}
        for key, value in model.state_dict().items():
            try:
                entries[key] = list(value.shape) if isinstance(value, torch.Tensor) else []
            except (RuntimeError, ValueError):  # an uninitialised lazy parameter
                entries[key] = []
        shapes.append(entries)
    return shapes


def model_changes(was: Any, now: list[dict[str, list[int]]]) -> list[str]:
    """What differs between the models' shapes then and now, in words."""
    if not isinstance(was, list):
        return []
    if len(was) != len(now):
        return [f"the trial wrapped {len(was)} model(s), now {len(now)}"]
    changes = []
    for index, (old, new) in enumerate(zip(was, now, strict=True)):
        which = f"model {index}" if len(now) > 1 else "the model"
        missing, added = sorted(set(old) - set(new)), sorted(set(new) - set(old))
        if missing:
            changes.append(f"{which} lost {_names(missing)}")
        if added:
            changes.append(f"{which} gained {_names(added)}")
        resized = [k for k in old if k in new and list(old[k]) != list(new[k])]
        changes.extend(
            f"{which}'s {k} was {_shape(old[k])}, now {_shape(new[k])}" for k in resized[:4]
        )
        if len(resized) > 4:
            changes.append(f"{which}: {len(resized) - 4} more tensor(s) changed shape")
    return changes


def _names(keys: list[str]) -> str:
    return ", ".join(keys[:4]) + (f" and {len(keys) - 4} more" if len(keys) > 4 else "")


def _shape(shape: list[int]) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]"
