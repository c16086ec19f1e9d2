"""DMA, Delay-and-Merge for the makespan of several general-DAG jobs (Shafiee-Ghaderi,
Algorithm 2, Section IV; spec dag-coflows section 4).

1. Isolated schedules [S]: each job's coflows in a topological order (spec 1.3, Kahn taking the
   smallest coflow position among the ready ones [P]), one after another, each by BNA in its
   ``eff(D^(cj))`` slots; length ``H_j = sum_c eff(D^(cj))``.
2. Random delays [S]: ``X_j`` uniform on ``[0, Delta / beta]`` (``Delta = eff(sum_j A^j)``
   over the jobs of the call, Definition 2), discretised [P] to the integers
   ``{0, .., floor(Delta / beta)}`` and drawn in job-position order.
3. Merge [S]: the count matrix ``M(t)`` of the real pairs (dummy pairs of the augmentation do
   not count [P], spec 4.5) of the delayed schedules.
4. Resolve collisions [S]: each slot becomes ``BNA(M(t))`` (``eff(M(t))`` slots; a pair used by
   several jobs serves them in the jobs' priority order [P]: increasing job position, or the
   ``order`` given, e.g. G-DM's sigma).  Polynomial form [P] (spec 4.4): the merged schedule
   is cut into *runs* of constant membership (boundaries at every start and end of a piece of
   any job) and a run of ``len`` slots with matrix ``M`` becomes ``BNA(len * M)``.  Empty runs
   take no time [R/P]: idle slots are compressed.  With ``rule="auto"`` (the scheduler
   default) or ``"hk"`` the colliding runs are resolved by the compiled ``"hk"`` rule in one
   call [P]; ``"maxweight"`` resolves them one by one in Python.

Makespan ``= sum_t eff(M(t))`` slots.  Theorem 2 [S]: ``O(mu g(m))`` times the optimal makespan
(in expectation [R]) for any constant ``beta > 1/e``.

All jobs are available at the start [R] (Section IV is a makespan problem; releases are G-DM's,
Section 6): the scheduler refuses an instance with a positive release.  Units [P]: slots of
``quantum / c`` time units (:mod:`coflowopt.schedulers.dag.slots`).
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from numba import njit

from coflowopt.model import Instance
from coflowopt.params import Params
from coflowopt.schedule import Schedule
from coflowopt.schedulers.dag.bna import bna_items, bna_plan, resolve_runs_hk
from coflowopt.schedulers.dag.slots import (
    SlotPlan,
    counting_sort,
    finishes_before_refusal,
    label,
    run_plan,
    slot_demand,
    slot_length,
    uniform_fabric_refusal,
)
from coflowopt.validate import Tolerance, ValidSchedule

__all__ = [
    "DMAParams",
    "aggregate_slots",
    "delay_and_merge",
    "dma_plan",
    "draw_delays",
    "isolated_plan",
    "job_topological_order",
    "release_refusal",
    "run_dma",
    "supports_dma",
]

_I64 = np.int64
_INV_E = 1.0 / math.e


def job_topological_order(instance: Instance) -> np.ndarray:
    """All coflow positions in the topological order of spec 1.3 [P]: Kahn's algorithm always
    taking the smallest coflow position among the ready coflows.  Restricted to one job it is
    that job's order (jobs share no edge)."""
    n = instance.n_coflows
    if instance.starts_after.shape[0] == 0:
        return np.arange(n, dtype=_I64)
    sptr, succ = instance.successors_ptr
    indeg = np.bincount(instance.starts_after[:, 1], minlength=n)
    ready = np.flatnonzero(indeg == 0).tolist()
    heapq.heapify(ready)
    out = []
    indeg = indeg.tolist()
    sp, sc = sptr.tolist(), succ.tolist()
    while ready:
        c = heapq.heappop(ready)
        out.append(c)
        for v in sc[sp[c]:sp[c + 1]]:
            indeg[v] -= 1
            if indeg[v] == 0:
                heapq.heappush(ready, v)
    return np.asarray(out, dtype=_I64)


