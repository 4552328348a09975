"""The Trainer API in one process: periods and schedules, checkpoint policies, callbacks,
reducers, loading, prediction, and a clear error for every bad input."""

from __future__ import annotations

import importlib.util
import re
import warnings
from pathlib import Path
from typing import Any

import pytest
import torch

import graphbook.det as det
import graphbook.det.pytorch  # noqa: F401 (as the seed imports it)
import graphbook.trainer as gt
from graphbook.batch_process import client
from graphbook.store import Store
from graphbook.trainer import TrainerError

from .trials import Line, LineTrial, loaders


def train(trial_cls: type[Any] = LineTrial, name: str = "t", **options: Any) -> tuple[Any, Any]:
    context = det.pytorch.init(hparams={"lr": 0.1}, seed=1, run_name=name)
    trial = context.build_trial(trial_cls)
    defaults: dict[str, Any] = {"max_length": det.Epochs(2), "progress": False}
    data = options.pop("data", loaders())
    return trial, context.train(trial, *data, **{**defaults, **options})


def test_periods_and_schedules_fire_when_due_and_once_more_at_the_end(home: Path) -> None:
    trial, result = train(
        min_validation_period=det.Batches([2, 5]),
        min_checkpoint_period=det.Epochs(1),
        max_length=det.Batches(7),
        reporting_period=det.Batches(4),
        checkpoint_policy="all",
    )
    store = Store()
    validations = [m.steps_completed for m in store.metrics([result.run_id], "validation")]
    assert validations == [2, 5, 7]  # the schedule, then the stale end
    # every epoch, and (policy "all") after every validation
    assert [c.steps_completed for c in store.checkpoints(result.run_id)] == [2, 3, 5, 6, 7]
    assert trial.events("checkpoint") == ["2", "3", "5", "6", "7"]
    training = [m.steps_completed for m in store.metrics([result.run_id], "training")]
    assert training == [2, 3, 4, 5, 6, 7]  # every 4, and at each validation / checkpoint
    assert trial.events("epoch_start") == [0, 1, 2] and trial.events("epoch_end") == [0, 1]
    assert result.batches == 7 and result.checkpoint == f"{result.run_id}-step-7"
    assert result["loss"] == result.validation["loss"]


def test_epoch_periods_match_the_seed(home: Path) -> None:
    trial, result = train(min_validation_period=det.Epochs(1), min_checkpoint_period=det.Epochs(1))
    assert trial.events("validated") == [None, None]
    assert result.validation["count"] == 4.0  # AVG over batches of 4


def test_checkpoint_policies(home: Path) -> None:
    every: dict[str, Any] = {
        "min_checkpoint_period": det.Batches(1),
        "min_validation_period": det.Batches(1),
        "max_length": det.Batches(6),
    }
    _, best = train(name="best", **every)
    kept = [c.uuid for c in Store().checkpoints(best.run_id)]
    assert best.best_checkpoint in kept and best.checkpoint in kept and len(kept) <= 2
    _, last = train(name="last", checkpoint_policy="all", keep_last=2, **every)
    assert [c.steps_completed for c in Store().checkpoints(last.run_id)][-2:] == [5, 6]
    assert len(Store().checkpoints(last.run_id)) <= 3  # the last two, and the best
    _, none = train(name="none", checkpoint_policy="none", **every)
    assert Store().checkpoints(none.run_id) == []
    _, everything = train(name="all", checkpoint_policy="all", **every)
    assert len(Store().checkpoints(everything.run_id)) == 6


class SumTrial(LineTrial):
    def __init__(self, context: Any) -> None:
        super().__init__(context)
        self.sizes = context.wrap_reducer(
            lambda values: sum(values), name="items", for_training=False
        )

    def evaluate_batch(self, batch: Any) -> dict[str, Any]:
        self.sizes.update(len(batch[0]))
        return {"count": len(batch[0])}

    def evaluation_reducer(self) -> Any:
        return det.pytorch.Reducer.SUM


def test_evaluation_reducer_and_wrapped_reducers(home: Path) -> None:
    _, result = train(SumTrial, data=loaders(batch_size=5))
    assert result.validation == {"count": 12.0, "items": 12}


class Items(det.pytorch.MetricReducer):
    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.items = 0

    def update(self, count: int) -> None:
        self.items += count

    def per_slot_reduce(self) -> int:
        return self.items

    def cross_slot_reduce(self, per_slot_metrics: list[int]) -> dict[str, int]:
        return {"items": sum(per_slot_metrics)}


