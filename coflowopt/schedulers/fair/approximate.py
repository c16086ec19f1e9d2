""""Approximate": Shafiee and Ghaderi's LP-based deterministic algorithm for weighted CCT
("An Improved Bound for Minimizing the Total Weighted Completion Time of Coflows in
Datacenters", IEEE/ACM ToN 2018, arXiv 1704.08357; LP and list-scheduling details
reconstructed [C]; the "Approximate" baseline of DeepWeave, Sun et al., IJCAI 2020).
Recovered: approximation ratio **5** with release dates and **4** when every coflow is
released at 0, from "an improved LP formulation and a simple list-scheduling policy".

1. **LP** (:func:`coflowopt.lp.ordering_lp`, [C]): with ``d_lk = p_lk / B_l``::

       min  sum_k w_k f_k
       f_k >= r_k + d_lk                                   every port l, coflow k
       f_k >= d_lk + sum_{k' != k} d_lk' delta_{k'k}        every port l, coflow k
       delta_{kk'} + delta_{k'k} = 1,  0 <= delta <= 1

   a relaxation of every (even preemptive, fluid) schedule, so ``LP* <= sum_k w_k C_k``.
2. **Order** the coflows by the LP values ``f_k`` ascending (ties: position).
3. **List scheduling of flows** ([C]): the flows are listed coflow by coflow in that order
   (inside a coflow by flow position, [C]).  At every event (a flow completion, a coflow
   becoming eligible) the list is scanned: a flow of coflow ``k`` starts when ``k`` is
   eligible (time ``>= r_k`` and, on a DAG instance, every Starts-After predecessor of ``k``
   complete) and both its ports are idle and no earlier-listed *waiting* (eligible, not
   started) flow shares a port with it; it is then served non-preemptively at full port rate
   ``min(B_src, B_dst)`` until done, one segment.  Bound pattern (the paper's factor 5): each
   coflow ends by ``max release + 2 x the port load of its prefix``, ``<= f_k + 4 f_k``.

Starts-After: :func:`~coflowopt.lp.ordering_lp` ignores the edges (its optimum stays a lower
bound), so on a DAG instance the order is that LP's on the coflows alone, and the list
scheduling honours the edges through eligibility (a not-yet-eligible flow never blocks
anyone, so no deadlock).  The factors are claimed only on single-stage instances.

The LP has one column per pair of coflows (``N (N-1) / 2``) and ``2m N`` rows of up to ``N``
entries each; ``benchmarks/bench_fair_family.py`` measures how large an instance it solves
within the time limit.  A solve that does not reach optimality is a one-line error naming
the status, never a schedule from a partial order.
"""

from __future__ import annotations

from collections import namedtuple
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from coflowopt._jit import njit
from coflowopt.model import Instance
from coflowopt.params import Params
from coflowopt.schedule import Schedule
from coflowopt.schedulers.lp_phases import Phases, value_above
from coflowopt.schedulers.registry import SolverStopped
from coflowopt.sim.events import (
    admission_heap,
    heap_pop,
    heap_push,
    iheap_pop,
    iheap_push,
    mark_once,
    release_successors,
)
from coflowopt.sim.sink import Outcome, RateSink

__all__ = ["ApproximateParams", "FlowTimes", "LPNotSolved", "list_schedule", "run_approximate"]


class LPNotSolved(SolverStopped, RuntimeError):
    """The ordering LP did not reach optimality (``time_limit``, solver error) or was refused
    as too large (``max_nonzeros``); the message says which and on how many coflows."""


