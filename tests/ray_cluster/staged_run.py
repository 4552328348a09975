"""One run of a batch step in a driver process of its own, which prints what the cluster tests
check as a JSON line: the dicts, whether it went through, the bytes the driver read back per
item, and the driver's process id. Its step decodes a 602 KB tensor per item (as an image is),
sets fields on the dicts (where on_item_batch ran among them) and returns dump arguments; dumps
write a file per item.

    python staged_run.py ADDRESS|local STAGES N OUT [PAUSE]
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import torch

from graphbook import Workflow, batch, param, run_workflow, source, step


@step("Staged/Count")
@source()
@param("n", "int", default=8)
def count(ctx: Any) -> Any:
    for i in range(ctx.n):
        yield {"items": [i]}


def decode(i: int) -> torch.Tensor:
    return torch.full((3, 224, 224), float(i))


def write(folder: str, i: int, total: float) -> None:
    os.makedirs(folder, exist_ok=True)
    Path(folder, f"{i}.txt").write_text(repr(total))


@step("Staged/Score")
@batch(4, "items", load_fn=decode, dump_fn=write)
@param("out", "string", default="out")
@param("pause", "float", default=0.0)
def score(ctx: Any, outputs: list[Any], items: list[Any], data: list[Any]) -> list[Any]:
    ray = sys.modules.get("ray")
    node = ray.get_runtime_context().get_node_id() if ray and ray.is_initialized() else "here"
    time.sleep(ctx.pause)
    for d, x in zip(data, outputs, strict=True):
        d["mean"] = float(x.mean())
        d["node"], d["pid"] = node, os.getpid()
    return [(ctx.out, i, float(x.sum())) for i, x in zip(items, outputs, strict=True)]


def main(address: str, stages: str, n: int, out: str, pause: float) -> None:
    wf = Workflow()
    wf.connect(wf.add(count, n=n), wf.add(score, id="score", out=out, pause=pause))
    received = 0
    if address == "local":
        result = run_workflow(wf, workers=0, collect=True)
    else:
        from graphbook.engine.ray.pool import RayPool

        with RayPool(address, workers=2, stages=stages) as pool:
            result = run_workflow(wf, pool=pool, collect=True)
            received = pool.timings.received
    report = {
        "ok": result.ok,
        "errors": [str(e.error) for e in result.errors],
        "dicts": result.output("score"),
        "received_per_item": received / n,
        "driver": os.getpid(),
    }
    print(json.dumps(report))


if __name__ == "__main__":
    pause = float(sys.argv[5]) if len(sys.argv) > 5 else 0.0
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], pause)
