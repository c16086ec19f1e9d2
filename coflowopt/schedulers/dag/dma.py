"""DMA, Delay-and-Merge for the makespan of several general-DAG jobs (Shafiee and Ghaderi,
*Scheduling Coflows with Dependency Graph*, IEEE/ACM ToN 2021, Sec. IV, Algorithm 2).  Tags:
[R] recovered from the paper, [C] reconstructed by us (docs/families/index.md).

1. Isolated schedules [R]: each job's coflows in a topological order (any valid one, Sec. IV;
   Kahn taking the smallest coflow position among the ready ones [C: our tie rule]), one after
   another, each by BNA in its
   ``eff(D^(cj))`` slots; length ``H_j = sum_c eff(D^(cj))``.
2. Random delays [R]: ``X_j`` uniform on ``[0, Delta / beta]`` (``Delta = eff(sum_j A^j)``
   over the jobs of the call, Definition 2), discretised [C] to the integers
   ``{0, .., floor(Delta / beta)}`` and drawn in job-position order.
3. Merge [R]: the count matrix ``M(t)`` of the real pairs (dummy pairs of the augmentation do
   not count [C: they carry no data]) of the delayed schedules.
4. Resolve collisions [R]: each slot becomes ``BNA(M(t))`` (``eff(M(t))`` slots; a pair used by
   several jobs serves them in the jobs' priority order [C]: increasing job position, or the
   ``order`` given, e.g. G-DM's sigma).  Polynomial form [C: ours, one BNA per slot is
   pseudo-polynomial]: the merged schedule is cut into *runs* of constant membership (boundaries at
   every start and end of a piece of any job) and a run of ``len`` slots with matrix ``M`` becomes
   ``BNA(len * M)``.  Empty runs take no time [C]: idle slots are compressed.  With ``rule="auto"``
   (the scheduler default) or ``"hk"`` the colliding runs are resolved by the compiled ``"hk"`` rule
   in one call [C]; ``"maxweight"`` resolves them one by one in Python.

Makespan ``= sum_t eff(M(t))`` slots.  Theorem 2 [R] (proof in Sec. IX-A): ``O(mu g(m))`` times the
optimal makespan (in expectation [C: our reading of the randomised delays]) for any constant
``beta > 1/e``.

All jobs are available at the start [C] (Sec. IV is a makespan problem; releases are G-DM's,
Algorithm 4): the scheduler refuses an instance with a positive release.  Units [C]: slots of
``quantum / c`` time units (:mod:`coflowopt.schedulers.dag.slots`).
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from coflowopt._jit import njit
from coflowopt.model import Instance
from coflowopt.params import Params
from coflowopt.schedulers.dag.bna import bna_items, bna_plan, resolve_runs_hk
from coflowopt.schedulers.dag.merge_stream import RunCut, run_merged
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
from coflowopt.sim.sink import Outcome, RateSink

__all__ = [
    "DMAParams",
    "RunCut",
    "aggregate_slots",
    "assemble_ordered",
    "assemble_pieces",
    "cut_runs",
    "delay_and_merge",
    "dma_cut",
    "dma_plan",
    "draw_delays",
    "execute_cut",
    "isolated_plan",
    "job_topological_order",
    "release_refusal",
    "resolve_blocks",
    "resolve_cut",
    "run_dma",
    "supports_dma",
]

_I64 = np.int64
_INV_E = 1.0 / math.e
#: pieces per block of :func:`coflowopt.schedulers.dag.bna.resolve_runs_hk` in the merge
_BLOCK = 1 << 22
NO_W = np.zeros(0, _I64)   # no weights: every piece counts 1


def _fit(top: int) -> type:
    """int32 when values below ``top`` fit, else int64."""
    return np.int32 if top < 2 ** 31 else _I64


def job_topological_order(instance: Instance) -> np.ndarray:
    """All coflow positions in the topological order [C: the paper allows any]: Kahn's algorithm
    always taking the smallest coflow position among the ready coflows.  Restricted to one job it is
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
    """DMA step 1 [R]: the given coflows (in this order, e.g. one job's topological order)
    one after another from slot 0, each by BNA in its ``eff`` slots."""
    plans, at = [], 0
    for c in np.asarray(coflows, dtype=_I64).tolist():
        p = bna_plan(instance, np.array([c]), demand, rule=rule)
        plans.append(p.shifted(at))
        at += p.makespan
    return SlotPlan.concat(plans)


