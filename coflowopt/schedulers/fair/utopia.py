"""Utopia-like (reconstructed): near-optimal average CCT with an isolation guarantee against a
fair scheme ([C]; the fairness reference, ref. [10], of De Pellegrini et al., "Fair Coflow
Scheduling via Controlled Slowdown", IEEE TPDS 2022).

The paper's mechanism is not available; only its abstract is: no coflow finishes
more than a constant after its CCT under HUG/DRF-style fair sharing.  Our reconstruction
([C], the GPS -> WFQ pattern):

1. **Fair emulation** (virtual fluid system).  Every active coflow ``j`` gets the same
   progress ``P = 1 / max_l sum_{active j} d_lj`` with ``d_lj = (p_lj / B_l) / Gamma_j`` the
   normalised demand of its *remaining* volumes (HUG's optimal isolation guarantee,
   Chowdhury, Liu, Ghodsi, Stoica, NSDI 2016), recomputed at arrivals and virtual
   departures: flow ``i`` of ``j`` runs at ``P v_i(t) / Gamma_j(t)``.  This yields each
   coflow's fair completion ``C_j^fair``.
2. **Service** in ascending ``C_j^fair`` with the order-preserving allocator (Sincronia,
   Agarwal et al., SIGCOMM 2018; ``allocation="greedy"``) or MADD + backfill
   (``allocation="madd"``).
3. **Report** ``C_j - C_j^fair`` (:func:`isolation_violation`).

Why one fixed priority is exact (and why it is computed in ``O((N + E) M)`` without touching
flows).  In the emulation every flow of ``j`` runs at ``P v_i(t) / Gamma_j(t)``, so all flows
of ``j`` lose the same fraction of their remaining volume per unit time: the remaining
volumes stay proportional to the original ones, ``v_i(t) = x_j(t) v_i`` with
``Gamma_j(t) = x_j(t) C_j^0``.  Hence (a) ``d_lj`` never changes (it is scale invariant), so
``P(t)`` depends only on *which* coflows are active, and (b) ``dx_j / dt = -P(t) / C_j^0``:
coflow ``j`` finishes when the *virtual time* ``V(t) = int_0^t P(s) ds`` (common to all
coflows) has grown by ``C_j^0`` since its arrival ``a_j``.  Its finish tag
``F_j = V(a_j) + C_j^0`` is fixed at arrival, and since ``V`` is non-decreasing,
``C_j^fair = min{t : V(t) >= F_j}`` is monotone in ``F_j``.  A later arrival changes ``P``
for everyone alike (equal progress rates), so it changes the *values* ``C_j^fair`` of the
coflows already present but never their relative order, and it enters with its own tag.
Therefore ranking the active coflows by the ``C_j^fair`` computed once over the whole
arrival sequence is the same as re-running the emulation at every arrival on the coflows
seen so far and ranking by the predicted ``C_j^fair`` (``tests`` check both the tags and the
schedules), and Utopia runs as a fixed per-coflow priority on the compiled order-preserving
engine, streaming into the validator.

Starts-After (DAG) instances: in the emulation a coflow arrives at
``max(r_j, max_pred C_pred^fair)`` (the fair system's own precedence); the served system
honours the real predecessors' completions (the engine).  The equivalence above is then exact
only for single-stage instances: when a real predecessor finishes before its fair completion,
the successor's tag looks ahead in the emulation ([C]).

Units: the instance's (time and volume per time unit of the fabric's capacities).
"""

from __future__ import annotations

import math
from collections import namedtuple
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from coflowopt._jit import njit
from coflowopt.model import Instance
from coflowopt.params import Params
from coflowopt.sim.drive import order_schedule
from coflowopt.sim.events import admission_heap, heap_pop, heap_push, release_successors
from coflowopt.sim.sink import Outcome, RateSink
from coflowopt.validate import ValidSchedule

__all__ = [
    "FairEmulation",
    "UtopiaParams",
    "fair_emulation",
    "isolation_violation",
    "normalized_demands",
    "run_utopia",
]


@dataclass(frozen=True)
class UtopiaParams(Params):
    """``allocation``: how the order becomes rates: ``greedy`` (order-preserving greedy of
    Sincronia, SIGCOMM 2018; compiled engine, streams) or ``madd`` (MADD + work-conserving
    backfill, reference engine); ``engine``: ``fast`` (compiled, where the allocation has a
    kernel) or ``reference``."""

    allocation: Literal["greedy", "madd"] = "greedy"
    engine: Literal["fast", "reference"] = "fast"


