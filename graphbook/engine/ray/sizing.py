"""How many load (or dump) actors the Ray pool runs: grown while work waits for them, shrunk
when they idle, within limits the user sets (`--ray-actors MIN:MAX`, `--workers N` for
exactly N). A policy only: it sees numbers and a clock, never Ray (the pool does what it says).

The pool grows a kind's actors one at a time, when for `window` seconds its actors were busy
nearly all the time (`busy` of it) with more tasks than actors: more actors would get work.
It does not wait for the last one it added to start (seconds, or until an autoscaler adds a
node) while there are tasks for it and one more.
When the consumer is the slowest stage, the lane is full of outcomes already back, so the
actors idle between its takes, and the pool does not grow. An actor asked for and not yet
started (Ray found no room for its reservation: an autoscaler may add a node for it) never
holds work back; it is cancelled when the work no longer needs it. An actor idle for `idle`
seconds beyond the minimum ends.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

WINDOW = 1.0
"""Seconds of a kind's load looked at before a change: long enough to see whether its actors
or its consumer hold the work back, short next to an actor's start (seconds)."""
BUSY = 0.9
"""The share of the window its actors must have been saturated for another to be started."""
IDLE = 30.0
"""Seconds an actor beyond the minimum may idle before it ends."""


@dataclass(frozen=True)
class Limits:
    """The fewest and most actors of each kind; `most` None: the cluster's CPUs as Ray
    counts them at the time (nodes join and leave)."""

    least: int = 1
    most: int | None = None

    @classmethod
    def exactly(cls, count: int) -> Limits:
        return cls(count, count)

    def most_now(self, cpus: float) -> int:
        """The most actors of a kind now, on a cluster of `cpus` CPUs (at least the minimum)."""
        most = self.most if self.most is not None else int(cpus)
        return max(self.least, most, 1)

    def describe(self) -> str:
        if self.most == self.least:
            return f"{self.least}"
        return f"{self.least} to {'the CPUs' if self.most is None else self.most}"


GROWING = Limits()
"""The default: one actor of each kind to start with, up to the cluster's CPUs."""


def parse_limits(text: str) -> Limits | str:
    """`MIN:MAX`, `MIN:` (no maximum: the cluster's CPUs), `:MAX` (minimum 1) or `N` (exactly
    N); a problem that says what is wrong otherwise."""
    least_text, colon, most_text = text.partition(":")
    if not colon:
        least_text = most_text = text
    try:
        least = int(least_text) if least_text.strip() else 1
        most = int(most_text) if most_text.strip() else None
    except ValueError:
        return f"expected MIN:MAX actors (whole numbers, e.g. 1:8), got {text!r}"
    return limits_problem(least, most) or Limits(least, most)


def limits_problem(least: int, most: int | None) -> str | None:
    """Why `least` and `most` are no limits (None: they are)."""
    if least < 1:
        return f"the minimum of actors is 1 or more, got {least}"
    if most is not None and most < least:
        return f"the maximum of actors ({most}) is below the minimum ({least})"
    return None


@dataclass(frozen=True)
class Load:
    """A kind's load as the pool sees it at one moment."""

    ready: int
    """Actors that started and take tasks."""
    starting: int
    """Actors asked for and not started yet (pending, or importing what they preload)."""
    unfinished: int
    """Tasks of the kind not yet back: waiting on the driver or queued on actors."""
    idle: int
    """Ready actors with no task."""

    @property
    def saturated(self) -> bool:
        """Every ready actor has work and more waits: another actor would get some."""
        return self.ready > 0 and self.idle == 0 and self.unfinished > self.ready


@dataclass(frozen=True)
class Decision:
    grow: bool = False
    cancel: bool = False
    """Cancel the newest actor not started yet: the work does not need it."""
    end: int = 0
    """Idle actors to end, beyond the minimum."""


NOTHING = Decision()


class Sizer:
    """One kind's actor count over time: `observe` the load at each look, and do what it says.
    Its clock is the caller's (seconds); it keeps the saturated time since the last change."""

    def __init__(
        self, limits: Limits, window: float = WINDOW, busy: float = BUSY, idle: float = IDLE
    ) -> None:
        self.limits = limits
        self.window = window
        self.busy = busy
        self.idle = idle
        self._last: tuple[float, bool] | None = None
        self._seen = 0.0
        self._saturated = 0.0

    def observe(
        self, now: float, load: Load, cpus: float, idle_for: Sequence[float] = ()
    ) -> Decision:
        """What to do now: `cpus` is the cluster's CPUs now, `idle_for` how long each idle
        ready actor has been idle (seconds)."""
        self._account(now, load.saturated)
        most = self.limits.most_now(cpus)
        end = self._to_end(load, idle_for)
        if end:
            return self._changed(Decision(end=end))
        if self._seen < self.window:
            return NOTHING
        share = self._saturated / self._seen
        asked = load.ready + load.starting
        if share >= self.busy and asked < most and load.unfinished > asked:
            return self._changed(Decision(grow=True))  # work even for those still starting
        if share < self.busy and load.starting and load.ready + load.starting > self.limits.least:
            return self._changed(Decision(cancel=True))  # the minimum is never cancelled
        self._reset()
        return NOTHING

    def restart(self) -> None:
        """The actors changed (one started, died or ended): look at the load afresh."""
        self._reset()
        self._last = None

    def _account(self, now: float, saturated: bool) -> None:
        """The time since the last look counts as saturated only when it began and ended so:
        the driver may have been busy elsewhere (running the model) while the actors idled."""
        if self._last is not None:
            since, was = self._last
            elapsed = max(0.0, now - since)
            self._seen += elapsed
            self._saturated += elapsed if was and saturated else 0.0
        self._last = (now, saturated)

    def _to_end(self, load: Load, idle_for: Sequence[float]) -> int:
        spare = load.ready - self.limits.least
        long_idle = sum(1 for seconds in idle_for if seconds >= self.idle)
        return max(0, min(spare, long_idle, 1))

    def _changed(self, decision: Decision) -> Decision:
        self._reset()
        return decision

    def _reset(self) -> None:
        self._seen = self._saturated = 0.0


def summary(kind: str, first: int, peak: int, nodes: int, most: int) -> str:
    """One line of what the pool did with a kind's actors in a run."""
    count = f"{first} -> {peak}" if peak != first else f"{first}"
    where = f"{nodes} node{'s' * (nodes != 1)}"
    return f"{kind} actors: {count} on {where} (max {most})"


__all__ = [
    "BUSY",
    "GROWING",
    "IDLE",
    "WINDOW",
    "Decision",
    "Limits",
    "Load",
    "Sizer",
    "limits_problem",
    "parse_limits",
    "summary",
]