def aggregate_slots(instance: Instance, jobs: np.ndarray, demand: np.ndarray) -> int:
    """``Delta = eff(sum_j A^j)`` over ``jobs`` in slots (Definition 2, integer demands).
    Reads the jobs' own flows (through their coflows), not every flow of the instance:
    DMA-SRT asks once per job."""
    m = instance.ports
    cof = np.flatnonzero(np.isin(instance.coflow_job, np.asarray(jobs, dtype=_I64)))
    ptr = instance.coflow_flows_ptr
    lo, n = ptr[cof], ptr[cof + 1] - ptr[cof]
    # the coflows' CSR ranges, one index each (integer sums: the order cannot change them)
    at = np.repeat(lo - (np.cumsum(n) - n), n) + np.arange(int(n.sum()), dtype=_I64)
    sel = instance.coflow_flow_order[at]
    d = np.asarray(demand, dtype=_I64)[sel]
    if d.size == 0:
        return 0
    li = np.bincount(instance.flow_src[sel], weights=d, minlength=m)
    lo = np.bincount(instance.flow_dst[sel], weights=d, minlength=m)
    return int(max(li.max(), lo.max()))


def draw_delays(rng: np.random.Generator, jobs: np.ndarray, delta: int, beta: float
                ) -> np.ndarray:
    """DMA step 2 [R; discretisation C]: ``X_j`` uniform on ``{0, .., floor(Delta / beta)}``,
    drawn in increasing job position; returned aligned with ``jobs``."""
    jobs = np.asarray(jobs, dtype=_I64)
    hi = math.floor(delta / beta + 1e-12)
    by_pos = np.argsort(jobs, kind="stable")
    x = np.empty(jobs.size, dtype=_I64)
    x[by_pos] = rng.integers(0, hi + 1, size=jobs.size)
    return x


def cut_runs(instance: Instance, plans: Sequence[SlotPlan], delays: np.ndarray,
             rank: np.ndarray | None = None) -> RunCut | None:
    """DMA steps 2-3 on given isolated plans: plan ``i`` shifted by ``delays[i]`` slots, the
    merged pieces cut into runs (:class:`RunCut`; ``rank[i]``, default ``i``, is plan ``i``'s
    priority); ``None`` when the plans have no piece.  Index, port and run columns are int32
    where the values fit."""
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
        return None
    owner = np.repeat(np.arange(n, dtype=_I64), sizes)
    flow = np.concatenate([p.flow for p in plans])
    st = np.concatenate([p.start for p in plans]) + delays[owner]
    en = st + np.concatenate([p.length for p in plans])
    del plans   # freed here when the caller handed the list over (dma_plan does)
    top = int(en.max()) + 1
    if top <= 4 * st.size + 1024:
        # the boundaries marked on the slots, each slot's boundary rank by a running count
        # (O(P + slots), the same runs as the sort below)
        bounds, ra, rb = _slot_runs(st, en, top, np.zeros(0, _fit(max(top, flow.size))))
        n_runs = bounds.size - 1
        it = _fit(max(n_runs + 1, flow.size))
        ra, rb = ra.astype(it, copy=False), rb.astype(it, copy=False)
    else:
        bounds = np.unique(np.concatenate([st, en]))
        n_runs = bounds.size - 1
        it = _fit(max(n_runs + 1, flow.size))
        ra = np.searchsorted(bounds, st).astype(it)
        rb = np.searchsorted(bounds, en).astype(it)
    del st, en
    rlen = np.diff(bounds)
    del bounds
    m = instance.ports
    ps = instance.flow_src[flow].astype(np.int32)
    pd = instance.flow_dst[flow].astype(np.int32)
    # eff(M) of every run: the largest number of pieces on one port (a sweep per port; no
    # array of all (piece, run) members)
    eff = run_eff(ra, rb, np.concatenate([ps, pd + m]), 2 * m, n_runs, NO_W)
    begin = np.cumsum(rlen * eff) - rlen * eff          # compressed start of each run
    total = int(begin[-1] + rlen[-1] * eff[-1])
    # pieces by priority (rank of the plan, then flow): members of a run keep this order
    prio = np.lexsort((flow, rank[owner])).astype(it)
    return RunCut(flow, ps, pd, ra, rb, rlen, eff, begin, prio, total)