@dataclass(frozen=True)
class ApproximateParams(Params):
    """``time_limit``: seconds for the ordering LP (the run fails with a one-line error when
    it is not solved to optimality in time); ``backend``: the LP back-end of
    :func:`coflowopt.lp.solve`; ``lp_solver``: HiGHS's method (``highs`` back-end only):
    ``ipm`` (default, [C]: interior point with crossover, 8x faster than HiGHS's own choice
    on 100 FB2010 coflows released at 0), ``simplex`` or ``choose`` (HiGHS decides);
    ``max_nonzeros``: refuse (one line) an LP with more constraint nonzeros than this, before
    building it (``ports with load x N^2`` for ``N`` coflows; HiGHS's interior point takes
    about 70 bytes each: FB2010's 526 coflows on 294 loaded ports, 8.1e7, took 5.5 GB, so
    the default 1e8, which FB2010 stays under, is about 7 GB)."""

    time_limit: float = 600.0
    backend: Literal["highs", "scipy", "pulp"] = "highs"
    lp_solver: Literal["ipm", "simplex", "choose"] = "ipm"
    max_nonzeros: float = 1e8

    def check(self) -> None:
        if not self.time_limit > 0:
            raise ValueError(f"approximate: time_limit must be > 0 seconds, got "
                             f"{self.time_limit}")
        if not self.max_nonzeros > 0:
            raise ValueError(f"approximate: max_nonzeros must be > 0, got {self.max_nonzeros}")


# -- the list-scheduling kernel ----------------------------------------------------------------

#: what the list-scheduling kernel returns: per flow its ``start``, ``end`` (NaN for a flow
#: without data) and ``rate`` (0 for a flow without data)
FlowTimes = namedtuple("FlowTimes", ["start", "end", "rate"])


@njit(cache=True)
def _head(h, hptr, hn, p, lst, started):
    """List position of the first waiting flow on port ``p`` (-1 if none), dropping the
    started flows from the top of its heap."""
    while hn[p] > 0 and started[lst[h[hptr[p]]]]:
        hn[p] = iheap_pop(h[hptr[p]:], hn[p])
    return h[hptr[p]] if hn[p] > 0 else -1


