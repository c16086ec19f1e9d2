"""DMA-SRT (one rooted tree, Algorithm 3) and DMA-RT (many rooted trees) of Shafiee and
Ghaderi, *Scheduling Coflows with Dependency Graph*, IEEE/ACM ToN 2021, Sec. V.  Tags: [R]
recovered from the paper, [C] reconstructed by us (docs/families/index.md).

DMA-SRT, our always-feasible version (skeleton [R], Sec. V-A; details [C]: the interval length,
the path-delay range and the cutting into pieces were not recovered), for one job
whose DAG is a fan-in tree (root ``R_j``, leaves ``S_0``):

1. every coflow ``c`` by BNA in ``eff_c`` slots, cut into ``n_c = ceil(eff_c / l_I)`` pieces of
   ``l_I`` consecutive slots (the last may be shorter); piece ``q`` is the matrix ``B_{c,q}``;
2. the path sub-jobs ``P_j``: one path from every leaf to the root (ordered by leaf position
   [C]);
3. path delays ``Y_p`` uniform on ``{0, .., floor(Delta_j / (beta l_I))}`` intervals [C: mirrors
   DMA's range], drawn in path order;
4. candidate starts along ``p = (c_1, .., c_L)``: ``t_{c_1,p} = Y_p``,
   ``t_{c_{a+1},p} = t_{c_a,p} + n_{c_a}``;
5. real starts in topological order: ``ready(c) = max_u (t_u + n_u)`` over the in-neighbours
   (0 for a leaf), ``t_c = min { t_{c,p} : p contains c, t_{c,p} >= ready(c) }`` (never empty);
6. interval ``k`` holds ``D_k = sum_{t_c <= k < t_c + n_c} B_{c, k - t_c}`` and becomes
   ``BNA(D_k)`` (``eff(D_k)`` slots; real-first, flows of a pair by flow index); empty
   intervals are skipped.  Computed [C] once per run of intervals of constant membership
   (equal ``D_k``) and repeated along the run: the same pieces as interval by interval.

``l_I`` [C]: an integer (default 1, the finest) or ``"sqrt"``: ``max(1, round(max(Delta_j,
T_j) / sqrt(mu_j)))`` (the theory-motivated scale of Theorem 3, our guess [C]).  A fan-out tree [C:
the paper
only says "similar"]:
reverse the edges, schedule the fan-in tree, reverse the order of the slots.
Theorem 3 [R] (proof in Sec. IX-B): ``O(sqrt(mu) h(m, mu))`` times the optimal makespan.

DMA-RT [R] (Sec. V): DMA-SRT on every job separately (the isolated
schedules), then DMA's steps 2-4 (:func:`coflowopt.schedulers.dag.dma.delay_and_merge`) with
``Delta`` of all jobs.  Theorem 4 [R] (proof in Sec. IX-B): ``O(sqrt(mu) g(m) h(m, mu))``.

Both are makespan algorithms with every job available at the start [C]; units [C]: slots of
``quantum / c`` time units (:mod:`coflowopt.schedulers.dag.slots`).
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from coflowopt.model import Instance, topological_order
from coflowopt.params import Params
from coflowopt.schedulers.dag.bna import (
    AUTO_MAXWEIGHT_PORTS,
    bna_items,
    bna_plan,
    merge_pieces,
    repeat_runs_hk,
)
from coflowopt.schedulers.dag.dma import (
    NO_W,
    aggregate_slots,
    check_beta,
    cut_runs,
    draw_delays,
    execute_cut,
    job_rank,
    merge_runs,
    release_refusal,
    resolve_cut,
    run_eff,
)
from coflowopt.schedulers.dag.merge_stream import RunCut
from coflowopt.schedulers.dag.slots import (
    SlotPlan,
    finishes_before_refusal,
    label,
    run_plan,
    slot_demand,
    slot_length,
    uniform_fabric_refusal,
)
from coflowopt.sim.sink import Outcome, RateSink
from coflowopt.workloads.dags import is_rooted_tree, job_graph

__all__ = [
    "DMARTParams",
    "DMASRTParams",
    "dma_rt_cut",
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
    """``"fan-in"`` / ``"fan-out"`` when job position ``job``'s DAG is a rooted tree (Definition 5,
    detection rule [C]; a path is ``"fan-in"``), else ``None``
    (:func:`coflowopt.workloads.dags.is_rooted_tree`)."""
    return is_rooted_tree(instance, job)


def not_rooted_tree_reason(instance: Instance, job: int) -> str | None:
    """Why job position ``job`` is not a rooted tree (one line naming the job), or ``None``."""
    if rooted_tree_kind(instance, job) is not None:
        return None
    nodes, e = job_graph(instance, job)
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
    pos, e = job_graph(instance, job)
    # the job's part of job_topological_order (Kahn's, smallest position first: jobs share no
    # edge, so the job's own graph gives its order), without a pass over the whole instance
    # per job
    nodes = pos[_smallest_first(pos.size, e)]
    parent: dict[int, int] = {}
    for a, b in pos[e].tolist():
        if kind == "fan-in":
            parent[a] = b
        else:
            parent[b] = a
    return (nodes if kind == "fan-in" else nodes[::-1]), parent


def _smallest_first(n: int, e: np.ndarray) -> np.ndarray:
    """Kahn's order of ``n`` nodes with edges ``e`` (local indices, increasing with the
    positions), always taking the smallest ready node."""
    succ: list[list[int]] = [[] for _ in range(n)]
    indeg = [0] * n
    for a, b in e.tolist():
        succ[a].append(b)
        indeg[b] += 1
    ready = [v for v in range(n) if indeg[v] == 0]
    heapq.heapify(ready)
    out = []
    while ready:
        c = heapq.heappop(ready)
        out.append(c)
        for v in succ[c]:
            indeg[v] -= 1
            if indeg[v] == 0:
                heapq.heappush(ready, v)
    return np.asarray(out, dtype=_I64)


def interval_length(instance: Instance, job: int, demand: np.ndarray, l_I: int | str) -> int:
    """``l_I`` in slots: the integer given, or for ``"sqrt"`` [C]
    ``max(1, round(max(Delta_j, T_j) / sqrt(mu_j)))`` (``Delta_j``, ``T_j`` in slots)."""
    if isinstance(l_I, str):
        if l_I != "sqrt":
            raise ValueError(f"l_I: expected a positive integer or 'sqrt', got {l_I!r}")
        nodes, e = job_graph(instance, job)
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
    """DMA-SRT (Algorithm 3, our version [C]; fan-out by reversal [C]) of job position ``job`` (a
    rooted tree) from slot 0, releases ignored.  ``path_delays``: explicit ``Y_p`` (intervals)
    per leaf-to-root path, paths ordered by leaf position, instead of drawing them."""
    check_beta(beta)
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
    # 6. intervals: every coflow's pieces, shifted by its start (a multiple of l_I slots)
    cs = [c for c, p in plans.items() if p.n_pieces]
    if not cs:
        return SlotPlan.empty()
    flow = np.concatenate([plans[c].flow for c in cs])
    shift = np.concatenate([np.full(plans[c].n_pieces, start[c] * lI, _I64) for c in cs])
    gs = np.concatenate([plans[c].start for c in cs]) + shift
    ge = np.concatenate([plans[c].end for c in cs]) + shift
    del shift
    plan = _resolve_intervals(instance, flow, gs, ge, lI, rule)
    if kind == "fan-out":
        T = plan.makespan
        plan = SlotPlan(plan.flow, T - plan.end, plan.length)
    return plan


def _resolve_intervals(instance: Instance, flow: np.ndarray, gs: np.ndarray, ge: np.ndarray,
                       lI: int, rule: str) -> SlotPlan:
    """Step 6 on the pieces ``[gs, ge)`` of ``flow`` (slots; every coflow's BNA plan shifted
    by its start, a multiple of ``l_I``): interval ``k`` (slots ``[k l_I, (k+1) l_I)``) holds
    each piece's share of it, and the intervals become ``BNA(D_k)`` one after another, empty
    ones skipped (:func:`_resolve_runs` over runs of constant membership)."""
    if lI == 1:
        return _resolve_runs(instance, flow, gs, ge, NO_W, rule)
    return _resolve_runs(instance, *_interval_segments(flow, gs, ge, lI), rule)


def _interval_segments(flow: np.ndarray, gs: np.ndarray, ge: np.ndarray, lI: int
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The items of step 6 in run-length form: piece ``[gs, ge)`` of ``flow`` (slots) fills
    intervals ``fa..fb-1`` (``fa = ceil(gs / l_I)``, ``fb = floor(ge / l_I)``) with ``l_I``
    slots each, and leaves a partial share in the interval holding its start or end (one
    share when both lie inside one interval).  Returns segments ``(flow, first interval, end
    interval, slots per interval)``; the partial shares of one flow in one interval (a piece
    ending and the next starting inside it) are added into one item, as the matrix
    ``D_k`` adds them."""
    fa = -(-gs // lI)
    fb = ge // lI
    full = fa < fb
    head = (fa <= fb) & (gs < fa * lI)
    tail = (fa <= fb) & (ge > fb * lI)
    inner = fa > fb
    pf = np.concatenate([flow[head], flow[tail], flow[inner]])
    pk = np.concatenate([fa[head] - 1, fb[tail], fb[inner]])
    pa = np.concatenate([fa[head] * lI - gs[head], ge[tail] - fb[tail] * lI,
                         ge[inner] - gs[inner]])
    if pf.size > 1:
        o = np.lexsort((pf, pk))
        pf, pk, pa = pf[o], pk[o], pa[o]
        first = np.r_[True, (pf[1:] != pf[:-1]) | (pk[1:] != pk[:-1])]
        if not first.all():
            at = np.flatnonzero(first)
            pf, pk, pa = pf[at], pk[at], np.add.reduceat(pa, at)
    return (np.concatenate([flow[full], pf]), np.concatenate([fa[full], pk]),
            np.concatenate([fb[full], pk + 1]),
            np.concatenate([np.full(int(full.sum()), lI, _I64), pa]))


def _resolve_runs(instance: Instance, flow: np.ndarray, start: np.ndarray, end: np.ndarray,
                  amount: np.ndarray, rule: str) -> SlotPlan:
    """Step 6 without a Python step per interval: item ``i`` of ``flow[i]`` needs
    ``amount[i]`` slots (1 if ``amount`` is empty) in each of the intervals
    ``start[i]..end[i]-1`` (the items of one flow never share an interval).  Over a run of
    ``L`` intervals of constant membership every interval holds the same items (by flow), so
    its ``BNA(D_k)`` is computed once and repeated ``L`` times; an interval whose items share
    no port keeps them as they are (``eff`` = the largest amount); empty intervals take no
    slot.  The same pieces as interval by interval (merged where they touch).  (A run longer
    than one interval holds only items of equal amount, ``l_I``: see
    :func:`_interval_segments`, so its unshared items are one piece each.)"""
    if flow.size == 0:
        return SlotPlan.empty()
    bounds = np.unique(np.concatenate([start, end]))
    ra, rb = np.searchsorted(bounds, start), np.searchsorted(bounds, end)
    rlen = np.diff(bounds)
    m = instance.ports
    ps, pd = instance.flow_src[flow].astype(_I64), instance.flow_dst[flow].astype(_I64)
    port = np.concatenate([ps, pd + m])
    # items per port decide the collision; an interval's eff is BNA's: the largest port load
    # (the largest amount where no port is shared)
    cnt = run_eff(ra, rb, port, 2 * m, rlen.size, NO_W)
    eff = cnt if amount.size == 0 else run_eff(ra, rb, port, 2 * m, rlen.size, amount)
    del port
    begin = np.cumsum(rlen * eff) - rlen * eff
    prio = np.argsort(flow, kind="stable")            # items of an interval by flow
    free, (cptr, cmem) = merge_runs(ra, rb, cnt > 1, begin, rlen, prio, flow, amount, NO_W)
    out_f, out_s, out_n = [free[0]], [free[1]], [free[2]]
    runs = np.flatnonzero(cnt > 1)
    todo: Any = range(runs.size)
    if rule in ("hk", "auto") and runs.size:
        # compiled, all runs at once; under "auto" the runs of at most
        # AUTO_MAXWEIGHT_PORTS active ports stay for the loop below (bna_items' choice)
        f_, s_, n_, k, left, n_left = repeat_runs_hk(
            ps, pd, cmem, cptr, runs, rlen, begin, flow, amount,
            AUTO_MAXWEIGHT_PORTS if rule == "auto" else -1)
        out_f.append(f_[:k])
        out_s.append(s_[:k])
        out_n.append(n_[:k])
        del f_, s_, n_
        todo = left[:n_left].tolist()
    for g in todo:
        a, b = int(cptr[g]), int(cptr[g + 1])
        idx = cmem[a:b]
        r = int(runs[g])
        amt = np.ones(b - a, _I64) if amount.size == 0 else amount[idx]
        item, s, ln, e = bna_items(ps[idx], pd[idx], amt, rule=rule)
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
    """DMA-RT (Sec. V) of the given jobs (rooted trees) from slot 0, releases ignored:
    DMA-SRT per job (path delays drawn job by job in the order of ``jobs``' positions), then
    DMA's delay, merge and resolution with ``Delta`` of all the given jobs.  ``order`` and
    ``delays`` as in :func:`coflowopt.schedulers.dag.dma.dma_plan`."""
    return resolve_cut(instance, dma_rt_cut(instance, jobs, demand, rng=rng, beta=beta,
                                            l_I=l_I, rule=rule, order=order, delays=delays),
                       rule=rule)


def dma_rt_cut(instance: Instance, jobs: np.ndarray, demand: np.ndarray, *,
               rng: np.random.Generator, beta: float = 1.0, l_I: int | str = 1,
               rule: str = "maxweight", order: np.ndarray | None = None,
               delays: np.ndarray | None = None) -> RunCut | None:
    """:func:`dma_rt_plan` before the merged runs' collisions are resolved (the same
    arguments and draws): the jobs' DMA-SRT plans, delayed and cut into runs
    (:func:`~coflowopt.schedulers.dag.dma.cut_runs`; ``None`` when no piece)."""
    jobs = np.asarray(jobs, dtype=_I64).reshape(-1)
    check_beta(beta)
    plans: dict[int, SlotPlan] = {}
    for j in sorted(set(jobs.tolist())):
        plans[j] = dma_srt_plan(instance, j, demand, rng=rng, beta=beta, l_I=l_I, rule=rule)
    if delays is None:
        delays = draw_delays(rng, jobs, aggregate_slots(instance, jobs, demand), beta)
    box = [[plans[j] for j in jobs.tolist()]]
    del plans   # handed over: cut_runs frees the per-job plans once concatenated
    return cut_runs(instance, box.pop(), delays, job_rank(jobs, order))


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
    interval length in slots, or ``"sqrt"`` [C]; ``rule``: BNA's matching rule; ``quantum``:
    volume per slot [C]."""

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


def run_dma_srt(instance: Instance, params: DMASRTParams, sink: RateSink, *, seed: Any = None,
                progress: Any = None) -> Outcome:
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
    return run_plan(instance, box.pop(), quantum=p.quantum, sink=sink, meta=meta)


def run_dma_rt(instance: Instance, params: DMARTParams, sink: RateSink, *, seed: Any = None,
               progress: Any = None) -> Outcome:
    """DMA-RT of all jobs (rooted trees) from time 0 (:func:`dma_rt_plan`); ``seed`` draws
    the path delays and the job delays."""
    why = supports_dma_rt(instance)
    if why is not None:
        raise ValueError(f"dma-rt: {why}")
    p = params
    demand = slot_demand(instance, p.quantum)
    cut = dma_rt_cut(instance, np.arange(instance.n_jobs), demand,
                     rng=np.random.default_rng(seed), beta=p.beta, l_I=p.l_I, rule=p.rule)
    meta = {"scheduler": "dma-rt",
            "params": {"beta": p.beta, "l_I": p.l_I, "rule": p.rule, "quantum": p.quantum},
            "slot_length": slot_length(instance, p.quantum)}
    box = [cut]    # handed over: streamed run by run, or the merged plan executed
    del cut
    return execute_cut(instance, box.pop(), rule=p.rule, quantum=p.quantum, sink=sink,
                       meta=meta)