def delay_and_merge(instance: Instance, plans: Sequence[SlotPlan], delays: np.ndarray,
                    rank: np.ndarray | None = None, *, rule: str = "maxweight") -> SlotPlan:
    """DMA steps 2-4 on given isolated plans: shift plan ``i`` by ``delays[i]`` slots, merge,
    and resolve every run of constant membership ([C], module docstring) of ``len`` slots and
    real-pair count matrix ``M`` by ``BNA(len * M)``, a pair shared by several plans serving them by
    increasing ``rank[i]`` (default ``i``); empty runs are dropped (idle compression).  The
    result starts at slot 0 and ends at ``sum over runs of len * eff(M)``.

    Memory (a merge of millions of (piece, run) members): index, port and slot columns are
    int32 where the values fit (:func:`cut_runs`); the colliding runs are resolved a block of
    :data:`_BLOCK` pieces at a time, and the blocks are scattered by flow into two columns
    and freed one by one; only the joined result is widened to the plan's int64.  (A
    streamed run needs no plan: :func:`coflowopt.schedulers.dag.merge_stream.run_merged`.)"""
    box = [plans]   # handed over: cut_runs frees the isolated plans once concatenated
    del plans
    return resolve_cut(instance, cut_runs(instance, box.pop(), delays, rank), rule=rule)


def resolve_cut(instance: Instance, cut: RunCut | None, *, rule: str = "maxweight"
                ) -> SlotPlan:
    """DMA step 4 on the runs of ``cut`` (:func:`cut_runs`; ``None``: no piece), as a plan
    (:func:`delay_and_merge`)."""
    if cut is None:
        return SlotPlan.empty()
    box = [cut]
    del cut
    return assemble_pieces(resolve_blocks(instance, box.pop(), rule=rule), instance.n_flows)


def resolve_blocks(instance: Instance, cut: RunCut, *, rule: str = "maxweight"
                   ) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """DMA step 4 on the runs of ``cut``: the pieces ``(flow, start, length)`` in blocks, not
    yet joined (:func:`assemble_pieces` joins them into the plan, :func:`assemble_ordered`
    into the backfill's order)."""
    box = [cut]
    del cut
    flow, ps, pd, ra, rb, rlen, eff, begin, prio, total = box.pop()
    like = np.zeros(0, _fit(max(total + 1, flow.size, instance.n_flows)))
    # the runs' shares joined where they touch (assemble_* join them anyway)
    blocks = list(merge_runs(ra, rb, eff > 1, begin, rlen, prio, flow, NO_W, like, True))
    del ra, rb, prio
    cptr, cmem = blocks.pop()
    if cmem.size:
        runs = np.flatnonzero(eff > 1)
        rl, bg = rlen[runs], begin[runs]
        if rule in ("hk", "auto"):
            # compiled, a block of pieces at a time
            g = 0
            while g < runs.size:
                f_, s_, n_, k, g = resolve_runs_hk(ps, pd, cmem, cptr, rl, bg, flow, g, _BLOCK,
                                                   like)
                blocks.append((f_[:k], s_[:k], n_[:k]))
                del f_, s_, n_
        else:
            for g, (a, b) in enumerate(zip(cptr[:-1].tolist(), cptr[1:].tolist(),
                                           strict=True)):
                idx = cmem[a:b]
                item, s, ln, _ = bna_items(ps[idx], pd[idx], np.full(b - a, rl[g]),
                                           rule=rule)
                blocks.append((flow[idx[item]].astype(like.dtype),
                               (bg[g] + s).astype(like.dtype), ln.astype(like.dtype)))
    del cmem, ps, pd, flow, eff, begin, rlen
    return blocks