@dataclass(frozen=True)
class FairEmulation:
    """The fair (HUG/DRF equal-progress) emulation of an instance.

    ``c_fair``: fair completion time ``C_j^fair`` of each coflow (absolute); ``arrival``:
    arrival ``a_j`` in the fair system (release, or the fair completion of the last
    Starts-After predecessor); ``tag``: finish tag ``F_j = V(a_j) + C_j^0`` (virtual time);
    ``events``: arrivals plus departures processed."""

    c_fair: np.ndarray
    arrival: np.ndarray
    tag: np.ndarray
    events: int


def normalized_demands(instance: Instance) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                    np.ndarray]:
    """Per coflow, its ports and normalised demands ``d_lj = (p_lj / B_l) / C_j^0`` as CSR
    ``(ptr, port, d)`` (ports ``0..m-1`` ingress, ``m..2m-1`` egress; only ports with load)
    and its isolation time ``C_j^0`` (time units).  numpy only (no scipy)."""
    inst = instance
    m, C = inst.ports, inst.n_coflows
    live = inst.flow_volume > 0
    allv = bool(live.all())  # skip the masked copies in the common case
    fc = inst.flow_coflow.astype(np.int64) if allv else inst.flow_coflow[live].astype(np.int64)
    fc *= 2 * m
    vol = inst.flow_volume if allv else inst.flow_volume[live]
    sides = ((0, inst.flow_src), (m, inst.flow_dst))
    if C * 2 * m <= 2_000_000:
        dense = np.zeros(C * 2 * m)
        for off, col in sides:  # one side at a time: two flow-length temporaries at most
            dense += np.bincount(fc + (off + (col if allv else col[live])), weights=vol,
                                 minlength=C * 2 * m)
        keys = np.flatnonzero(dense > 0)
        load = dense[keys]
    else:  # a sparse sum when the dense coflow x port table would be large
        key = np.concatenate([fc + (off + (col if allv else col[live])) for off, col in sides])
        keys, inv = np.unique(key, return_inverse=True)
        load = np.bincount(inv, weights=np.concatenate([vol, vol]))
    coflow = keys // (2 * m)
    port = keys % (2 * m)
    cap = np.concatenate([inst.fabric.capacity_in, inst.fabric.capacity_out])
    t = load / cap[port]
    ptr = np.zeros(C + 1, dtype=np.int64)
    np.cumsum(np.bincount(coflow, minlength=C), out=ptr[1:])
    c0 = np.zeros(C)
    has = ptr[1:] > ptr[:-1]
    if has.any():  # keys are sorted by coflow
        c0[has] = np.maximum.reduceat(t, ptr[:-1][has])
    d = t / c0[coflow]
    return ptr, port.astype(np.int64), d, c0


# -- the emulation kernel ----------------------------------------------------------------------

#: what the emulation kernel returns: the fields of :class:`FairEmulation`
Emulated = namedtuple("Emulated", ["c_fair", "arrival", "tag", "events"])