def _coflows_by_job(instance: Instance, topo: np.ndarray) -> list[np.ndarray]:
    """Each job's coflows in the order ``topo``."""
    job = instance.coflow_job[topo]
    o = np.argsort(job, kind="stable")
    ptr = np.zeros(instance.n_jobs + 1, dtype=_I64)
    np.cumsum(np.bincount(job, minlength=instance.n_jobs), out=ptr[1:])
    srt = topo[o]
    return [srt[ptr[j]:ptr[j + 1]] for j in range(instance.n_jobs)]


def isolated_plan(instance: Instance, coflows: Sequence[int] | np.ndarray, demand: np.ndarray, *,
                  rule: str = "maxweight") -> SlotPlan:
    """DMA step 1 [S]: the given coflows (in this order, e.g. one job's topological order)
    one after another from slot 0, each by BNA in its ``eff`` slots."""
    plans, at = [], 0
    for c in np.asarray(coflows, dtype=_I64).tolist():
        p = bna_plan(instance, np.array([c]), demand, rule=rule)
        plans.append(p.shifted(at))
        at += p.makespan
    return SlotPlan.concat(plans)


def aggregate_slots(instance: Instance, jobs: np.ndarray, demand: np.ndarray) -> int:
    """``Delta = eff(sum_j A^j)`` over ``jobs`` in slots (Definition 2, integer demands)."""
    m = instance.ports
    sel = np.isin(instance.coflow_job[instance.flow_coflow], np.asarray(jobs, dtype=_I64))
    d = np.asarray(demand, dtype=_I64)[sel]
    if d.size == 0:
        return 0
    li = np.bincount(instance.flow_src[sel], weights=d, minlength=m)
    lo = np.bincount(instance.flow_dst[sel], weights=d, minlength=m)
    return int(max(li.max(), lo.max()))


def draw_delays(rng: np.random.Generator, jobs: np.ndarray, delta: int, beta: float
                ) -> np.ndarray:
    """DMA step 2 [S; discretisation P]: ``X_j`` uniform on ``{0, .., floor(Delta / beta)}``,
    drawn in increasing job position; returned aligned with ``jobs``."""
    jobs = np.asarray(jobs, dtype=_I64)
    hi = math.floor(delta / beta + 1e-12)
    by_pos = np.argsort(jobs, kind="stable")
    x = np.empty(jobs.size, dtype=_I64)
    x[by_pos] = rng.integers(0, hi + 1, size=jobs.size)
    return x