class CountingTrial(LineTrial):
    """One reducer counts training items, another validation items; each trial step also
    updates the validation one, which must not leak into a validation."""

    def __init__(self, context: Any) -> None:
        super().__init__(context)
        self.trained = context.wrap_reducer(Items(), for_validation=False)
        self.checked = context.wrap_reducer(Items(), name="checked", for_training=False)

    def train_batch(self, batch: Any, epoch_idx: int, batch_idx: int) -> Any:
        self.trained.update(len(batch[0]))
        self.checked.update(1000)
        return super().train_batch(batch, epoch_idx, batch_idx)

    def evaluate_batch(self, batch: Any) -> dict[str, Any]:
        self.checked.update(len(batch[0]))
        return super().evaluate_batch(batch)


def test_a_metric_reducer_counts_each_reporting_period_and_each_validation(home: Path) -> None:
    _, result = train(
        CountingTrial,
        max_length=det.Batches(6),
        reporting_period=det.Batches(2),
        min_validation_period=det.Batches(3),
    )
    rows = Store().metrics([result.run_id])
    training = [(r.steps_completed, r.metrics["items"]) for r in rows if r.group == "training"]
    assert training == [(2, 8), (3, 4), (4, 4), (6, 8)]  # batches of 4, reset after each report
    checked = [r.metrics["checked"] for r in rows if r.group == "validation"]
    assert checked == [{"items": 12}, {"items": 12}]  # the 12 validation points, nothing else


class FullTrial(LineTrial):
    evaluate_batch = None  # type: ignore[assignment]

    def evaluate_full_dataset(self, data_loader: Any) -> dict[str, Any]:
        return {"items": sum(len(x) for x, _ in data_loader)}


def test_evaluate_full_dataset(home: Path) -> None:
    _, result = train(FullTrial)
    assert result.validation == {"items": 12}


def test_set_stop_requested_ends_training_with_a_checkpoint(home: Path) -> None:
    class Stopping(LineTrial):
        def train_batch(self, batch: Any, epoch_idx: int, batch_idx: int) -> Any:
            self.context.set_stop_requested(batch_idx == 3)
            return super().train_batch(batch, epoch_idx, batch_idx)

    _, result = train(Stopping, max_length=det.Epochs(5))
    assert result.stopped and result.batches == 4
    assert Store().get_run(result.run_id).status == "completed"
    assert [c.steps_completed for c in Store().checkpoints(result.run_id)] == [4]


