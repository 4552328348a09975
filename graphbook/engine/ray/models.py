"""Model resources on Ray actors: a model whose device is CUDA gets an actor with a GPU.

On the Ray backend a resource with a `device` parameter that asks for CUDA (`cuda`, `cuda:N`, or
`auto` on a cluster with GPUs) is built inside an actor that Ray gives a GPU, once. The nodes
that use it get a `RemoteModel` in its place: calling it sends the batch to the actor, runs the
model there (inference mode when the model is in eval mode), and returns the outputs on the CPU.
Node code stays as it is (`self.model(batch)`, `next(model.parameters()).device`, `.to(...)`).
Ray restarts an actor that dies (building the model again); the batch it was running fails on
its node, as a dead worker's item does.

A pool that keeps its actors across drivers (`graphbook run --ray ADDRESS`, detached.py) keeps
its model actors too: named in its namespace by a digest of the node, its spec (name and
code) and its parameters, detached, claimed and watching the same lease as its load and dump
actors. The next driver that builds the same resource with the same parameters attaches to it
warm (the model is not built again); changed parameters get a new one. A resource whose
parameters are not plain values (another resource's value) is not kept.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from typing import Any

import torch

from graphbook.engine.devices import prepare, trains
from graphbook.engine.pool import RemoteError
from graphbook.engine.ray.detached import LEASE, DetachedModels, attach, named, release, watch
from graphbook.engine.ray.ship import importable
from graphbook.engine.replicas import to_device
from graphbook.events import ErrorInfo

RESTARTS = 3
"""Times Ray rebuilds a model actor that died."""
RESTART_WAIT = 120.0
"""Seconds a call waits for a model actor that Ray is building again."""


class WorkerDied(Exception):
    """The actor running a model died during the call."""


def first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def wants_gpu(params: dict[str, Any], cluster_gpus: float) -> bool:
    """Whether a resource with these parameters asks Ray for a GPU."""
    device = str(params.get("device") or "auto")
    if device.startswith("cuda"):
        return True
    return device == "auto" and cluster_gpus > 0


def actor_params(params: dict[str, Any], gpu: bool) -> dict[str, Any]:
    """The parameters the actor builds with: Ray shows it only its own GPU, as `cuda`."""
    if not gpu or "device" not in params:
        return dict(params)
    return {**params, "device": "cuda"}


def model_kind(node: Any, params: dict[str, Any], gpu: bool) -> str | None:
    """The name prefix of the kept actors that build this resource: `model-DIGEST` of the node,
    its spec and its parameters; None when a parameter is not a plain value."""
    what = {
        "node": node.id,
        "spec": node.spec.name,
        "code": node.spec.code_hash,
        "params": params,
        "gpu": gpu,
    }
    try:
        text = json.dumps(what, sort_keys=True)
    except (TypeError, ValueError):
        return None
    return f"model-{hashlib.sha256(text.encode()).hexdigest()[:16]}"


class ModelActor:
    """Builds one resource (a node's spec and parameters) and runs the model it returns."""

    def __init__(
        self,
        spec: Any,
        params: dict[str, Any],
        node_id: str,
        cwd: str,
        shipped: tuple[str, ...],
        keep: str = "",
        lease: float = LEASE,
    ) -> None:
        if keep:  # kept across drivers: it ends itself when no driver renews the lease
            watch(keep, lease)
        importable(shipped)
        self.reset(cwd)
        self.value: Any = None
        self.error: ErrorInfo | None = None
        try:
            instance = spec.build(params)
            instance.id = node_id
            self.value = prepare(instance.value(), params, trains(instance, params))
        except Exception as exc:
            self.error = ErrorInfo.from_exception(exc)

    def reset(self, cwd: str = "") -> str:
        """Serve a new driver (one that attaches): its folder. Returns this actor's node id. A
        model in train mode refuses (its forward may have changed it: batch norm statistics),
        so the attaching driver ends it and builds the model anew, as a local run would."""
        import ray

        model = getattr(self, "value", None)
        if isinstance(model, torch.nn.Module) and model.training:
            raise RuntimeError("a model in train mode is not reused by another run")
        if cwd and os.path.isdir(cwd):
            os.chdir(cwd)
        return str(ray.get_runtime_context().get_node_id())

    def ready(self) -> tuple[ErrorInfo | None, bool]:
        """(why building failed, or None; whether the value is a torch module)."""
        return self.error, isinstance(self.value, torch.nn.Module)

    def get(self) -> Any:
        return self.value

    def forward(self, packed: Any) -> Any:
        """Run the model on packed (args, kwargs); the outputs come back packed, on the CPU
        (packing sends tensors without copying them: graphbook/engine/ray/transfer.py)."""
        from graphbook.engine.ray.transfer import pack, unpack

        args, kwargs = unpack(packed)
        model = self.value
        device = next((p.device for p in model.parameters()), torch.device("cpu"))
        args, kwargs = to_device((args, kwargs), device)
        with torch.inference_mode(not model.training):
            return pack(to_device(model(*args, **kwargs), torch.device("cpu")))


class RemoteModel(torch.nn.Module):
    """Stands in for a model that lives on a Ray actor: calls go to it, outputs come back on
    the CPU. It reports the CPU as its device, so inputs are built here and sent as they are."""

    def __init__(self, actor: Any, name: str, retries: int = 0) -> None:
        super().__init__()
        self._actor = actor
        self._name = name
        self._retries = retries
        self._lost = False
        self.anchor = torch.nn.Parameter(torch.empty(0), requires_grad=False)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """Run the model on its actor. If the actor dies meanwhile, the call fails (or runs
        again, `retries` times, once Ray has built the actor again)."""
        from graphbook.engine.ray.transfer import pack, unpack

        ray = sys.modules["ray"]
        attempt = 0
        while True:
            if self._lost:
                self._wait_until_rebuilt()
            try:
                return unpack(ray.get(self._actor.forward.remote(pack((args, kwargs)))))
            except ray.exceptions.RayActorError as exc:
                self._lost = True
                attempt += 1
                if attempt > self._retries:
                    raise WorkerDied(
                        f"the Ray actor running model {self._name!r} died while running this "
                        f"batch (Ray builds it again for the next one): {first_line(exc)}"
                    ) from exc

    def _wait_until_rebuilt(self) -> None:
        ray = sys.modules["ray"]
        deadline = time.monotonic() + RESTART_WAIT
        while True:
            try:
                ray.get(self._actor.ready.remote())
                self._lost = False
                return
            except ray.exceptions.ActorUnavailableError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
            except ray.exceptions.RayActorError as exc:
                raise WorkerDied(
                    f"the Ray actor running model {self._name!r} died and could not be built "
                    f"again: {first_line(exc)}"
                ) from exc

    def to(self, *args: Any, **kwargs: Any) -> RemoteModel:
        """The model stays on its actor's device."""
        return self

    def extra_repr(self) -> str:
        return f"on a Ray actor: {self._name}"


def place(
    node: Any,
    params: dict[str, Any],
    everything: bool = False,
    retries: int = 0,
    shipped: tuple[str, ...] = (),
    env: dict[str, Any] | None = None,
    detached: DetachedModels | None = None,
) -> Any:
    """Build `node`'s resource on an actor when it asks for a GPU (or always, with
    `everything`: models on actors even on the CPU); with `detached`, attach to the actor an
    earlier driver kept for it, else keep the new one. Returns a `RemoteModel` for a model,
    the value itself for anything else, or None when it should be built here."""
    ray: Any = sys.modules["ray"]  # the Ray pool that calls this has imported it

    if "device" not in params:
        return None
    gpu = wants_gpu(params, float(ray.cluster_resources().get("GPU", 0)))
    if not gpu and not everything:
        return None
    kind = model_kind(node, params, gpu) if detached is not None else None
    name, actor = _warm(ray, detached, kind) if kind else ("", None)
    if actor is None:
        name, actor = _start(ray, node, params, gpu, shipped, env, detached, kind)
    error, is_model = ray.get(actor.ready.remote())
    if error is not None or not is_model:
        value = ray.get(actor.get.remote()) if error is None else None
        _end(ray, actor, detached, name)
        if error is not None:
            raise RemoteError(error)
        return value
    return RemoteModel(actor, node.title, retries)


def _warm(ray: Any, detached: DetachedModels | None, kind: str) -> tuple[str, Any]:
    """The actor an earlier driver kept for this resource, claimed and set up for this one;
    ("", None) when there is none (or it is busy)."""
    if detached is None:
        return "", None
    cwd = os.getcwd()
    found = attach(ray, detached.namespace, kind, 1, lambda: (cwd,))
    if not found:
        return "", None
    detached.held[found[0].name] = found[0].handle
    detached.attached += 1
    return found[0].name, found[0].handle


def _start(
    ray: Any,
    node: Any,
    params: dict[str, Any],
    gpu: bool,
    shipped: tuple[str, ...],
    env: dict[str, Any] | None,
    detached: DetachedModels | None,
    kind: str | None,
) -> tuple[str, Any]:
    """A new actor that builds the resource: kept (named, detached, claimed) with `kind`."""
    options: dict[str, Any] = {"num_gpus": 1 if gpu else 0, "num_cpus": 0}
    options.update(max_restarts=RESTARTS, runtime_env=env)
    remote = ray.remote(**options)(ModelActor)
    if detached is None or kind is None:
        args = (node.spec, actor_params(params, gpu), node.id, os.getcwd(), shipped)
        return "", remote.remote(*args)
    names = named(kind, detached.namespace)
    args = (node.spec, actor_params(params, gpu), node.id, os.getcwd(), shipped)
    actor = remote.options(**names).remote(*args, detached.namespace, detached.lease)
    detached.held[names["name"]] = actor
    return names["name"], actor


def _end(ray: Any, actor: Any, detached: DetachedModels | None, name: str) -> None:
    """Kill an actor whose resource failed or is no model (and forget it, when kept)."""
    ray.kill(actor, no_restart=True)
    if detached is not None and name:
        detached.held.pop(name, None)
        release(detached.namespace, [name])