def delay_and_merge(instance: Instance, plans: Sequence[SlotPlan], delays: np.ndarray,
                    rank: np.ndarray | None = None, *, rule: str = "maxweight") -> SlotPlan:
    """DMA steps 2-4 on given isolated plans: shift plan ``i`` by ``delays[i]`` slots, merge,
    and resolve every run of constant membership (spec 4.4 [P]) of ``len`` slots and real-pair
    count matrix ``M`` by ``BNA(len * M)``, a pair shared by several plans serving them by
    increasing ``rank[i]`` (default ``i``); empty runs are dropped (idle compression).  The
    result starts at slot 0 and ends at ``sum over runs of len * eff(M)``."""
    n = len(plans)
    delays = np.asarray(delays, dtype=_I64).reshape(-1)
    if delays.size != n:
        raise ValueError(f"delay_and_merge: {n} plans but {delays.size} delays")
    if (delays < 0).any():
        i = int(np.flatnonzero(delays < 0)[0])
        raise ValueError(f"delay_and_merge: delay {delays[i]} of plan {i} is negative")
    rank = np.arange(n, dtype=_I64) if rank is None else np.asarray(rank, dtype=_I64)
    sizes = np.array([p.n_pieces for p in plans], dtype=_I64)
    if sizes.sum() == 0:
        return SlotPlan.empty()
    owner = np.repeat(np.arange(n, dtype=_I64), sizes)
    flow = np.concatenate([p.flow for p in plans])
    st = np.concatenate([p.start for p in plans]) + delays[owner]
    en = st + np.concatenate([p.length for p in plans])
    bounds = np.unique(np.concatenate([st, en]))
    ra = np.searchsorted(bounds, st)
    rb = np.searchsorted(bounds, en)
    del st, en
    n_runs = bounds.size - 1
    rlen = np.diff(bounds)
    m = instance.ports
    ps, pd = instance.flow_src[flow].astype(_I64), instance.flow_dst[flow].astype(_I64)
    # eff(M) of every run: the largest number of pieces on one port (a sweep per port; no
    # array of all (piece, run) members)
    eff = _run_eff(ra, rb, np.concatenate([ps, pd + m]), 2 * m, n_runs)
    begin = np.cumsum(rlen * eff) - rlen * eff          # compressed start of each run
    # pieces by priority (rank of the plan, then flow): members of a run keep this order
    prio = np.lexsort((flow, rank[owner]))
    del owner
    nc_p, nc_s, nc_n, cptr, cmem = _split_runs(ra, rb, eff, begin, rlen, prio)
    out_f = [flow[nc_p]]
    out_s = [nc_s]
    out_n = [nc_n]
    del nc_p, nc_s, nc_n
    if cmem.size:
        runs = np.flatnonzero(eff > 1)
        if rule in ("hk", "auto"):
            # compiled: every colliding run in one call
            mem, s, ln = resolve_runs_hk(ps[cmem], pd[cmem], cptr, rlen[runs], begin[runs])
            out_f.append(flow[cmem[mem]])
            out_s.append(s)
            out_n.append(ln)
            del mem, s, ln
        else:
            for g, (a, b) in enumerate(zip(cptr[:-1].tolist(), cptr[1:].tolist(),
                                           strict=True)):
                idx = cmem[a:b]
                r = int(runs[g])
                item, s, ln, _ = bna_items(ps[idx], pd[idx], np.full(b - a, rlen[r]),
                                           rule=rule)
                out_f.append(flow[idx[item]])
                out_s.append(begin[r] + s)
                out_n.append(ln)
    del cmem, ps, pd
    # merge_pieces, written out so that each input is freed as soon as it is reordered
    f = np.concatenate(out_f)
    del out_f
    s = np.concatenate(out_s)
    del out_s
    ln = np.concatenate(out_n)
    del out_n
    # by (flow, start): a counting sort by flow, each flow's few pieces then by start (4 bytes
    # a piece instead of an argsort's key, order and buffer; the order is the same, starts
    # being distinct within a flow)
    o = _order_flow_start(f, s, instance.n_flows) if f.size < 2 ** 31 else np.lexsort((s, f))
    f = f[o]
    s = s[o]
    ln = ln[o]
    del o
    k = _join_touching(f, s, ln)
    if k < f.size:
        f, s, ln = f[:k].copy(), s[:k].copy(), ln[:k].copy()
    return SlotPlan(f, s, ln)


def dma_plan(instance: Instance, jobs: np.ndarray, demand: np.ndarray, *,
             rng: np.random.Generator, beta: float = 1.0, rule: str = "maxweight",
             order: np.ndarray | None = None, delays: np.ndarray | None = None) -> SlotPlan:
    """DMA (Algorithm 2) of the given jobs (job positions) from slot 0, releases ignored.
    ``order``: the jobs' priority (a pair shared by several jobs in a merged slot serves them
    in this order; default increasing job position; G-DM passes its sigma); ``delays``:
    explicit ``X_j`` per job of ``jobs`` (slots) instead of drawing them."""
    jobs = np.asarray(jobs, dtype=_I64).reshape(-1)
    _check_beta(beta)
    by_job = _coflows_by_job(instance, job_topological_order(instance))
    plans = [isolated_plan(instance, by_job[j], demand, rule=rule) for j in jobs.tolist()]
    if delays is None:
        delays = draw_delays(rng, jobs, aggregate_slots(instance, jobs, demand), beta)
    return delay_and_merge(instance, plans, delays, _rank(jobs, order), rule=rule)