def assemble_pieces(blocks: list[tuple[np.ndarray, np.ndarray, np.ndarray]], n_flows: int
                    ) -> SlotPlan:
    """The pieces ``(flow, start, length)`` of ``blocks`` (consumed: the list is emptied, each
    block freed once placed) as one plan ordered by (flow, start), consecutive pieces of one
    flow that touch joined (the pieces of one flow must not overlap).  A counting sort by flow
    into two columns of the blocks' dtype, then each flow's pieces by start."""
    ptr, S, N, keep = _joined_by_flow(blocks, n_flows)
    cols = [S, N]
    del S, N
    return _joined_plan(ptr, keep, cols)


def _joined_plan(ptr: np.ndarray, keep: np.ndarray, cols: list[np.ndarray]) -> SlotPlan:
    """The kept pieces of :func:`_joined_by_flow` as the int64 plan by (flow, start); ``cols``
    its ``S`` and ``N`` columns in that order, handed over (emptied): widened one column at a
    time, each source freed once copied."""
    f = _flow_col(ptr, keep)
    s = _widen(ptr, keep, cols.pop(0))
    n = _widen(ptr, keep, cols.pop(0))
    return SlotPlan(f, s, n)


def assemble_ordered(blocks: list[tuple[np.ndarray, np.ndarray, np.ndarray]], n_flows: int,
                     shift: int, take: Callable[[tuple[np.ndarray, np.ndarray, np.ndarray]],
                                                Any], *, chunk: int = 1 << 22
                     ) -> tuple[int, int]:
    """:func:`assemble_pieces`' plan as the backfill reads it
    (:func:`~coflowopt.schedulers.dag.backfill.ordered_pieces` of it, ``shift`` slots later:
    the pieces of positive length by (start, flow), int32 columns where the values fit),
    handed to ``take`` in chunks of about ``chunk`` pieces, each starting after the one
    before (what :class:`~coflowopt.schedulers.dag.backfill.BackfillRun` reads), without the
    plan's int64 columns or its ordered columns whole: the joined pieces, still in the
    blocks' dtype and grouped by flow, are counted by start, and each chunk's slots placed
    flow by flow (stable: ties by flow).  Returns the plan's makespan (before the shift) and
    its number of pieces (``SlotPlan.makespan``, ``SlotPlan.n_pieces``)."""
    from coflowopt.schedulers.dag.backfill import ordered_pieces

    ptr, S, N, keep = _joined_by_flow(blocks, n_flows)
    n = int(keep.sum())
    top, end, span = _kept_extent(ptr, keep, S, N)
    if top > 4 * n + (1 << 20):     # starts spread far apart: ordered_pieces' lexsort
        cols = [S, N]
        del S, N
        take(ordered_pieces(_joined_plan(ptr, keep, cols), n_flows, shift))
        return span, n
    small = shift + end < 2 ** 31 - 1 and n_flows < 2 ** 31 and n < 2 ** 31
    like = np.zeros(0, np.int32 if small else _I64)
    at = _start_counts(ptr, keep, S, N, top)    # at[t]: the pieces starting before slot t
    cur = ptr[:-1].copy()                       # each flow's first piece not yet placed
    t0 = 0
    while t0 < top:
        # the chunk's last slot: where its count reaches `chunk` (at least one slot)
        t1 = max(t0 + 1, int(np.searchsorted(at, at[t0] + chunk, side="right")) - 1)
        t1 = min(t1, top)
        take(_place_by_start(ptr, keep, S, N, cur, at, t0, t1, shift, like))
        t0 = t1
    return span, n