class EveryHook(det.pytorch.PyTorchCallback):
    """Records every hook Determined's PyTorchCallback has, and counts them in its state."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []
        self.count = 0

    def record(self, *call: Any) -> None:
        self.calls.append(call)
        self.count += 1

    def on_trial_startup(self, first_batch_idx: int, checkpoint_uuid: str | None) -> None:
        self.record("startup", first_batch_idx, checkpoint_uuid)

    def on_trial_shutdown(self) -> None:
        self.record("shutdown")

    def on_training_start(self) -> None:
        self.record("training_start")

    def on_training_epoch_start(self, epoch_idx: int) -> None:
        self.record("epoch_start", epoch_idx)

    def on_training_epoch_end(self, epoch_idx: int) -> None:
        self.record("epoch_end", epoch_idx)

    def on_training_workload_end(self, avg: dict[str, Any], batches: list[Any]) -> None:
        self.record("workload_end", sorted(avg), len(batches))

    def on_validation_start(self) -> None:
        self.record("validation_start")

    def on_validation_epoch_start(self) -> None:
        self.record("validation_epoch_start")

    def on_validation_epoch_end(self, outputs: list[Any]) -> None:
        self.record("validation_epoch_end", len(outputs))

    def on_validation_end(self, metrics: dict[str, Any]) -> None:
        self.record("validation_end", sorted(metrics))

    def on_checkpoint_load_start(self, checkpoint: dict[str, Any]) -> None:
        self.record("load_start", checkpoint["loop"]["batches"])

    def on_checkpoint_save_start(self, checkpoint: dict[str, Any]) -> None:
        self.record("save_start", checkpoint["loop"]["batches"])

    def on_checkpoint_write_end(self, checkpoint_dir: str) -> None:
        self.record("write_end", Path(checkpoint_dir).name)

    def on_checkpoint_end(self, checkpoint_dir: str) -> None:
        self.record("checkpoint_end", Path(checkpoint_dir).name)

    def on_checkpoint_upload_end(self, uuid: str) -> None:
        self.record("upload_end", uuid)

    def state_dict(self) -> dict[str, Any]:
        return {"count": self.count}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.count = state_dict["count"]


class Hooked(LineTrial):
    crash_at: int | None = None

    def __init__(self, context: Any) -> None:
        super().__init__(context)
        self.hooks = EveryHook()

    def train_batch(self, batch: Any, epoch_idx: int, batch_idx: int) -> Any:
        if batch_idx == self.crash_at:
            raise RuntimeError("stopping here")
        return super().train_batch(batch, epoch_idx, batch_idx)

    def build_callbacks(self) -> dict[str, det.pytorch.PyTorchCallback]:
        return {"hooks": self.hooks}


def test_every_callback_hook_in_order_and_its_state_resumes(home: Path) -> None:
    options: dict[str, Any] = {
        "max_length": det.Batches(4),
        "min_validation_period": det.Batches(2),
        "min_checkpoint_period": det.Batches(2),
        "reporting_period": det.Batches(2),
        "checkpoint_policy": "all",
    }
    Hooked.crash_at = 2
    with pytest.raises(RuntimeError, match="stopping here"):
        train(Hooked, name="hooks", **options)
    Hooked.crash_at = None
    trial, result = train(Hooked, name="hooks", **options)
    step = f"{result.run_id}-step-"
    validation = [
        ("validation_start",),
        ("validation_epoch_start",),
        ("validation_epoch_end", 3),  # batches of 4 over 12 points
        ("validation_end", ["count", "loss"]),
    ]
    checkpoint = [
        ("save_start", 4),
        ("write_end", step + "4"),
        ("checkpoint_end", step + "4"),
        ("upload_end", step + "4"),
    ]
    assert trial.hooks.calls == [
        ("load_start", 2),
        ("startup", 2, step + "2"),
        ("training_start",),
        ("epoch_end", 0),  # after batch 3: an epoch has 3
        ("epoch_start", 1),
        ("workload_end", ["batches", "loss"], 2),  # batches 3 and 4
        *validation,
        *checkpoint,
        ("shutdown",),
    ]
    # The first attempt's state went into its checkpoint at save_start, after 8 hooks
    # (startup, training_start, epoch_start, workload_end, 4 of validation); it came back
    # after load_start, and the 14 hooks since were counted on top of it.
    assert trial.hooks.count == 8 + len(trial.hooks.calls) - 1
    assert trial.context.get_initial_batch() == 2  # Determined's name for where it resumed


def test_lr_scheduler_step_modes(home: Path) -> None:
    class Scheduled(LineTrial):
        def __init__(self, context: Any) -> None:
            super().__init__(context)
            mode = det.pytorch.LRScheduler.StepMode
            self.per_epoch = context.wrap_lr_scheduler(
                torch.optim.lr_scheduler.StepLR(self.opt, 1, gamma=0.5), mode.STEP_EVERY_EPOCH
            )

    trial, _ = train(Scheduled, max_length=det.Epochs(3))
    assert trial.opt.param_groups[0]["lr"] == pytest.approx(0.1 * 0.5**3)


def test_load_checkpoint_trial_every_way_and_predict_in_order(home: Path) -> None:
    _, result = train(name="line")
    checkpoint = result.checkpoint
    client.create_model("line").register_version(checkpoint)
    folder = Store().get_checkpoint(checkpoint).path
    ways: list[dict[str, Any]] = [
        {"run": "line"},
        {"run": result.run_id},
        {"trial_id": result.run_id},
        {"checkpoint": checkpoint},
        {"path": folder},
        {"model": "line"},
        {"model": "line", "version": 1},
    ]
    trials = [gt.load_checkpoint_trial(LineTrial, **way) for way in ways]
    assert len({t.model.weight.item() for t in trials}) == 1
    assert {t.context.checkpoint_uuid for t in trials} == {checkpoint}
    trial = gt.load_checkpoint_trial(LineTrial, run="line")
    assert trial.context.hparams["lr"] == 0.1
    data = Line(10)
    predictions = gt.predict(trial, det.pytorch.DataLoader(data, batch_size=3))
    with torch.no_grad():
        assert torch.equal(predictions, trial.model(data.x))  # all ten, in input order
    run = Store().latest_run("batch", f"predict:{LineTrial.__module__}.LineTrial:{checkpoint}")
    assert run is not None and run.counts["items_completed"] == 10


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"min_validation_period": 2}, "min_validation_period must be det.Epochs(n)"),
        ({"min_checkpoint_period": "x"}, "min_checkpoint_period must be"),
        ({"max_length": det.Batches([3, 4])}, "max_length must be det.Epochs(n)"),
        ({"max_length": None}, "train() needs max_length"),
        ({"checkpoint_policy": "some"}, "checkpoint_policy must be one of best, all, none"),
        (
            {"validation_period": det.Batches(1), "min_validation_period": det.Batches(1)},
            "not both",
        ),
        ({"keep_last": 0}, "keep_last must be a positive whole number"),
        (
            {"min_validaton_period": det.Batches(1)},
            "train() got unexpected argument(s) min_validaton_period",
        ),
        (
            {"searcher_metric": "auc", "min_validation_period": det.Batches(1)},
            "searcher_metric 'auc' is not among the validation metrics (count, loss)",
        ),
    ],
)
def test_bad_arguments_say_what_to_fix(home: Path, options: dict[str, Any], message: str) -> None:
    with pytest.raises(TrainerError, match=re.escape(message)):
        train(**options)


@pytest.mark.parametrize("value", [0, -1, 1.5, True, [], [2, 0]])
def test_bad_periods(value: Any) -> None:
    with pytest.raises(TrainerError, match="Batch"):
        det.Batches(value)


def test_bad_trials_say_what_to_fix(home: Path) -> None:
    class NoOptimizer(LineTrial):
        def __init__(self, context: Any) -> None:
            super().__init__(context, wrap_optimizer=False)

    class Both(LineTrial):
        def evaluate_full_dataset(self, data_loader: Any) -> Any:
            return {}

    class Neither(det.pytorch.PyTorchTrial):
        def train_batch(self, batch: Any, epoch_idx: int, batch_idx: int) -> Any:
            return {}

    with pytest.raises(TrainerError, match=r"wrapped no optimizer: call context\.wrap_optimizer"):
        train(NoOptimizer)
    with pytest.raises(TrainerError, match="defines both of evaluate_batch and evaluate_full"):
        train(Both)
    with pytest.raises(TrainerError, match="defines neither of evaluate_batch"):
        train(Neither)
    context = det.pytorch.init()
    with pytest.raises(TrainerError, match="expects a PyTorchTrial subclass"):
        context.build_trial(Line)  # type: ignore[type-var]
    with pytest.raises(KeyError, match="hyperparameter 'lr' is not set"):
        context.hparams["lr"]
    with pytest.raises(TrainerError, match="sampler and batch_sampler are not supported"):
        det.pytorch.DataLoader(Line(), sampler=[1, 2])


def test_resume_with_other_hparams_is_refused(home: Path) -> None:
    class Crash(LineTrial):
        def train_batch(self, batch: Any, epoch_idx: int, batch_idx: int) -> Any:
            if batch_idx == 4:
                raise RuntimeError("boom")
            return super().train_batch(batch, epoch_idx, batch_idx)

    with pytest.raises(RuntimeError, match="boom"):
        train(Crash, name="crashy", min_checkpoint_period=det.Batches(2))
    (run,) = Store().list_runs("train")
    assert run.status == "failed" and "boom" in (run.error or "")
    context = det.pytorch.init(hparams={"lr": 0.5}, run_name="crashy")
    trial = context.build_trial(LineTrial)
    with pytest.raises(gt.TrainingResumeError, match=r"hparams was .* now .*start_over=True"):
        context.train(trial, *loaders(), max_length=det.Epochs(1), progress=False)
    _, result = train(name="crashy")  # the same hparams resume it
    assert result.run_id == run.id and Store().get_run(run.id).status == "completed"


def test_amp_on_cpu_warns_and_tensorboard_says_what_it_needs(home: Path) -> None:
    context = det.pytorch.init()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        context.experimental.use_amp()
    assert "needs a CUDA GPU" in str(caught[0].message)
    if importlib.util.find_spec("tensorboard") is None:
        with pytest.raises(TrainerError, match="pip install tensorboard"):
            context.get_tensorboard_writer()
    else:
        assert context.get_tensorboard_writer() is not None


def test_determined_shipped_spelling(home: Path) -> None:
    class Built(LineTrial):
        def build_training_data_loader(self) -> Any:
            return loaders()[0]

        def build_validation_data_loader(self) -> Any:
            return loaders()[1]

    searcher = {"name": "single", "metric": "loss"}
    with det.pytorch.init(hparams={"lr": 0.1}, exp_conf={"searcher": searcher}) as context:
        assert context.get_experiment_config() == {
            "hyperparameters": {"lr": 0.1},
            "data": {},
            "searcher": searcher,
        }
        context.set_enable_tensorboard_logging(False)
        assert not context.get_enable_tensorboard_logging()
        trial = Built(context)
        result = det.pytorch.Trainer(trial, context).fit(
            max_length=det.pytorch.Epoch(1),
            validation_period=det.pytorch.Batch(1),
            checkpoint_period=det.pytorch.Batch(2),
            progress=False,
        )
    assert result.batches == 3 and len(trial.events("validated")) == 3


def test_loggers_given_to_init_get_every_stored_row(home: Path, tmp_path: Path) -> None:
    import csv

    from graphbook.loggers import CSVLogger

    context = det.pytorch.init(seed=1, run_name="logged", loggers=[CSVLogger(tmp_path / "csv")])
    trial = context.build_trial(LineTrial)
    result = context.train(trial, *loaders(), max_length=det.Epochs(2), progress=False)
    stored = Store().metrics([result.run_id], "validation")
    with (tmp_path / "csv" / "validation.csv").open(newline="") as handle:
        written = list(csv.DictReader(handle))
    assert [int(row["step"]) for row in written] == [m.steps_completed for m in stored]
    assert [float(row["loss"]) for row in written] == [m.metrics["loss"] for m in stored]
