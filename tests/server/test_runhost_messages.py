"""Every message between the server and its run host crosses the pipe whole: pickled and read
back it is equal to what was sent, of the same class (messages.py pickles them its own way)."""

from __future__ import annotations

import dataclasses
import inspect
import pickle
from pathlib import Path
from typing import Any

from graphbook import protocol as p
from graphbook.events import NodeProgress
from graphbook.server.gallery import GalleryQuery
from graphbook.server.runhost import messages as m
from graphbook.workflow import Workflow, WorkflowOutput

FLOW = Workflow()
FLOW.add("Split", "load")
PROGRESS = NodeProgress("run1", "load", 3, {"out": 3}, 1.5)
SAMPLES: list[m.Message] = [
    m.HostConfig(Path("nodes"), {"data": Path("data")}, 2, 1 << 20, frozenset({"a.json"}), "local"),
    m.RunOrder("run1", p.RunRequest("a.json", "step", "load", continue_on_error=True), FLOW),
    m.KeepResults(Path("data/apps/run1"), {"rows": WorkflowOutput("load")}, {"csv": ["f/a.csv"]}),
    m.RunOrder(
        "run1",
        p.RunRequest("a.json", inputs={"n": 3}, app=True),
        FLOW,
        keep=m.KeepResults(Path("r"), {"shown": WorkflowOutput("load", "out", "images")}, {}),
    ),
    m.Pause("run1"),
    m.Resume("run1"),
    m.Step("run1", None),
    m.Stop("run1"),
    m.Answer("ask", {"choice": [1, 2]}),
    m.Close(),
    m.CacheUsage(10, 2),
    m.OutputShown(4, {"value": 1}),
    m.ReadCacheUsage(),
    m.SetCacheBudget(5),
    m.RenameCached("a.json", "b.json"),
    m.ForgetCached("a.json"),
    m.ClearCached("a.json", None),
    m.ReadOutput("a.json", "load", "out", 0),
    m.ReadOutput("a.json", "load", "out", 0, brief=True),
    m.ReadGallery("a.json", "load", "out", GalleryQuery("x > 1", "x", "desc", 5, 10)),
    m.ReadPoolStats(),
    m.ReadImage("abc"),
    m.Call(7, m.ReadOutput("a.json", "load", "out", 2)),
    m.Ready(),
    m.Replied(7, m.CacheUsage(1, 1)),
    m.Refused(7, "KeyError: 'load'"),
    m.RunEvent("run1", PROGRESS, [PROGRESS, p.Error("store_failed", "locked")]),
    m.RunOutputs("run1", {"load": {"out": {"count": 9, "items": [{"x": 1}]}}}),
    m.RunCrashed("run1", "the run ended abnormally"),
    m.RunEnded("run1"),
    m.HostExited(-9),
]


def test_each_message_reads_back_as_sent() -> None:
    for message in SAMPLES:
        read = pickle.loads(pickle.dumps(message))
        assert type(read) is type(message)
        assert fields(read) == fields(message)


def fields(message: m.Message) -> dict[str, Any]:
    """Its fields by name, a workflow as its file's data (a Workflow has no equality)."""
    values = {f.name: getattr(message, f.name) for f in dataclasses.fields(message)}  # type: ignore[arg-type]
    return {k: v.to_json() if isinstance(v, Workflow) else v for k, v in values.items()}


def test_every_message_kind_has_a_sample() -> None:
    kinds = {
        cls
        for _, cls in inspect.getmembers(m, inspect.isclass)
        if cls.__module__ == m.__name__ and dataclasses.is_dataclass(cls)
    }
    missing = kinds - {type(s) for s in SAMPLES} - {m.Request}
    assert not missing, f"add a sample of {sorted(c.__name__ for c in missing)}"