def _rank(jobs: np.ndarray, order: np.ndarray | None) -> np.ndarray:
    """Priority rank of each of ``jobs`` (lower first): its place in ``order``, else by job
    position."""
    if order is None:
        key = jobs
    else:
        order = np.asarray(order, dtype=_I64).reshape(-1)
        pos = {int(j): i for i, j in enumerate(order.tolist())}
        missing = [int(j) for j in jobs.tolist() if int(j) not in pos]
        if missing:
            raise ValueError(f"order: job position {missing[0]} is not in the order")
        key = np.array([pos[int(j)] for j in jobs.tolist()], dtype=_I64)
    rank = np.empty(jobs.size, dtype=_I64)
    rank[np.argsort(key, kind="stable")] = np.arange(jobs.size)
    return rank


def _check_beta(beta: float) -> None:
    if not (math.isfinite(beta) and beta > _INV_E):
        raise ValueError(f"beta: must be finite and > 1/e = {_INV_E:.6f}, got {beta!r}")


# -- the scheduler ----------------------------------------------------------------------------


@dataclass(frozen=True)
class DMAParams(Params):
    """``beta``: the delay-range constant (``X_j`` on ``{0..floor(Delta / beta)}``; must be
    ``> 1/e``); ``rule``: BNA's matching rule; ``quantum``: volume per slot [P]."""

    beta: float = 1.0
    rule: Literal["maxweight", "hk", "auto"] = "auto"
    quantum: float = 1.0

    def check(self) -> None:
        if not (math.isfinite(self.beta) and self.beta > _INV_E):
            raise ValueError(f"{type(self).__name__}.beta: must be finite and > 1/e = "
                             f"{_INV_E:.6f}, got {self.beta}")
        if not (math.isfinite(self.quantum) and self.quantum > 0):
            raise ValueError(f"{type(self).__name__}.quantum: must be finite and > 0, got "
                             f"{self.quantum}")


def release_refusal(instance: Instance, name: str, instead: str) -> str | None:
    """One line naming the first job with a positive release (the makespan algorithms assume
    every job available at the start [R]), else ``None``."""
    rel = np.maximum(instance.job_release, 0.0)
    crel = np.zeros(instance.n_jobs)
    np.maximum.at(crel, instance.coflow_job, instance.coflow_release)
    pos = np.flatnonzero((rel > 0) | (crel > 0))
    if pos.size == 0:
        return None
    j = int(pos[0])
    r = max(float(instance.job_release[j]), float(crel[j]))
    return (f"job {label(instance.job_id[j])!r} is released at {r:g}; {name} is a makespan "
            f"algorithm with every job available at 0 (use {instead} for releases)")


def supports_dma(instance: Instance) -> str | None:
    """Why ``dma`` cannot run ``instance`` (non-uniform fabric, a positive release)."""
    return (uniform_fabric_refusal(instance) or finishes_before_refusal(instance)
            or release_refusal(instance, "dma", "gdm"))


def run_dma(instance: Instance, params: DMAParams, *, seed: Any = None,
            check: Tolerance | None = None, progress: Any = None) -> Schedule | ValidSchedule:
    """DMA of all jobs from time 0 (:func:`dma_plan`), executed real-first; ``seed`` draws the
    delays.  Refuses an instance with a positive release (:func:`supports_dma`)."""
    why = supports_dma(instance)
    if why is not None:
        raise ValueError(f"dma: {why}")
    p = params
    demand = slot_demand(instance, p.quantum)
    plan = dma_plan(instance, np.arange(instance.n_jobs), demand,
                    rng=np.random.default_rng(seed), beta=p.beta, rule=p.rule)
    meta = {"scheduler": "dma", "params": {"beta": p.beta, "rule": p.rule,
                                           "quantum": p.quantum},
            "slot_length": slot_length(instance, p.quantum), "slots": plan.makespan}
    box = [plan]  # handed over: run_plan frees the plan once it has its segments
    del plan
    return run_plan(instance, box.pop(), quantum=p.quantum, check=check, meta=meta)


# -- compiled sweeps of delay_and_merge ---------------------------------------------------------


