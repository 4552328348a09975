"""torch.profiler over a few batches of a training run (`profiling_enabled`)."""

from __future__ import annotations

import torch

from graphbook.trainer.parts import RunParts
from graphbook.trainer.runs import RunStart

PROFILE_SCHEDULE = {"wait": 1, "warmup": 1, "active": 3, "repeat": 1}
"""With profiling_enabled: batches skipped, warmed up on, then traced (once per attempt)."""


def profiler(parts: RunParts, run: RunStart) -> torch.profiler.profile:
    """torch.profiler over a few batches; each process writes its trace into the run's
    `profile` folder, a Chrome trace that Perfetto (ui.perfetto.dev) and TensorBoard's
    profiler plugin open."""
    folder = run.root / "profile"
    activities = [torch.profiler.ProfilerActivity.CPU]
    if parts.context.device.type == "cuda":
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    handler = torch.profiler.tensorboard_trace_handler(str(folder), worker_name=f"rank{parts.rank}")
    parts.display.say(f"profiling {PROFILE_SCHEDULE['active']} batches into {folder}")
    return torch.profiler.profile(
        activities=activities,
        schedule=torch.profiler.schedule(**PROFILE_SCHEDULE),
        on_trace_ready=handler,
    )
