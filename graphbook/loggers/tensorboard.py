"""TensorBoardLogger: event files in one folder, a scalar per metric tagged `<group>/<name>`
at the run's step, and the hyperparameters for TensorBoard's HPARAMS tab. torch's
SummaryWriter writes them (the `tensorboard` package: pip install 'graphbook[tensorboard]')."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from graphbook.loggers.base import LoggedRun, numbers
from graphbook.store import MetricRecord


class TensorBoardLogger:
    """Writes event files to `folder` (`tensorboard --logdir folder`). The folder is the run's:
    opening it for a run starts its events over (earlier files stay, their steps purged by
    every TensorBoard reader), then writes the rows the store holds."""

    def __init__(self, folder: str | os.PathLike[str], flush_secs: int = 10) -> None:
        self.folder = Path(folder)
        self.flush_secs = flush_secs
        self._writer: Any = None

    def open(self, run: LoggedRun, history: Sequence[MetricRecord]) -> None:
        self.close()
        try:
            from torch.utils.tensorboard import SummaryWriter
        except ImportError as exc:
            raise ImportError(
                "TensorBoardLogger needs the tensorboard package: pip install "
                "'graphbook[tensorboard]'"
            ) from exc
        # purge_step=0: readers drop every event written before this one (a resumed run's
        # steps after its checkpoint, or an earlier run in the same folder).
        self._writer = SummaryWriter(str(self.folder), purge_step=0, flush_secs=self.flush_secs)
        for row in history:
            self.log_metrics(row.group, row.steps_completed, row.metrics)

    def log_hparams(self, hparams: Mapping[str, Any]) -> None:
        from torch.utils.tensorboard.summary import hparams as summaries

        if not hparams:
            return
        plain = {
            k: v if isinstance(v, int | float | str | bool) else str(v) for k, v in hparams.items()
        }
        for summary in summaries(plain, {}):  # type: ignore[no-untyped-call]
            self._writer.file_writer.add_summary(summary)

    def log_metrics(self, group: str, step: int, values: Mapping[str, Any]) -> None:
        for name, value in numbers(values).items():
            self._writer.add_scalar(f"{group}/{name}", value, step)

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None
