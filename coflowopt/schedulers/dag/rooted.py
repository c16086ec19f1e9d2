"""DMA-SRT (one rooted tree, Shafiee-Ghaderi Algorithm 3) and DMA-RT (many rooted trees),
Section V; spec dag-coflows section 5.

DMA-SRT, our always-feasible version (spec 5.2; skeleton [S], details [R]/[P]), for one job
whose DAG is a fan-in tree (root ``R_j``, leaves ``S_0``):

1. every coflow ``c`` by BNA in ``eff_c`` slots, cut into ``n_c = ceil(eff_c / l_I)`` pieces of
   ``l_I`` consecutive slots (the last may be shorter); piece ``q`` is the matrix ``B_{c,q}``;
2. the path sub-jobs ``P_j``: one path from every leaf to the root (ordered by leaf position
   [P]);
3. path delays ``Y_p`` uniform on ``{0, .., floor(Delta_j / (beta l_I))}`` intervals [P],
   drawn in path order;
4. candidate starts along ``p = (c_1, .., c_L)``: ``t_{c_1,p} = Y_p``,
   ``t_{c_{a+1},p} = t_{c_a,p} + n_{c_a}``;
5. real starts in topological order: ``ready(c) = max_u (t_u + n_u)`` over the in-neighbours
   (0 for a leaf), ``t_c = min { t_{c,p} : p contains c, t_{c,p} >= ready(c) }`` (never empty);
6. interval ``k`` holds ``D_k = sum_{t_c <= k < t_c + n_c} B_{c, k - t_c}`` and becomes
   ``BNA(D_k)`` (``eff(D_k)`` slots; real-first, flows of a pair by flow index); empty
   intervals are skipped.

``l_I`` [P]: an integer (default 1, the finest) or ``"sqrt"``: ``max(1, round(max(Delta_j,
T_j) / sqrt(mu_j)))`` (the theory-motivated scale, spec 5.2 [R]).  A fan-out tree [P] (5.3):
reverse the edges, schedule the fan-in tree, reverse the order of the slots.
Theorem 3 [S]: ``O(sqrt(mu) h(m, mu))`` times the optimal makespan.

DMA-RT (spec 5.4 [S; section V-B guessed]): DMA-SRT on every job separately (the isolated
schedules), then DMA's steps 2-4 (:func:`coflowopt.schedulers.dag.dma.delay_and_merge`) with
``Delta`` of all jobs.  Theorem 4 [S]: ``O(sqrt(mu) g(m) h(m, mu))``.

Both are makespan algorithms with every job available at the start [R]; units [P]: slots of
``quantum / c`` time units (:mod:`coflowopt.schedulers.dag.slots`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from coflowopt.model import Instance, topological_order
from coflowopt.params import Params
from coflowopt.schedule import Schedule
from coflowopt.schedulers.dag.bna import bna_items, bna_plan, merge_pieces
from coflowopt.schedulers.dag.dma import (
    _check_beta,
    _rank,
    _run_eff,
    _split_runs,
    aggregate_slots,
    delay_and_merge,
    draw_delays,
    job_topological_order,
    release_refusal,
)
from coflowopt.schedulers.dag.slots import (
    SlotPlan,
    finishes_before_refusal,
    label,
    run_plan,
    slot_demand,
    slot_length,
    uniform_fabric_refusal,
)
from coflowopt.validate import Tolerance, ValidSchedule
from coflowopt.workloads.dags import _job_graph, is_rooted_tree

__all__ = [
    "DMARTParams",
    "DMASRTParams",
    "dma_rt_plan",
    "dma_srt_plan",
    "interval_length",
    "not_rooted_tree_reason",
    "rooted_tree_kind",
    "run_dma_rt",
    "run_dma_srt",
    "supports_dma_rt",
    "supports_dma_srt",
]

_I64 = np.int64
_INV_E = 1.0 / math.e


def rooted_tree_kind(instance: Instance, job: int) -> Literal["fan-in", "fan-out"] | None:
    """``"fan-in"`` / ``"fan-out"`` when job position ``job``'s DAG is a rooted tree (spec 1.4
    [P]; a path is ``"fan-in"``), else ``None``
    (:func:`coflowopt.workloads.dags.is_rooted_tree`)."""
    return is_rooted_tree(instance, job)


def not_rooted_tree_reason(instance: Instance, job: int) -> str | None:
    """Why job position ``job`` is not a rooted tree (one line naming the job), or ``None``."""
    if rooted_tree_kind(instance, job) is not None:
        return None
    nodes, e = _job_graph(instance, job)
    n = nodes.size
    name = f"job {label(instance.job_id[job])!r}"
    if n == 0:
        return f"{name} has no coflows, so it is no rooted tree"
    if e.shape[0] != n - 1:
        return (f"{name} is not a rooted tree: {e.shape[0]} Starts-After edges for {n} "
                f"coflows (a tree has {n - 1})")
    outd = np.bincount(e[:, 0], minlength=n)
    ind = np.bincount(e[:, 1], minlength=n)
    if (outd <= 1).all() or (ind <= 1).all():
        return f"{name} is not a rooted tree: its DAG is not weakly connected"
    a, b = int(np.argmax(outd)), int(np.argmax(ind))
    ca, cb = label(instance.coflow_id[nodes[a]]), label(instance.coflow_id[nodes[b]])
    return (f"{name} is not a rooted tree: its edges point neither all toward one root nor all "
            f"away from it (coflow {ca!r} has {outd[a]} successors, coflow {cb!r} {ind[b]} "
            "predecessors)")


def _eff_slots(instance: Instance, c: int, demand: np.ndarray) -> int:
    f = instance.flows_of(c)
    d = demand[f]
    if d.size == 0 or d.max() <= 0:
        return 0
    m = instance.ports
    li = np.bincount(instance.flow_src[f], weights=d, minlength=m)
    lo = np.bincount(instance.flow_dst[f], weights=d, minlength=m)
    return int(max(li.max(), lo.max()))


def _tree(instance: Instance, job: int, kind: str) -> tuple[np.ndarray, dict[int, int]]:
    """The job's coflows with children before parents, and ``parent`` toward the root (for a
    fan-out tree: of the reversed tree)."""
    topo = job_topological_order(instance)
    nodes = topo[instance.coflow_job[topo] == job]
    parent: dict[int, int] = {}
    for a, b in instance.starts_after.tolist():
        if instance.coflow_job[a] != job:
            continue
        if kind == "fan-in":
            parent[a] = b
        else:
            parent[b] = a
    return (nodes if kind == "fan-in" else nodes[::-1]), parent


def interval_length(instance: Instance, job: int, demand: np.ndarray, l_I: int | str) -> int:
    """``l_I`` in slots: the integer given, or for ``"sqrt"`` [P]
    ``max(1, round(max(Delta_j, T_j) / sqrt(mu_j)))`` (``Delta_j``, ``T_j`` in slots)."""
    if isinstance(l_I, str):
        if l_I != "sqrt":
            raise ValueError(f"l_I: expected a positive integer or 'sqrt', got {l_I!r}")
        nodes, e = _job_graph(instance, job)
        eff = np.array([_eff_slots(instance, int(c), demand) for c in nodes], dtype=_I64)
        # longest path with node weights eff, over the local topological order
        order = topological_order(nodes.size, e)
        fin = eff.copy()
        preds: dict[int, list[int]] = {}
        for a, b in e.tolist():
            preds.setdefault(b, []).append(a)
        for v in (order if order is not None else []):
            if v in preds:
                fin[v] = eff[v] + max(fin[p] for p in preds[v])
        T = int(fin.max()) if fin.size else 0
        delta = aggregate_slots(instance, np.array([job]), demand)
        return max(1, round(max(delta, T) / math.sqrt(max(nodes.size, 1))))
    if isinstance(l_I, bool) or int(l_I) != l_I or l_I < 1:
        raise ValueError(f"l_I: expected a positive integer or 'sqrt', got {l_I!r}")
    return int(l_I)


def dma_srt_plan(instance: Instance, job: int, demand: np.ndarray, *, rng: np.random.Generator,
                 beta: float = 1.0, l_I: int | str = 1, rule: str = "maxweight",
                 path_delays: np.ndarray | None = None) -> SlotPlan:
    """DMA-SRT (Algorithm 3; spec 5.2, fan-out by reversal 5.3) of job position ``job`` (a
    rooted tree) from slot 0, releases ignored.  ``path_delays``: explicit ``Y_p`` (intervals)
    per leaf-to-root path, paths ordered by leaf position, instead of drawing them."""
    _check_beta(beta)
    kind = rooted_tree_kind(instance, job)
    if kind is None:
        raise ValueError(f"dma-srt: {not_rooted_tree_reason(instance, job)}")
    lI = interval_length(instance, job, demand, l_I)
    order, parent = _tree(instance, job, kind)
    if order.size == 0:
        return SlotPlan.empty()
    # 1. BNA per coflow, in pieces of lI slots
    plans = {int(c): bna_plan(instance, np.array([c]), demand, rule=rule) for c in order}
    n_c = {c: -(-p.makespan // lI) for c, p in plans.items()}
    # 2. paths from every leaf (no child) to the root, by leaf position
    has_child = set(parent.values())
    leaves = sorted(c for c in plans if c not in has_child)
    paths = []
    for leaf in leaves:
        p = [leaf]
        while p[-1] in parent:
            p.append(parent[p[-1]])
        paths.append(p)
    # 3. path delays
    if path_delays is None:
        delta = aggregate_slots(instance, np.array([job]), demand)
        hi = math.floor(delta / (beta * lI) + 1e-12)
        Y = rng.integers(0, hi + 1, size=len(paths))
    else:
        Y = np.asarray(path_delays, dtype=_I64).reshape(-1)
        if Y.size != len(paths) or (Y < 0).any():
            raise ValueError(f"path_delays: need {len(paths)} non-negative delays (one per "
                             f"leaf-to-root path), got {Y.tolist()}")
    # 4. candidates
    cand: dict[int, list[int]] = {}
    for p, y in zip(paths, Y.tolist(), strict=True):
        t = int(y)
        for c in p:
            cand.setdefault(c, []).append(t)
            t += n_c[c]
    # 5. real starts, children before parents
    children: dict[int, list[int]] = {}
    for a, b in parent.items():
        children.setdefault(b, []).append(a)
    start: dict[int, int] = {}
    for c in order.tolist():
        ready = max((start[u] + n_c[u] for u in children.get(c, [])), default=0)
        start[c] = min(t for t in cand[c] if t >= ready)
    # 6. intervals: the items (flow, slots) of every coflow's piece, by interval
    if lI == 1:
        plan = _resolve_unit_intervals(
            instance, np.concatenate([p.flow for p in plans.values()]),
            np.concatenate([p.start + start[c] for c, p in plans.items()]),
            np.concatenate([p.end + start[c] for c, p in plans.items()]), rule)
        if kind == "fan-out":
            T = plan.makespan
            plan = SlotPlan(plan.flow, T - plan.end, plan.length)
        return plan
    fl, iv, amt = [], [], []
    for c, p in plans.items():
        if p.n_pieces == 0:
            continue
        a = p.start // lI
        b = (p.end - 1) // lI
        span = b - a + 1
        rep = np.repeat(np.arange(p.n_pieces), span)
        q = np.repeat(a - (np.cumsum(span) - span), span) + np.arange(int(span.sum()))
        lo = np.maximum(p.start[rep], q * lI)
        hi_ = np.minimum(p.end[rep], (q + 1) * lI)
        fl.append(p.flow[rep])
        iv.append(q + start[c])
        amt.append(hi_ - lo)
    plan = _resolve_intervals(instance, np.concatenate(fl), np.concatenate(iv),
                              np.concatenate(amt), rule)
    if kind == "fan-out":
        T = plan.makespan
        plan = SlotPlan(plan.flow, T - plan.end, plan.length)
    return plan


def _resolve_intervals(instance: Instance, flow: np.ndarray, interval: np.ndarray,
                       amount: np.ndarray, rule: str) -> SlotPlan:
    """Step 6: every interval's items (``flow`` needs ``amount`` slots) by BNA of their
    matrix, the intervals one after another, empty ones skipped."""
    # one item per (interval, flow)
    key = interval * instance.n_flows + flow
    uk, inv = np.unique(key, return_inverse=True)
    amount = np.bincount(inv, weights=amount).astype(_I64)
    interval, flow = uk // instance.n_flows, uk % instance.n_flows
    cut = np.flatnonzero(np.r_[True, interval[1:] != interval[:-1], True])
    src, dst = instance.flow_src[flow].astype(_I64), instance.flow_dst[flow].astype(_I64)
    # an interval whose items share no port: each item as is, eff = its largest amount
    m = instance.ports
    n_iv = cut.size - 1
    gid = np.repeat(np.arange(n_iv), np.diff(cut))
    shared = np.zeros(n_iv, bool)
    for port in (src, dst + m):
        k2 = gid * (2 * m) + port
        srt = np.sort(k2)
        dup = srt[1:][srt[1:] == srt[:-1]]
        shared[np.unique(dup // (2 * m))] = True
    out_f, out_s, out_n = [], [], []
    at = 0
    for g in range(n_iv):
        a, b = int(cut[g]), int(cut[g + 1])
        if not shared[g]:
            out_f.append(flow[a:b])
            out_s.append(np.full(b - a, at, dtype=_I64))
            out_n.append(amount[a:b])
            at += int(amount[a:b].max())
            continue
        item, s, ln, eff = bna_items(src[a:b], dst[a:b], amount[a:b], rule=rule)
        out_f.append(flow[a:b][item])
        out_s.append(at + s)
        out_n.append(ln)
        at += eff
    if not out_f:
        return SlotPlan.empty()
    f, s, ln = merge_pieces(np.concatenate(out_f), np.concatenate(out_s),
                            np.concatenate(out_n))
    return SlotPlan(f, s, ln)


def _resolve_unit_intervals(instance: Instance, flow: np.ndarray, start: np.ndarray,
                            end: np.ndarray, rule: str) -> SlotPlan:
    """Step 6 for ``l_I = 1`` without one item per slot: piece ``i`` of ``flow[i]`` covers
    intervals ``start[i]..end[i]-1``.  Over a run of ``L`` intervals of constant membership
    every interval holds the same items (one slot each, by flow), so its ``BNA(D_k)`` is
    computed once and repeated ``L`` times: the same pieces as interval by interval (merged
    where they touch), without a Python step per interval."""
    if flow.size == 0:
        return SlotPlan.empty()
    bounds = np.unique(np.concatenate([start, end]))
    ra, rb = np.searchsorted(bounds, start), np.searchsorted(bounds, end)
    rlen = np.diff(bounds)
    m = instance.ports
    ps, pd = instance.flow_src[flow].astype(_I64), instance.flow_dst[flow].astype(_I64)
    # an interval's eff: 1 when no port is shared (each item is one slot), else BNA's eff of
    # its 0/1-per-item matrix = the largest number of items on one port
    eff = _run_eff(ra, rb, np.concatenate([ps, pd + m]), 2 * m, rlen.size)
    begin = np.cumsum(rlen * eff) - rlen * eff
    prio = np.argsort(flow, kind="stable")            # items of an interval by flow
    nc_p, nc_s, nc_n, cptr, cmem = _split_runs(ra, rb, eff, begin, rlen, prio)
    out_f, out_s, out_n = [flow[nc_p]], [nc_s], [nc_n]
    runs = np.flatnonzero(eff > 1)
    for g, (a, b) in enumerate(zip(cptr[:-1].tolist(), cptr[1:].tolist(), strict=True)):
        idx = cmem[a:b]
        r = int(runs[g])
        item, s, ln, e = bna_items(ps[idx], pd[idx], np.ones(b - a, _I64), rule=rule)
        L = int(rlen[r])
        rep = begin[r] + e * np.arange(L, dtype=_I64)
        out_f.append(np.tile(flow[idx[item]], L))
        out_s.append((rep[:, None] + s[None, :]).reshape(-1))
        out_n.append(np.tile(ln, L))
    f, s, ln = merge_pieces(np.concatenate(out_f), np.concatenate(out_s),
                            np.concatenate(out_n))
    return SlotPlan(f, s, ln)


def dma_rt_plan(instance: Instance, jobs: np.ndarray, demand: np.ndarray, *,
                rng: np.random.Generator, beta: float = 1.0, l_I: int | str = 1,
                rule: str = "maxweight", order: np.ndarray | None = None,
                delays: np.ndarray | None = None) -> SlotPlan:
    """DMA-RT (spec 5.4) of the given jobs (rooted trees) from slot 0, releases ignored:
    DMA-SRT per job (path delays drawn job by job in the order of ``jobs``' positions), then
    DMA's delay, merge and resolution with ``Delta`` of all the given jobs.  ``order`` and
    ``delays`` as in :func:`coflowopt.schedulers.dag.dma.dma_plan`."""
    jobs = np.asarray(jobs, dtype=_I64).reshape(-1)
    _check_beta(beta)
    plans: dict[int, SlotPlan] = {}
    for j in sorted(set(jobs.tolist())):
        plans[j] = dma_srt_plan(instance, j, demand, rng=rng, beta=beta, l_I=l_I, rule=rule)
    if delays is None:
        delays = draw_delays(rng, jobs, aggregate_slots(instance, jobs, demand), beta)
    return delay_and_merge(instance, [plans[j] for j in jobs.tolist()], delays,
                           _rank(jobs, order), rule=rule)


# -- the schedulers ---------------------------------------------------------------------------


def _check_common(obj: Any) -> None:
    name = type(obj).__name__
    if not (math.isfinite(obj.beta) and obj.beta > _INV_E):
        raise ValueError(f"{name}.beta: must be finite and > 1/e = {_INV_E:.6f}, got "
                         f"{obj.beta}")
    if not (math.isfinite(obj.quantum) and obj.quantum > 0):
        raise ValueError(f"{name}.quantum: must be finite and > 0, got {obj.quantum}")
    if isinstance(obj.l_I, str):
        if obj.l_I != "sqrt":
            raise ValueError(f"{name}.l_I: expected a positive integer or 'sqrt', got "
                             f"{obj.l_I!r}")
    elif obj.l_I < 1:
        raise ValueError(f"{name}.l_I: must be >= 1, got {obj.l_I}")


@dataclass(frozen=True)
class DMASRTParams(Params):
    """``beta`` (``> 1/e``): path delays on ``{0..floor(Delta_j / (beta l_I))}``; ``l_I``:
    interval length in slots, or ``"sqrt"`` [P]; ``rule``: BNA's matching rule; ``quantum``:
    volume per slot [P]."""

    beta: float = 1.0
    l_I: int | str = 1
    rule: Literal["maxweight", "hk", "auto"] = "auto"
    quantum: float = 1.0

    def check(self) -> None:
        _check_common(self)


@dataclass(frozen=True)
class DMARTParams(Params):
    """As :class:`DMASRTParams`; ``beta`` also sets the job delays ``{0..floor(Delta /
    beta)}`` of the merge."""

    beta: float = 1.0
    l_I: int | str = 1
    rule: Literal["maxweight", "hk", "auto"] = "auto"
    quantum: float = 1.0

    def check(self) -> None:
        _check_common(self)


def supports_dma_srt(instance: Instance) -> str | None:
    """Why ``dma-srt`` cannot run ``instance``: not exactly one job, a job that is not a
    rooted tree, a positive release, a non-uniform fabric."""
    why = uniform_fabric_refusal(instance) or finishes_before_refusal(instance)
    if why:
        return why
    if instance.n_jobs != 1:
        return (f"dma-srt schedules one rooted-tree job; the instance has {instance.n_jobs} jobs "
                "(use dma-rt)")
    return (not_rooted_tree_reason(instance, 0)
            or release_refusal(instance, "dma-srt", "gdm-rt"))


def supports_dma_rt(instance: Instance) -> str | None:
    """Why ``dma-rt`` cannot run ``instance``: a job that is not a rooted tree, a positive
    release, a non-uniform fabric."""
    why = uniform_fabric_refusal(instance) or finishes_before_refusal(instance)
    if why:
        return why
    for j in range(instance.n_jobs):
        why = not_rooted_tree_reason(instance, j)
        if why:
            return why
    return release_refusal(instance, "dma-rt", "gdm-rt")


def run_dma_srt(instance: Instance, params: DMASRTParams, *, seed: Any = None,
                check: Tolerance | None = None, progress: Any = None
                ) -> Schedule | ValidSchedule:
    """DMA-SRT of the instance's one rooted-tree job from time 0 (:func:`dma_srt_plan`);
    ``seed`` draws the path delays."""
    why = supports_dma_srt(instance)
    if why is not None:
        raise ValueError(f"dma-srt: {why}")
    p = params
    demand = slot_demand(instance, p.quantum)
    plan = dma_srt_plan(instance, 0, demand, rng=np.random.default_rng(seed), beta=p.beta,
                        l_I=p.l_I, rule=p.rule)
    meta = {"scheduler": "dma-srt",
            "params": {"beta": p.beta, "l_I": p.l_I, "rule": p.rule, "quantum": p.quantum},
            "slot_length": slot_length(instance, p.quantum), "slots": plan.makespan}
    box = [plan]  # handed over: run_plan frees the plan once it has its segments
    del plan
    return run_plan(instance, box.pop(), quantum=p.quantum, check=check, meta=meta)


def run_dma_rt(instance: Instance, params: DMARTParams, *, seed: Any = None,
               check: Tolerance | None = None, progress: Any = None
               ) -> Schedule | ValidSchedule:
    """DMA-RT of all jobs (rooted trees) from time 0 (:func:`dma_rt_plan`); ``seed`` draws
    the path delays and the job delays."""
    why = supports_dma_rt(instance)
    if why is not None:
        raise ValueError(f"dma-rt: {why}")
    p = params
    demand = slot_demand(instance, p.quantum)
    plan = dma_rt_plan(instance, np.arange(instance.n_jobs), demand,
                       rng=np.random.default_rng(seed), beta=p.beta, l_I=p.l_I, rule=p.rule)
    meta = {"scheduler": "dma-rt",
            "params": {"beta": p.beta, "l_I": p.l_I, "rule": p.rule, "quantum": p.quantum},
            "slot_length": slot_length(instance, p.quantum), "slots": plan.makespan}
    box = [plan]  # handed over: run_plan frees the plan once it has its segments
    del plan
    return run_plan(instance, box.pop(), quantum=p.quantum, check=check, meta=meta)