def _joined_by_flow(blocks: list[tuple[np.ndarray, np.ndarray, np.ndarray]], n_flows: int
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The blocks' pieces (the list emptied, each block freed once placed) grouped by flow
    (``ptr``) in the blocks' dtype, each flow's pieces by start with the touching ones joined
    at the front of its range: ``(ptr, S, N, keep)``, ``keep[g]`` pieces kept for flow
    ``g``."""
    cnt = np.zeros(n_flows + 1, _I64)
    for f, _, _ in blocks:
        _count_flows(cnt, f)
    ptr = np.cumsum(cnt)       # cnt[0] = 0: ptr[g] is where flow g's pieces begin
    del cnt
    dt = blocks[0][1].dtype if blocks else _I64
    S = np.empty(int(ptr[-1]), dt)
    N = np.empty(int(ptr[-1]), dt)
    fill = ptr[:-1].copy()
    while blocks:
        f, s, n = blocks.pop()
        _scatter_flows(fill, f, s, n, S, N)
        del f, s, n
    del fill
    return ptr, S, N, _sort_join(ptr, S, N)


@njit(cache=True)
def _kept_extent(ptr, keep, S, N):
    """One past the largest start of the kept pieces of positive length (at least 1), their
    largest end, and the largest end of all kept pieces (the plan's makespan; 0: none)."""
    top = 0
    end = 0
    span = 0
    for g in range(keep.size):
        for x in range(ptr[g], ptr[g] + keep[g]):
            e = np.int64(S[x]) + N[x]
            span = max(span, e)
            if N[x] > 0:
                top = max(top, np.int64(S[x]) + 1)
                end = max(end, e)
    return max(top, 1), end, span


@njit(cache=True)
def _start_counts(ptr, keep, S, N, top):
    """``at[t]``: the kept pieces of positive length that start before slot ``t``
    (``t = 0..top``)."""
    at = np.zeros(top + 1, np.int64)
    for g in range(keep.size):
        for x in range(ptr[g], ptr[g] + keep[g]):
            if N[x] > 0:
                at[S[x] + 1] += 1
    for t in range(top):
        at[t + 1] += at[t]
    return at


@njit(cache=True)
def _place_by_start(ptr, keep, S, N, cur, at, t0, t1, shift, like):
    """The kept pieces of positive length starting in slots ``t0..t1-1``, by (start, flow),
    ``shift`` slots later, as columns of ``like``'s dtype: placed flow by flow from each
    flow's cursor ``cur`` (moved past them; a flow's kept pieces are by start)."""
    n = at[t1] - at[t0]
    fill = at[t0:t1 + 1] - at[t0]
    o_f = np.empty(n, like.dtype)
    o_s = np.empty(n, like.dtype)
    o_n = np.empty(n, like.dtype)
    for g in range(keep.size):
        x = cur[g]
        b = ptr[g] + keep[g]
        while x < b and S[x] < t1:
            if N[x] > 0:
                k = fill[S[x] - t0]
                fill[S[x] - t0] = k + 1
                o_f[k] = g
                o_s[k] = np.int64(S[x]) + shift
                o_n[k] = N[x]
            x += 1
        cur[g] = x
    return o_f, o_s, o_n


def dma_plan(instance: Instance, jobs: np.ndarray, demand: np.ndarray, *,
             rng: np.random.Generator, beta: float = 1.0, rule: str = "maxweight",
             order: np.ndarray | None = None, delays: np.ndarray | None = None) -> SlotPlan:
    """DMA (Algorithm 2) of the given jobs (job positions) from slot 0, releases ignored.
    ``order``: the jobs' priority (a pair shared by several jobs in a merged slot serves them
    in this order; default increasing job position; G-DM passes its sigma); ``delays``:
    explicit ``X_j`` per job of ``jobs`` (slots) instead of drawing them."""
    return resolve_cut(instance, dma_cut(instance, jobs, demand, rng=rng, beta=beta, rule=rule,
                                         order=order, delays=delays), rule=rule)


def dma_cut(instance: Instance, jobs: np.ndarray, demand: np.ndarray, *,
            rng: np.random.Generator, beta: float = 1.0, rule: str = "maxweight",
            order: np.ndarray | None = None, delays: np.ndarray | None = None
            ) -> RunCut | None:
    """DMA steps 1-3 of :func:`dma_plan` (the same arguments): the jobs' isolated plans,
    delayed and cut into runs (:func:`cut_runs`), before their collisions are resolved."""
    jobs = np.asarray(jobs, dtype=_I64).reshape(-1)
    check_beta(beta)
    by_job = _coflows_by_job(instance, job_topological_order(instance))
    if delays is None:     # the isolated plans draw nothing: the same delays as after them
        delays = draw_delays(rng, jobs, aggregate_slots(instance, jobs, demand), beta)
    # the list is handed over: cut_runs frees the isolated plans once concatenated
    return cut_runs(
        instance, [isolated_plan(instance, by_job[j], demand, rule=rule) for j in jobs.tolist()],
        delays, job_rank(jobs, order))


def job_rank(jobs: np.ndarray, order: np.ndarray | None) -> np.ndarray:
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


def check_beta(beta: float) -> None:
    if not (math.isfinite(beta) and beta > _INV_E):
        raise ValueError(f"beta: must be finite and > 1/e = {_INV_E:.6f}, got {beta!r}")


# -- the scheduler ----------------------------------------------------------------------------


@dataclass(frozen=True)
class DMAParams(Params):
    """``beta``: the delay-range constant (``X_j`` on ``{0..floor(Delta / beta)}``; must be
    ``> 1/e``); ``rule``: BNA's matching rule; ``quantum``: volume per slot [C]."""

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
    every job available at the start [C]), else ``None``."""
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


def run_dma(instance: Instance, params: DMAParams, sink: RateSink, *, seed: Any = None,
            progress: Any = None) -> Outcome:
    """DMA of all jobs from time 0 (:func:`dma_plan`), executed real-first; ``seed`` draws the
    delays.  Refuses an instance with a positive release (:func:`supports_dma`)."""
    why = supports_dma(instance)
    if why is not None:
        raise ValueError(f"dma: {why}")
    p = params
    demand = slot_demand(instance, p.quantum)
    cut = dma_cut(instance, np.arange(instance.n_jobs), demand,
                  rng=np.random.default_rng(seed), beta=p.beta, rule=p.rule)
    meta = {"scheduler": "dma", "params": {"beta": p.beta, "rule": p.rule,
                                           "quantum": p.quantum},
            "slot_length": slot_length(instance, p.quantum)}
    box = [cut]
    del cut
    return execute_cut(instance, box.pop(), rule=p.rule, quantum=p.quantum, sink=sink,
                       meta=meta)


def execute_cut(instance: Instance, cut: RunCut | None, *, rule: str, quantum: float,
                sink: RateSink, meta: dict[str, Any]) -> Outcome:
    """DMA step 4 on ``cut``'s runs and the execution of the result into ``sink`` (DMA's
    and DMA-RT's): a streaming sink under rule ``"hk"`` / ``"auto"`` gets the runs resolved
    and executed in time order, no merged plan held
    (:func:`~coflowopt.schedulers.dag.merge_stream.run_merged`); otherwise the merged plan
    (:func:`resolve_cut`) goes through ``run_plan``.  ``meta["slots"]`` is the plan's
    makespan.  Handed over as the only reference, the runs are freed once resolved."""
    if sink.stream and rule in ("hk", "auto") and cut is not None:
        meta["slots"] = cut.total
        box = [cut]
        del cut
        return run_merged(instance, box.pop(), quantum=quantum, sink=sink, meta=meta)
    box_c = [cut]   # handed over: resolve_cut frees the runs once merged
    del cut
    plan = resolve_cut(instance, box_c.pop(), rule=rule)
    meta["slots"] = plan.makespan
    box_p = [plan]  # handed over: run_plan frees the plan once it has its segments
    del plan
    return run_plan(instance, box_p.pop(), quantum=quantum, sink=sink, meta=meta)


# -- compiled sweeps of delay_and_merge ---------------------------------------------------------


@njit(cache=True)
def run_eff(ra, rb, port, n_ports, n_runs, w):
    """Largest load of one port in every run: piece ``i`` covers runs ``ra[i]..rb[i]-1``,
    uses ports ``port[i]`` and ``port[i + P]`` and weighs ``w[i]`` (1 each if ``w`` is
    empty).  Unit weights: one sweep over the runs (:func:`_unit_eff`); else per port a
    difference array over the runs it touches (``O(ports x runs)`` when every port is used
    from the first run to the last, as DMA's random delays make it)."""
    P = ra.size
    unit = w.size == 0
    if unit:
        return _unit_eff(ra, rb, port, n_ports, n_runs)
    eff = np.zeros(n_runs, np.int64)
    ptr, idx = counting_sort(port, n_ports)   # port entries grouped by port
    cnt = np.zeros(n_runs + 1, np.int64)
    for u in range(n_ports):
        lo = n_runs
        hi = 0
        for t in range(ptr[u], ptr[u + 1]):
            i = idx[t] % P
            x = 1 if unit else w[i]
            cnt[ra[i]] += x
            cnt[rb[i]] -= x
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
def _slot_runs(st, en, top, like):
    """The sorted distinct values of ``st`` and ``en`` (slots below ``top``) and each one's
    index among them (``np.unique`` and ``np.searchsorted`` of :func:`cut_runs`), the
    indices in ``like``'s dtype."""
    mark = np.zeros(top, np.bool_)
    for i in range(st.size):
        mark[st[i]] = True
        mark[en[i]] = True
    rank = np.empty(top, like.dtype)
    k = 0
    for t in range(top):
        rank[t] = k
        if mark[t]:
            k += 1
    bounds = np.empty(k, np.int64)
    k = 0
    for t in range(top):
        if mark[t]:
            bounds[k] = t
            k += 1
    ra = np.empty(st.size, like.dtype)
    rb = np.empty(st.size, like.dtype)
    for i in range(st.size):
        ra[i] = rank[st[i]]
        rb[i] = rank[en[i]]
    return bounds, ra, rb


@njit(cache=True)
def _unit_eff(ra, rb, port, n_ports, n_runs):
    """:func:`run_eff` of unit pieces in ``O(P + ports + runs)``: the runs in order, the
    pieces ending at a run leaving their two ports and those starting there joining them;
    per port its load, per load the number of ports at it, and the largest load, which a
    leave lowers by at most one (to a load some port still has)."""
    P = ra.size
    sptr, sidx = counting_sort(ra, n_runs + 1)     # pieces by first run
    eptr, eidx = counting_sort(rb, n_runs + 1)     # and by end run
    load = np.zeros(n_ports, np.int64)
    top = 0
    for i in range(2 * P):          # no port carries more than its pieces
        load[port[i]] += 1
        top = max(top, load[port[i]])
    load[:] = 0
    at = np.zeros(top + 2, np.int64)   # ports at each load
    at[0] = n_ports
    mx = 0
    eff = np.zeros(n_runs, np.int64)
    for r in range(n_runs):
        for t in range(eptr[r], eptr[r + 1]):
            i = eidx[t]
            for u in (port[i], port[i + P]):
                c = load[u]
                at[c] -= 1
                at[c - 1] += 1
                load[u] = c - 1
                if c == mx and at[c] == 0:
                    mx = c - 1
        for t in range(sptr[r], sptr[r + 1]):
            i = sidx[t]
            for u in (port[i], port[i + P]):
                c = load[u] + 1
                at[c - 1] -= 1
                at[c] += 1
                load[u] = c
                if c > mx:
                    mx = c
        eff[r] = mx
    return eff


@njit(cache=True)
def merge_runs(ra, rb, clash, begin, rlen, prio, flow, amt, like, join=False):
    """The pieces' share of every run.  Where the run has no collision (not ``clash``) a
    piece ``(flow, begin, rlen * amt)`` (``amt`` 1 if empty); the members of the colliding
    runs, run by run in the order ``prio``, as ``ptr`` over those runs and the piece of each
    member.  Output columns in ``like``'s dtype.  ``join``: a piece's shares of consecutive
    runs without collision that touch come out as one (both of positive length; for a caller
    that joins touching pieces anyway: fewer pieces to hold and sort; the columns are then
    views of the first ``n`` of their room, the rest untouched)."""
    n_runs = clash.size
    P = ra.size
    unit = amt.size == 0
    diff = np.zeros(n_runs + 1, np.int64)
    for i in range(P):
        diff[ra[i]] += 1
        diff[rb[i]] -= 1
    cid = np.full(n_runs, -1, np.int64)
    n_clash = 0
    for r in range(n_runs):
        if clash[r]:
            cid[r] = n_clash
            n_clash += 1
    cptr = np.zeros(n_clash + 1, np.int64)
    c = 0
    n_free = 0
    for r in range(n_runs):
        c += diff[r]
        if clash[r]:
            cptr[cid[r] + 1] = c
        else:
            n_free += c
    for g in range(n_clash):
        cptr[g + 1] += cptr[g]
    fill = cptr[:-1].copy()
    cmem = np.empty(cptr[n_clash], like.dtype)
    o_f = np.empty(n_free, like.dtype)
    o_s = np.empty(n_free, like.dtype)
    o_n = np.empty(n_free, like.dtype)
    k = 0
    for t in range(P):
        i = prio[t]
        last = -1       # this piece's share of the run before, when it had no collision
        for r in range(ra[i], rb[i]):
            g = cid[r]
            if g >= 0:
                cmem[fill[g]] = i
                fill[g] += 1
                last = -1
            else:
                n = rlen[r] if unit else rlen[r] * amt[i]
                if join and last >= 0 and n > 0 and o_n[last] > 0 \
                        and o_s[last] + o_n[last] == begin[r]:
                    o_n[last] += n
                    continue
                o_f[k] = flow[i]
                o_s[k] = begin[r]
                o_n[k] = n
                last = k
                k += 1
    return (o_f[:k], o_s[:k], o_n[:k]), (cptr, cmem)


@njit(cache=True)
def _count_flows(cnt, f):
    """Add the number of pieces of every flow to ``cnt[flow + 1]``."""
    for i in range(f.size):
        cnt[f[i] + 1] += 1


@njit(cache=True)
def _scatter_flows(fill, f, s, n, S, N):
    """Write each piece's start and length at its flow's next free place."""
    for i in range(f.size):
        x = fill[f[i]]
        S[x] = s[i]
        N[x] = n[i]
        fill[f[i]] = x + 1


@njit(cache=True)
def _sort_join(ptr, S, N):
    """Each flow's pieces (``ptr[g]:ptr[g+1]``) by start (insertion sort, or a merge sort
    for many), consecutive touching pieces joined in place at the front of the flow's
    range; returns how many each flow keeps."""
    n_flows = ptr.size - 1
    keep = np.zeros(n_flows, np.int64)
    for g in range(n_flows):
        a = ptr[g]
        b = ptr[g + 1]
        if b - a == 0:
            continue
        if b - a <= 32:
            for x in range(a + 1, b):
                vs = S[x]
                vn = N[x]
                y = x - 1
                while y >= a and S[y] > vs:
                    S[y + 1] = S[y]
                    N[y + 1] = N[y]
                    y -= 1
                S[y + 1] = vs
                N[y + 1] = vn
        else:
            o = np.argsort(S[a:b], kind="mergesort")
            ss = S[a:b].copy()
            nn = N[a:b].copy()
            for x in range(b - a):
                S[a + x] = ss[o[x]]
                N[a + x] = nn[o[x]]
        k = a
        for x in range(a + 1, b):
            if S[x] == S[k] + N[k]:
                N[k] += N[x]
            else:
                k += 1
                S[k] = S[x]
                N[k] = N[x]
        keep[g] = k + 1 - a
    return keep


@njit(cache=True)
def _flow_col(ptr, keep):
    """The flow of every kept piece, int64, in (flow, start) order."""
    tot = 0
    for g in range(keep.size):
        tot += keep[g]
    f = np.empty(tot, np.int64)
    k = 0
    for g in range(keep.size):
        for _ in range(keep[g]):
            f[k] = g
            k += 1
    return f


@njit(cache=True)
def _widen(ptr, keep, X):
    """The first ``keep[g]`` entries of every flow's range ``ptr[g]:`` of ``X``, int64."""
    tot = 0
    for g in range(keep.size):
        tot += keep[g]
    out = np.empty(tot, np.int64)
    k = 0
    for g in range(keep.size):
        for x in range(ptr[g], ptr[g] + keep[g]):
            out[k] = X[x]
            k += 1
    return out