@njit(cache=True)
def _list_schedule(lst, cptr, corder, src, dst, vol, fcof, release, npred, sptr, succ,
                   cap_in, cap_out):
    """Non-preemptive list scheduling of flows (module docstring, step 3).

    The rule "both ports idle and no earlier-listed waiting flow shares a port" says exactly
    that a flow starts when it is the first waiting flow (lowest list position) on both of its
    ports and both are idle.  So each port keeps a min-heap of the list positions of its
    waiting flows (a coflow's flows enter when it becomes eligible), and at an event only the
    heads of the ports whose state changed (freed, or a new waiting flow) are candidates:
    ``O((F + events) log F)`` instead of a scan of the list at every event.  Ports are
    ``0..m-1`` ingress, ``m..2m-1`` egress.  Returns :class:`FlowTimes`.

    Admission is the shared skeleton's (:func:`~coflowopt.sim.events.admission_heap`,
    :func:`~coflowopt.sim.events.release_successors`); time moves without
    :func:`~coflowopt.sim.events.next_breakpoint`: each flow is one segment at one rate, so
    the breakpoints are its start and end times, taken after the loop."""
    F = lst.shape[0]
    n = release.shape[0]
    m = cap_in.shape[0]
    pos = np.empty(F, dtype=np.int64)
    for i in range(F):
        pos[lst[i]] = i
    start = np.full(F, np.nan)
    end = np.full(F, np.nan)
    rate = np.zeros(F)
    left = np.zeros(n, dtype=np.int64)
    started = np.zeros(F, dtype=np.bool_)
    hptr = np.zeros(2 * m + 1, dtype=np.int64)
    for f in range(F):
        if vol[f] > 0.0:
            left[fcof[f]] += 1
            hptr[src[f] + 1] += 1
            hptr[m + dst[f] + 1] += 1
        else:
            started[f] = True  # nothing to send: never waits, never blocks
    for p in range(2 * m):
        hptr[p + 1] += hptr[p]
    h = np.empty(hptr[2 * m], dtype=np.int64)
    hn = np.zeros(2 * m, dtype=np.int64)
    busy = np.full(2 * m, -np.inf)
    dirty = np.zeros(2 * m, dtype=np.bool_)
    dlist = np.empty(2 * m, dtype=np.int64)
    nd = 0
    pending = npred.copy()
    ek, ev, ne = admission_heap(pending, release)
    rk = np.empty(F)
    rv = np.empty(F, dtype=np.int64)
    nr = 0
    done = 0
    t = ek[0] if ne > 0 else 0.0
    while done < n:
        # everything that happens at t: completions, then eligibility (a completion at t can
        # make a successor eligible at t)
        changed = True
        while changed:
            changed = False
            while nr > 0 and rk[0] <= t:
                f = rv[0]
                nr = heap_pop(rk, rv, nr)
                for p in (src[f], m + dst[f]):
                    nd = mark_once(p, dirty, dlist, nd)
                c = fcof[f]
                left[c] -= 1
                if left[c] == 0:
                    done += 1
                    ne = release_successors(c, t, sptr, succ, pending, release, ek, ev, ne)
                changed = True
            while ne > 0 and ek[0] <= t:
                c = ev[0]
                ne = heap_pop(ek, ev, ne)
                for k in range(cptr[c], cptr[c + 1]):
                    f = corder[k]
                    if vol[f] > 0.0:
                        for p in (src[f], m + dst[f]):
                            hn[p] = iheap_push(h[hptr[p]:], hn[p], pos[f])
                            nd = mark_once(p, dirty, dlist, nd)
                if left[c] == 0:  # nothing to send
                    done += 1
                    ne = release_successors(c, t, sptr, succ, pending, release, ek, ev, ne)
                changed = True
        if done >= n:
            break
        # only the head of a port whose state changed can start now
        for i in range(nd):
            p = dlist[i]
            dirty[p] = False
            if busy[p] > t:
                continue
            hp = _head(h, hptr, hn, p, lst, started)
            if hp < 0:
                continue
            f = lst[hp]
            a = src[f]
            b = m + dst[f]
            q = b if p == a else a
            if busy[q] > t or _head(h, hptr, hn, q, lst, started) != hp:
                continue
            r = min(cap_in[a], cap_out[b - m])
            e = t + vol[f] / r
            start[f] = t
            end[f] = e
            rate[f] = r
            started[f] = True
            busy[a] = e
            busy[b] = e
            nr = heap_push(rk, rv, nr, e, f)
        nd = 0
        tn = np.inf
        if nr > 0:
            tn = rk[0]
        if ne > 0 and ek[0] < tn:
            tn = ek[0]
        if tn == np.inf:
            break  # unreachable: something is always running or pending
        t = tn
    return FlowTimes(start, end, rate)


def list_schedule(instance: Instance, order: Any) -> Schedule:
    """Step 3 on a given coflow ``order`` (positions, first first): each flow served
    non-preemptively at full port rate, one segment per flow.  Honours releases and
    Starts-After edges.  The schedule is not validated here."""
    inst = instance
    n = inst.n_coflows
    o = np.asarray(order, dtype=np.int64).ravel()
    if o.size != n or not np.array_equal(np.sort(o), np.arange(n)):
        raise ValueError(f"approximate: order must be a permutation of the {n} coflow "
                         f"positions, got {o.size} entries")
    rank = np.empty(n, dtype=np.int64)
    rank[o] = np.arange(n)
    fpos = np.arange(inst.n_flows)
    lst = np.lexsort((fpos, rank[inst.flow_coflow])).astype(np.int64)
    pptr, _ = inst.predecessors_ptr
    sptr, succ = inst.successors_ptr
    ft = _list_schedule(
        lst, np.asarray(inst.coflow_flows_ptr, dtype=np.int64),
        np.asarray(inst.coflow_flow_order, dtype=np.int64),
        inst.flow_src.astype(np.int64), inst.flow_dst.astype(np.int64),
        np.ascontiguousarray(inst.flow_volume, dtype=np.float64),
        inst.flow_coflow.astype(np.int64), np.ascontiguousarray(inst.release, dtype=np.float64),
        np.diff(pptr).astype(np.int64), np.asarray(sptr, dtype=np.int64),
        np.asarray(succ, dtype=np.int64),
        np.ascontiguousarray(inst.fabric.capacity_in, dtype=np.float64),
        np.ascontiguousarray(inst.fabric.capacity_out, dtype=np.float64))
    start, end, rate = ft.start, ft.end, ft.rate
    run = np.flatnonzero(rate > 0)
    t0 = float(min(0.0, inst.release.min())) if n else 0.0
    if run.size == 0:
        return Schedule.empty(t0)
    bps = np.unique(np.concatenate([[t0], start[run], end[run]]))
    first = np.searchsorted(bps, start[run])
    last = np.searchsorted(bps, end[run])
    return Schedule.from_segments(bps, run, rate[run], first, last)