@njit(cache=True)
def _emulate(release, c0, dptr, dport, dval, n_ports, npred, sptr, succ):
    """The equal-progress fluid system on finish tags (module docstring).  Returns
    :class:`Emulated`.  Admission is the shared skeleton's; time moves by departures on
    virtual time (no breakpoints are recorded: only each coflow's ``C_j^fair`` is kept)."""
    n = release.shape[0]
    c_fair = np.full(n, np.nan)
    arrival = np.full(n, np.nan)
    tag = np.full(n, np.nan)
    pending = npred.copy()
    ak, av, na = admission_heap(pending, release)
    dk = np.empty(n)
    dv = np.empty(n, dtype=np.int64)
    nd = 0
    S = np.zeros(n_ports)
    prog = 0.0
    V = 0.0
    t = -np.inf
    done = 0
    events = 0
    while done < n:
        ta = ak[0] if na > 0 else np.inf
        td = np.inf
        if nd > 0:
            td = t + max(dk[0] - V, 0.0) / prog
        if na == 0 and nd == 0:
            break  # unreachable on an acyclic instance
        events += 1
        if ta <= td:
            c = av[0]
            na = heap_pop(ak, av, na)
            if nd > 0:
                V += prog * (ta - t)
            t = max(t, ta)
            arrival[c] = t
            if c0[c] <= 0.0:  # nothing to send: done on arrival
                tag[c] = V
                c_fair[c] = t
                done += 1
                na = release_successors(c, t, sptr, succ, pending, release, ak, av, na)
                continue
            tag[c] = V + c0[c]
            nd = heap_push(dk, dv, nd, tag[c], c)
            for k in range(dptr[c], dptr[c + 1]):
                S[dport[k]] += dval[k]
        else:
            c = dv[0]
            nd = heap_pop(dk, dv, nd)
            t = td
            V = max(V, tag[c])
            c_fair[c] = t
            done += 1
            if nd == 0:
                S[:] = 0.0  # drop the round-off of the subtractions
            else:
                for k in range(dptr[c], dptr[c + 1]):
                    S[dport[k]] = max(S[dport[k]] - dval[k], 0.0)
            na = release_successors(c, t, sptr, succ, pending, release, ak, av, na)
        if nd > 0:
            top = 0.0
            for p in range(n_ports):
                if S[p] > top:
                    top = S[p]
            prog = 1.0 / top
    return Emulated(c_fair, arrival, tag, events)


def fair_emulation(instance: Instance) -> FairEmulation:
    """Emulate HUG/DRF equal-progress fair sharing on ``instance`` (module docstring, step 1):
    every active coflow progresses at ``P = 1 / max_l sum_active d_lj`` of its isolation speed,
    recomputed at arrivals and virtual departures.  Exact (event-driven on finish tags, no
    time step); ``O((N + E) M + F)`` for ``N`` coflows, ``E`` Starts-After edges, ``M``
    ports and ``F`` flows."""
    inst = instance
    ptr, port, d, c0 = normalized_demands(inst)
    pptr, _ = inst.predecessors_ptr
    sptr, succ = inst.successors_ptr
    em = _emulate(
        np.ascontiguousarray(inst.release, dtype=np.float64), c0, ptr, port, d,
        2 * inst.ports, np.diff(pptr).astype(np.int64), np.asarray(sptr, dtype=np.int64),
        np.asarray(succ, dtype=np.int64))
    return FairEmulation(em.c_fair, em.arrival, em.tag, int(em.events))


def isolation_violation(valid: ValidSchedule) -> np.ndarray:
    """Per coflow, ``C_j - C_j^fair``: how much later than under the fair emulation it
    completed (negative: earlier).  ``C_j^fair`` is taken from ``valid.meta["c_fair"]`` (a
    Utopia run puts it there) or, for any other validated schedule, emulated on
    ``valid.instance``; so this measures the isolation violation of any scheduler."""
    if not isinstance(valid, ValidSchedule):
        raise TypeError(f"isolation_violation: expected a ValidSchedule (coflowopt.validate), "
                        f"got {type(valid).__name__}")
    cf = valid.meta.get("c_fair")
    if cf is None or np.shape(cf) != (valid.instance.n_coflows,):
        cf = fair_emulation(valid.instance).c_fair
    return valid.coflow_completion - np.asarray(cf, dtype=np.float64)


def run_utopia(instance: Instance, params: UtopiaParams, sink: RateSink, *, seed: Any = None,
               progress: Any = None) -> Outcome:
    """Utopia-like (reconstructed, [C]): serve coflows in ascending fair completion time
    ``C_j^fair`` of the equal-progress emulation (:func:`fair_emulation`) with the
    order-preserving allocator.  Deterministic (``seed`` unused).  ``meta["c_fair"]`` holds
    ``C_j^fair`` for :func:`isolation_violation`."""
    p = params
    em = fair_emulation(instance)
    out = order_schedule(instance, priority=em.c_fair, allocation=p.allocation,
                         engine=p.engine, check=sink.check, progress=progress)
    max_tag = float(np.nanmax(em.tag)) if em.tag.size else 0.0
    out.meta.update({"scheduler": "utopia", "reconstructed": True,
                     "params": {"allocation": p.allocation, "engine": p.engine},
                     "c_fair": em.c_fair, "fair_events": em.events,
                     "fair_virtual_end": max_tag if math.isfinite(max_tag) else None})
    return sink.outcome(out)
