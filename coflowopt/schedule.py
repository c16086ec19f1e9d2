"""The one output type of every algorithm: piecewise-constant flow rates.

A :class:`Schedule` has breakpoints ``t[0] <= t[1] <= ... <= t[K]`` and, for each interval
``[t[k], t[k+1])``, the rates of the flows active in it.  It is stored sparse as *segments*:
flow ``flow[i]`` runs at ``rate[i]`` over intervals ``first[i] .. last[i]-1``.  A per-interval
listing (the JSON interchange form) is the case ``last = first + 1``; an event-driven simulator
opens and closes segments only for flows whose rate changes, so a long run stays small.
A slotted (matching-based) schedule is one matching per interval: :meth:`Schedule.from_slots`.

Rates are volume per time unit of the instance.  A schedule says nothing about feasibility:
:func:`coflowopt.validate` checks it against an instance.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from coflowopt.model import frozen_array

__all__ = ["Schedule", "ScheduleError"]


class ScheduleError(ValueError):
    """Malformed schedule data (not an infeasibility: see :mod:`coflowopt.validate`)."""


@dataclass(frozen=True, eq=False)
class Schedule:
    """Piecewise-constant flow rates over breakpoints, stored as segments.

    ``breakpoints``: ``(K+1,)`` non-decreasing times.  Segment ``i``: flow ``flow[i]`` at rate
    ``rate[i]`` during ``[t[first[i]], t[last[i]])``.  ``meta`` holds free-form provenance
    (algorithm name, parameters); it is not part of equality.
    """

    breakpoints: np.ndarray
    flow: np.ndarray
    rate: np.ndarray
    first: np.ndarray
    last: np.ndarray
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        t = np.asarray(self.breakpoints, dtype=np.float64)
        flow = np.asarray(self.flow, dtype=np.int64)
        rate = np.asarray(self.rate, dtype=np.float64)
        first = np.asarray(self.first, dtype=np.int64)
        last = np.asarray(self.last, dtype=np.int64)
        if t.ndim != 1 or t.size == 0:
            raise ScheduleError("breakpoints: need a non-empty 1-d array")
        if not np.all(np.isfinite(t)):
            k = int(np.flatnonzero(~np.isfinite(t))[0])
            raise ScheduleError(f"breakpoints[{k}]: not finite ({t[k]})")
        if not (flow.ndim == 1 and flow.shape == rate.shape == first.shape == last.shape):
            raise ScheduleError("flow/rate/first/last: need 1-d arrays of one length")
        K = t.size - 1
        bad = np.flatnonzero((first < 0) | (last > K) | (last <= first))
        if bad.size:
            i = int(bad[0])
            raise ScheduleError(f"segment {i} (flow {flow[i]}): intervals {first[i]}..{last[i]} "
                                f"not a non-empty range within 0..{K}")
        for name, a in (("breakpoints", t), ("flow", flow), ("rate", rate), ("first", first),
                        ("last", last)):
            object.__setattr__(self, name, frozen_array(a))

    # -- construction -----------------------------------------------------------------------

    @classmethod
    def empty(cls, t0: float = 0.0) -> Schedule:
        """No interval, no rate (feasible only for an instance with nothing to send)."""
        z = np.zeros(0, dtype=np.int64)
        return cls(np.array([t0], dtype=np.float64), z, np.zeros(0), z, z)

    @classmethod
    def from_segments(
        cls,
        breakpoints: Sequence[float] | np.ndarray,
        flow: Any,
        rate: Any,
        first: Any,
        last: Any,
        *,
        meta: dict[str, Any] | None = None,
    ) -> Schedule:
        """From segment columns (see the class docstring)."""
        return cls(np.asarray(breakpoints, dtype=np.float64), np.asarray(flow), np.asarray(rate),
                   np.asarray(first), np.asarray(last), dict(meta or {}))

    @classmethod
    def from_intervals(
        cls,
        breakpoints: Sequence[float] | np.ndarray,
        intervals: Iterable[tuple[Sequence[int] | np.ndarray, Sequence[float] | np.ndarray]
                            | Mapping[int, float]],
        *,
        drop_zero: bool = True,
        meta: dict[str, Any] | None = None,
    ) -> Schedule:
        """From breakpoints and, per interval, ``(flows, rates)`` or ``{flow: rate}``.

        Zero rates are dropped (``drop_zero``) so that "active" means "rate > 0".  A flow
        listed with the same rate in consecutive intervals becomes one segment.
        """
        flows: list[np.ndarray] = []
        rates: list[np.ndarray] = []
        for k, iv in enumerate(intervals):
            if isinstance(iv, Mapping):
                f = np.fromiter(iv.keys(), dtype=np.int64, count=len(iv))
                r = np.fromiter(iv.values(), dtype=np.float64, count=len(iv))
            else:
                f = np.asarray(iv[0], dtype=np.int64).ravel()
                r = np.asarray(iv[1], dtype=np.float64).ravel()
                if f.shape != r.shape:
                    raise ScheduleError(f"interval {k}: {f.size} flows but {r.size} rates")
            if drop_zero:
                keep = r != 0
                f, r = f[keep], r[keep]
            flows.append(f)
            rates.append(r)
        t = np.asarray(breakpoints, dtype=np.float64)
        if len(flows) != t.size - 1:
            raise ScheduleError(f"{len(flows)} intervals for {t.size} breakpoints "
                                f"(need {t.size - 1})")
        counts = np.array([f.size for f in flows], dtype=np.int64)
        flow = np.concatenate(flows) if flows else np.zeros(0, np.int64)
        rate = np.concatenate(rates) if rates else np.zeros(0)
        k = np.repeat(np.arange(len(flows), dtype=np.int64), counts)
        return cls._merged(t, flow, rate, k, k + 1, meta)

    @classmethod
    def _merged(cls, t: np.ndarray, flow: np.ndarray, rate: np.ndarray, first: np.ndarray,
                last: np.ndarray, meta: dict[str, Any] | None) -> Schedule:
        """Join segments of one flow that touch and share a rate."""
        if flow.size > 1:
            order = np.lexsort((first, flow))
            flow, rate, first, last = flow[order], rate[order], first[order], last[order]
            cont = (flow[1:] == flow[:-1]) & (rate[1:] == rate[:-1]) & (first[1:] == last[:-1])
            if cont.any():
                head = np.r_[True, ~cont]
                gid = np.cumsum(head) - 1
                end = np.zeros(int(gid[-1]) + 1, dtype=np.int64)
                np.maximum.at(end, gid, last)
                flow, rate, first, last = flow[head], rate[head], first[head], end
        return cls(t, flow, rate, first, last, dict(meta or {}))

    @classmethod
    def from_slots(
        cls,
        slots: Iterable[tuple[Sequence[int] | Mapping[int, float], float]],
        *,
        t0: float = 0.0,
        rate: float = 1.0,
        meta: dict[str, Any] | None = None,
    ) -> Schedule:
        """From consecutive ``(matching, duration)`` slots starting at ``t0``.

        A matching is a sequence of flow positions, each served at ``rate`` (the port capacity;
        1 on a normalized fabric), or a ``{flow: rate}`` mapping.  Zero-duration slots are
        skipped.
        """
        t = [float(t0)]
        intervals: list[Any] = []
        for k, (matching, duration) in enumerate(slots):
            if not np.isfinite(duration) or duration < 0:
                raise ScheduleError(f"slot {k}: duration must be finite and >= 0, got {duration}")
            if duration == 0:
                continue
            t.append(t[-1] + float(duration))
            if isinstance(matching, Mapping):
                intervals.append(matching)
            else:
                f = np.asarray(matching, dtype=np.int64)
                intervals.append((f, np.full(f.size, float(rate))))
        return cls.from_intervals(t, intervals, meta=meta)

    # -- views ------------------------------------------------------------------------------

    @property
    def n_intervals(self) -> int:
        return int(self.breakpoints.size - 1)

    @property
    def n_segments(self) -> int:
        return int(self.flow.size)

    @property
    def start(self) -> float:
        return float(self.breakpoints[0])

    @property
    def end(self) -> float:
        return float(self.breakpoints[-1])

    @property
    def segment_start(self) -> np.ndarray:
        return self.breakpoints[self.first]

    @property
    def segment_end(self) -> np.ndarray:
        return self.breakpoints[self.last]

    def served(self, n_flows: int) -> np.ndarray:
        """Volume served to each flow: the sum of ``rate x duration`` over its segments."""
        amount = self.rate * (self.segment_end - self.segment_start)
        return np.bincount(self.flow, weights=amount, minlength=n_flows)

    def per_interval(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The per-interval listing ``(ptr, flow, rate)`` in CSR form: interval ``k`` carries
        ``flow[ptr[k]:ptr[k+1]]`` at ``rate[ptr[k]:ptr[k+1]]``."""
        lens = self.last - self.first
        total = int(lens.sum())
        seg = np.repeat(np.arange(self.n_segments), lens)
        k = self.first[seg] + (np.arange(total) - np.repeat(np.cumsum(lens) - lens, lens))
        order = np.lexsort((self.flow[seg], k))
        k, seg = k[order], seg[order]
        ptr = np.zeros(self.n_intervals + 1, dtype=np.int64)
        np.cumsum(np.bincount(k, minlength=self.n_intervals), out=ptr[1:])
        return ptr, self.flow[seg], self.rate[seg]

    def interval(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        """``(flows, rates)`` active in interval ``k``, by flow position."""
        sel = np.flatnonzero((self.first <= k) & (self.last > k))
        order = np.argsort(self.flow[sel], kind="stable")
        return self.flow[sel][order], self.rate[sel][order]

    def __eq__(self, other: object) -> bool:
        """Same breakpoints and the same rate for every flow in every interval, however the
        segments are cut."""
        if not isinstance(other, Schedule):
            return NotImplemented
        if not np.array_equal(self.breakpoints, other.breakpoints):
            return False
        return all(np.array_equal(a, b)
                   for a, b in zip(self.per_interval(), other.per_interval(), strict=True))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (f"Schedule(intervals={self.n_intervals}, segments={self.n_segments}, "
                f"span=[{self.start:g}, {self.end:g}])")

    def shifted(self, dt: float) -> Schedule:
        """The same rates, ``dt`` time units later."""
        return Schedule(self.breakpoints + dt, self.flow, self.rate, self.first, self.last,
                        dict(self.meta))