def run_approximate(instance: Instance, params: ApproximateParams, sink: RateSink, *,
                    seed: Any = None, progress: Any = None) -> Outcome:
    """Shafiee-Ghaderi's "Approximate" (module docstring): the ordering LP's ``f_k``
    ascending, then non-preemptive list scheduling of flows at full port rate.
    Deterministic (``seed`` unused).  ``meta``: ``lp_value`` (a lower bound on
    ``sum_k w_k C_k``), ``lp_seconds``, ``lp_f`` (the ``f_k``), ``order``."""
    from coflowopt.lp import SolveParams, ordering_lp

    p = params
    inst = instance
    if inst.n_coflows == 0:
        return sink.outcome(Schedule.empty())
    n = inst.n_coflows
    busy = np.union1d(inst.flow_src[inst.flow_volume > 0],
                      inst.flow_dst[inst.flow_volume > 0] + inst.ports).size
    nnz = float(busy) * n * n  # one row per (loaded port, coflow), up to n entries each
    if nnz > p.max_nonzeros:
        raise LPNotSolved(
            f"approximate: the ordering LP on {n} coflows would have about {nnz:.2g} "
            f"constraint nonzeros ({busy} loaded ports x {n}^2), over max_nonzeros = "
            f"{p.max_nonzeros:.2g}; it is not built (raise max_nonzeros, about 70 bytes each, "
            f"to build it: -p max_nonzeros={value_above(nnz)})")
    say = Phases("approximate", progress, nnz)
    say(f"building the ordering LP on {n} coflows (about {nnz:.2g} nonzeros)")
    opts = {"solver": p.lp_solver} if p.backend == "highs" else None
    solver = f"HiGHS {p.lp_solver}" if p.backend == "highs" else p.backend
    lp = ordering_lp(inst, SolveParams(time_limit=p.time_limit, options=opts),
                     backend=p.backend,
                     on_model=lambda m: say.model("ordering LP", m, p.time_limit, solver))
    if not lp.optimal or lp.order is None:
        why = f": {lp.result.message}" if lp.result.message else ""
        hint = ("; raise time_limit to solve it"
                if lp.result.status.value in ("time_limit", "feasible") else "")
        raise LPNotSolved(
            f"approximate: the ordering LP on {n} coflows ended "
            f"{lp.result.status.value} after {lp.result.runtime:.1f} s (time_limit = "
            f"{p.time_limit:g} s, backend {p.backend}){why}{hint}".replace("\n", " "))
    say(f"LP solved in {lp.result.runtime:.1f} s (value {lp.value:.6g}); rounding: "
        "non-preemptive list scheduling of the flows in LP order")
    out = list_schedule(inst, lp.order)
    out.meta.update({"scheduler": "approximate",
                     "params": {"time_limit": p.time_limit, "backend": p.backend,
                                "lp_solver": p.lp_solver},
                     "lp_value": float(lp.value), "lp_seconds": float(lp.result.runtime),
                     "lp_f": lp.C, "order": lp.order,
                     "dag_order": "LP on the coflows ignoring Starts-After edges"
                     if inst.starts_after.size else None})
    return sink.outcome(out)
