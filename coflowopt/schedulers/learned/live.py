"""DeepWeave's features along one run, at a cost per state that does not grow with the flows.

DeepWeave re-scores the ready coflows at every arrival and departure (``rerank="events"``;
Sun et al., IJCAI 2020, Sec. 3.3: the policy acts at each scheduling event).  Built from
scratch, every state's features summed every flow of the instance (the per-coflow remaining
volume and the remaining port loads behind the bottleneck feature), so a run cost events x
flows: on the 1x synthetic jobs trace (806 k flows) about 17 ms a state, and a trace ten
times larger would pay ten times that at ten times the events.

:class:`LiveFeatures` keeps those per-coflow sums (:class:`.features.CoflowTotals`) between
states and recomputes them only for the coflows that may have changed: the ones ready now or
at the previous state, and any whose done / ready status changed in between.  A coflow's
flows are served only while it is ready, so every other coflow's sums are still exact; each
sum is recomputed over the same flows in the same order as from scratch, so the features are
the same floats (``tests/schedulers/learned/test_live.py`` compares them state by state).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from coflowopt.model import Instance
from coflowopt.schedulers.learned.features import (
    CoflowTotals,
    DagBatch,
    DagState,
    as_state,
    coflow_totals,
    instance_batch,
    instance_features,
    job_batches,
    node_levels,
)

__all__ = ["LiveFeatures"]


class LiveFeatures:
    """The features of ``instance`` at successive states of one run (states in time order;
    any order stays exact, only slower).

    ``feature_set`` and ``gdm`` as :func:`.features.instance_batch`.  :meth:`state` turns a
    simulator view into a :class:`.features.DagState` without copying the flows' volumes;
    :meth:`totals` gives the per-coflow sums of a state, :meth:`instance_batch` and
    :meth:`job_batches` the batches."""

    def __init__(self, instance: Instance, feature_set: str = "v1",
                 gdm: np.ndarray | None = None) -> None:
        self.instance = instance
        self.feature_set = feature_set
        self.gdm = gdm
        e = instance.starts_after
        self.level = node_levels(instance.n_coflows, e[:, 0].astype(np.int64),
                                 e[:, 1].astype(np.int64))
        self._totals: CoflowTotals | None = None
        self._done = np.zeros(instance.n_coflows, dtype=bool)
        self._ready = np.zeros(instance.n_coflows, dtype=bool)
        self._dag: DagBatch | None = None  # the instance batch's DAG arrays (state-free)
        #: coflows whose sums the last call recomputed (all of them on the first)
        self.recomputed = 0

    @staticmethod
    def state(view: Any) -> DagState:
        """:meth:`.features.DagState.from_view` without the copy of the remaining volumes
        (read before the simulator moves on)."""
        return DagState.from_view(view, copy=False)

    def totals(self, state: DagState) -> CoflowTotals:
        """:func:`.features.coflow_totals` of ``state`` (the same floats), recomputed for the
        coflows that may have changed since the previous call.  ``state``: a
        :class:`.features.DagState` or the stepper's state."""
        inst = self.instance
        state = as_state(state)
        state.check(inst)
        done = np.asarray(state.done, dtype=bool)
        ready = np.asarray(state.ready, dtype=bool)
        # the ready coflows' port loads come out of the same pass (BSSI's input, feature 10
        # of set "v2"): every ready coflow is among those recomputed
        live = np.flatnonzero(ready & ~done)
        if self._totals is None:
            self._totals = coflow_totals(inst, state.remaining, loads_of=live)
            self.recomputed = inst.n_coflows
        else:
            moved = ready | self._ready | (done != self._done)
            cof = np.flatnonzero(moved)
            self.recomputed = int(cof.size)
            if cof.size:
                part = coflow_totals(inst, state.remaining, cof, loads_of=live)
                rem = self._totals.remaining.copy()
                bn = self._totals.bottleneck.copy()
                rem[cof] = part.remaining
                bn[cof] = part.bottleneck
                self._totals = CoflowTotals(rem, bn, part.loads)
            else:
                self._totals = self._totals._replace(loads=None)
        self._done, self._ready = done.copy(), ready.copy()
        return self._totals

    def instance_batch(self, state: DagState) -> DagBatch:
        """:func:`.features.instance_batch` at ``state`` (or the stepper's state); the DAG's
        arrays (levels, children) are built once per run, only the features per state."""
        state = as_state(state)
        x = instance_features(self.instance, state=state, feature_set=self.feature_set,
                              gdm=self.gdm, totals=self.totals(state), level=self.level)
        if self._dag is None:
            self._dag = instance_batch(self.instance, level=self.level)
        return dataclasses.replace(self._dag, x=x)

    def job_batches(self, state: DagState) -> list[DagBatch]:
        """:func:`.features.job_batches` at ``state`` (or the stepper's state)."""
        state = as_state(state)
        return job_batches(self.instance, state=state, feature_set=self.feature_set,
                           gdm=self.gdm, totals=self.totals(state), level=self.level)