@njit(cache=True)
def _run_eff(ra, rb, port, n_ports, n_runs):
    """Largest number of pieces on one port in every run (piece ``i`` covers runs
    ``ra[i]..rb[i]-1`` and uses ports ``port[i]`` and ``port[i + P]``): per port a
    difference array over the runs it touches."""
    P = ra.size
    eff = np.zeros(n_runs, np.int64)
    ptr, idx = counting_sort(port, n_ports)   # port entries grouped by port
    cnt = np.zeros(n_runs + 1, np.int64)
    for u in range(n_ports):
        lo = n_runs
        hi = 0
        for t in range(ptr[u], ptr[u + 1]):
            i = idx[t] % P
            cnt[ra[i]] += 1
            cnt[rb[i]] -= 1
            lo = min(lo, ra[i])
            hi = max(hi, rb[i])
        c = 0
        for r in range(lo, hi):
            c += cnt[r]
            if c > eff[r]:
                eff[r] = c
        for r in range(lo, hi + 1):
            cnt[r] = 0
    return eff


@njit(cache=True)
def _split_runs(ra, rb, eff, begin, rlen, prio):
    """The pieces' share of every run: where the run has no collision (``eff <= 1``) a piece
    ``(piece, begin, rlen)``; the members of the colliding runs, run by run in the order
    ``prio``, as ``ptr`` over those runs and the piece of each member."""
    n_runs = eff.size
    P = ra.size
    diff = np.zeros(n_runs + 1, np.int64)
    for i in range(P):
        diff[ra[i]] += 1
        diff[rb[i]] -= 1
    cid = np.full(n_runs, -1, np.int64)
    n_clash = 0
    for r in range(n_runs):
        if eff[r] > 1:
            cid[r] = n_clash
            n_clash += 1
    cptr = np.zeros(n_clash + 1, np.int64)
    c = 0
    n_free = 0
    for r in range(n_runs):
        c += diff[r]
        if eff[r] > 1:
            cptr[cid[r] + 1] = c
        else:
            n_free += c
    for g in range(n_clash):
        cptr[g + 1] += cptr[g]
    fill = cptr[:-1].copy()
    cmem = np.empty(cptr[n_clash], np.int64)
    o_p = np.empty(n_free, np.int64)
    o_s = np.empty(n_free, np.int64)
    o_n = np.empty(n_free, np.int64)
    k = 0
    for t in range(P):
        i = prio[t]
        for r in range(ra[i], rb[i]):
            g = cid[r]
            if g >= 0:
                cmem[fill[g]] = i
                fill[g] += 1
            else:
                o_p[k] = i
                o_s[k] = begin[r]
                o_n[k] = rlen[r]
                k += 1
    return o_p, o_s, o_n, cptr, cmem


@njit(cache=True)
def _join_touching(f, s, n):
    """Join, in place, consecutive pieces of one flow that touch (pieces ordered by (flow,
    start)); returns the number of pieces left at the front."""
    k = 0
    for i in range(f.size):
        if k > 0 and f[i] == f[k - 1] and s[i] == s[k - 1] + n[k - 1]:
            n[k - 1] += n[i]
        else:
            f[k] = f[i]
            s[k] = s[i]
            n[k] = n[i]
            k += 1
    return k


@njit(cache=True)
def _order_flow_start(f, s, n_flows):
    """Positions of the pieces by (flow, start), as int32: counting sort by flow, then an
    insertion sort (or argsort for many pieces) of each flow's pieces by start."""
    ptr, idx = counting_sort(f, n_flows)
    for g in range(n_flows):
        a = ptr[g]
        b = ptr[g + 1]
        if b - a <= 1:
            continue
        if b - a <= 32:
            for x in range(a + 1, b):
                v = idx[x]
                y = x - 1
                while y >= a and s[idx[y]] > s[v]:
                    idx[y + 1] = idx[y]
                    y -= 1
                idx[y + 1] = v
        else:
            seg = idx[a:b].copy()
            o = np.argsort(s[seg], kind="mergesort")
            for x in range(b - a):
                idx[a + x] = seg[o[x]]
    return idx
