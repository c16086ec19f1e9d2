"""G-DM and G-DM-RT (Shafiee and Ghaderi, *Scheduling Coflows with Dependency Graph*, the
IEEE/ACM ToN 2021, the paper's Algorithm 4 and its corollary for rooted trees), with their
backfilling variants G-DM-BF and G-DM-RT-BF (named and evaluated in the paper's simulations, rule
[C]: :mod:`coflowopt.schedulers.dag.backfill`).  Tags: [R] recovered from the paper, [C]
reconstructed by us (docs/families/index.md).

Total weighted job completion time ``sum_j w_j C_j`` of multi-stage jobs, in unit slots
(:mod:`coflowopt.schedulers.dag.slots`).  The steps (the paper's symbols):

1. ``sigma``: the combinatorial primal-dual job order of the paper's Appendix
   (:func:`coflowopt.lp.primal_dual_job_order`; role [R], steps [C]).
2. ``D_j``: effective size of the sum of the aggregate coflows ``A^{sigma(1)} + .. + A^j`` of
   ``j`` and every job before it in ``sigma``; ``T_j``: critical path (Definition 3);
   ``rho_j``: release.  All three in slot units, from the flows' slot demands.
3. ``gamma`` = smallest **positive** entry ``d_sr^{cj}`` of any coflow matrix [C: a literal
   minimum would be 0]; ``T = max_j rho_j + sum of all entries`` (the paper's horizon).
4. ``B``: smallest integer with ``gamma 2^B >= T``, raised until ``gamma 2^B >= max_j (T_j +
   rho_j + D_j)`` so that every job is covered [C]; end points ``a_b = gamma 2^b``, ``b = 0..B``
   (the paper's eq. (4) was not recovered, [C]).
5. Groups (eq. (5)): ``J_b = {j : a_{b-1} < T_j + rho_j + D_j <= a_b}``; a job of key
   ``<= a_0`` (a job without data) joins ``J_0`` [C].  Empty groups are skipped.
6. Groups one after another: group ``b`` is scheduled by DMA (G-DM,
   :func:`~coflowopt.schedulers.dag.dma.dma_plan`) or DMA-RT (G-DM-RT,
   :func:`~coflowopt.schedulers.dag.rooted.dma_rt_plan`) on its own jobs (its own ``Delta``),
   with ``sigma`` as the priority on shared pairs, from slot ``S_b = max(F_{b-1}, max_{j in
   J_b} rho_j)`` (``F_0 = 0``, ``F_b = S_b +`` the group's length) [C].

Guarantees [R] (proof in Sec. IX-C): G-DM is an ``O(mu g(m))``-approximation of the total weighted
completion time (in expectation, [C: our reading]); G-DM-RT an ``O(sqrt(mu) g(m) h(m,
mu))``-approximation for rooted trees. The random delays of DMA come from
``numpy.random.default_rng(seed)``, drawn group by group in order: the same seed gives the same
schedule.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from coflowopt.lp import JobOrderResult, primal_dual_job_order
from coflowopt.model import Instance
from coflowopt.params import Params
from coflowopt.schedulers.dag.merge_stream import RunCut, join_runs, run_merged
from coflowopt.schedulers.dag.slots import (
    SlotPlan,
    run_plan,
    slot_demand,
    slot_length,
    uniform_fabric_refusal,
)
from coflowopt.sim.sink import Outcome, RateSink

__all__ = [
    "GDMGroups",
    "GDMParams",
    "GDMRTParams",
    "coflow_priority",
    "gdm_base",
    "gdm_base_groups",
    "gdm_cut",
    "gdm_groups",
    "gdm_plan",
    "gdm_rt_supports",
    "gdm_supports",
    "release_slots",
    "run_gdm",
    "run_gdm_bf",
    "run_gdm_rt",
    "run_gdm_rt_bf",
]

_I64 = np.int64
_E_INV = 1.0 / math.e


# -- parameters ------------------------------------------------------------------------------


@dataclass(frozen=True)
class GDMParams(Params):
    """``beta``: DMA's delay constant (delays uniform on ``{0..floor(Delta/beta)}``; any
    ``beta > 1/e`` keeps the bound); ``kappa``: the release-step threshold of the primal-dual
    order (``> 0``; 1/2 gives the factor 3); ``rule``: BNA's matching rule (``maxweight``,
    ``hk``, or ``auto``: maxweight up to a few dozen active ports, hk above, as for ``dma``);
    ``quantum``: volume per slot (a flow of volume ``v`` needs ``ceil(v/quantum)``
    slots)."""

    beta: float = 1.0
    kappa: float = 0.5
    rule: Literal["maxweight", "hk", "auto"] = "auto"
    quantum: float = 1.0

    def check(self) -> None:
        if not self.beta > _E_INV:
            raise ValueError(f"beta: must be > 1/e (about 0.3679), got {self.beta}")
        if not (self.kappa > 0 and math.isfinite(self.kappa)):
            raise ValueError(f"kappa: must be finite and > 0, got {self.kappa}")
        if not (self.quantum > 0 and math.isfinite(self.quantum)):
            raise ValueError(f"quantum: must be finite and > 0, got {self.quantum}")


@dataclass(frozen=True)
class GDMRTParams(GDMParams):
    """:class:`GDMParams` plus ``l_I``: DMA-SRT's interval length in slots (an integer
    ``>= 1``, or ``"sqrt"`` [C]: per job, see
    :func:`coflowopt.schedulers.dag.rooted.interval_length`)."""

    l_I: int | str = 1

    def check(self) -> None:
        super().check()
        if isinstance(self.l_I, str):
            if self.l_I != "sqrt":
                raise ValueError(f"l_I: expected an integer >= 1 or 'sqrt', got {self.l_I!r}")
        elif self.l_I < 1:
            raise ValueError(f"l_I: must be an integer >= 1, got {self.l_I}")


# -- slot-unit quantities --------------------------------------------------------------------


def release_slots(instance: Instance, quantum: float = 1.0) -> np.ndarray:
    """First slot each coflow may use: ``ceil(r / L - 1e-9)`` of its effective release
    ``r = max(r_c, rho_j)``, ``L`` the slot length."""
    L = slot_length(instance, quantum)
    return np.maximum(np.ceil(instance.release / L - 1e-9), 0).astype(_I64)


def _job_release_slots(instance: Instance, quantum: float) -> np.ndarray:
    """``rho_j`` in slots: the job's own release, raised to its coflows' effective releases."""
    L = slot_length(instance, quantum)
    out = np.maximum(np.ceil(instance.job_release / L - 1e-9), 0).astype(_I64)
    np.maximum.at(out, instance.coflow_job.astype(_I64), release_slots(instance, quantum))
    return out


def _coflow_eff(instance: Instance, demand: np.ndarray) -> np.ndarray:
    """Effective size of every coflow in slots (largest port load of its slot demands)."""
    C, m = instance.n_coflows, instance.ports
    fc = instance.flow_coflow.astype(_I64)
    w = demand.astype(np.float64)
    li = np.bincount(fc * m + instance.flow_src, weights=w, minlength=C * m).reshape(C, m)
    lo = np.bincount(fc * m + instance.flow_dst, weights=w, minlength=C * m).reshape(C, m)
    if C == 0:
        return np.zeros(0, dtype=_I64)
    return np.maximum(li.max(axis=1), lo.max(axis=1)).astype(_I64)


def _critical_paths(instance: Instance, eff: np.ndarray) -> np.ndarray:
    """``T_j`` in slots: the longest Starts-After path with node weights ``eff`` (slots)."""
    finish = eff.astype(_I64).copy()
    if instance.starts_after.size:
        ptr, pred = instance.predecessors_ptr
        for c in instance.topological_order.tolist():
            a, b = ptr[c], ptr[c + 1]
            if b > a:
                finish[c] = eff[c] + finish[pred[a:b]].max()
    out = np.zeros(instance.n_jobs, dtype=_I64)
    np.maximum.at(out, instance.coflow_job.astype(_I64), finish)
    return out


def _job_loads(instance: Instance, demand: np.ndarray) -> np.ndarray:
    """``d_i^j`` in slots: ``(n_jobs, 2m)`` port loads of each job's aggregate coflow."""
    n, m = instance.n_jobs, instance.ports
    fj = instance.coflow_job[instance.flow_coflow].astype(_I64)
    w = demand.astype(np.float64)
    li = np.bincount(fj * m + instance.flow_src, weights=w, minlength=n * m).reshape(n, m)
    lo = np.bincount(fj * m + instance.flow_dst, weights=w, minlength=n * m).reshape(n, m)
    return np.concatenate([li, lo], axis=1)


def _gamma(instance: Instance, demand: np.ndarray) -> int:
    """Smallest positive entry ``d_sr^{cj}`` of the coflows' slot-demand matrices (flows of one
    coflow on one pair summed); 1 when there is none [C]."""
    pos = demand > 0
    if not pos.any():
        return 1
    m = instance.ports
    key = (instance.flow_coflow[pos].astype(_I64) * m + instance.flow_src[pos]) * m \
        + instance.flow_dst[pos]
    _, inv = np.unique(key, return_inverse=True)
    return int(np.bincount(inv, weights=demand[pos].astype(np.float64)).min())


@dataclass(frozen=True)
class GDMGroups:
    """The grouping of G-DM (Algorithm 4, eqs. (4)-(5)), all in slot units.

    ``order``: ``sigma`` (job positions, first first); per job: ``critical`` (``T_j``),
    ``release`` (``rho_j``), ``D`` (``D_j``), ``key`` (``T_j + rho_j + D_j``) and ``group``
    (its ``b``); ``gamma``, ``horizon`` (the paper's ``T``), ``B`` and the end points ``a``
    (``a_b = gamma 2^b``, ``b = 0..B``); ``groups``: ``(b, jobs of J_b in sigma order)`` for the
    non-empty groups in increasing ``b``; ``order_result``: the primal-dual run."""

    order: np.ndarray
    critical: np.ndarray
    release: np.ndarray
    D: np.ndarray
    key: np.ndarray
    group: np.ndarray
    gamma: int
    horizon: int
    B: int
    a: np.ndarray
    groups: tuple[tuple[int, np.ndarray], ...]
    order_result: JobOrderResult

    def members(self, b: int) -> np.ndarray:
        """Jobs of ``J_b`` in sigma order (empty when the group is)."""
        for bb, jobs in self.groups:
            if bb == b:
                return jobs
        return np.zeros(0, dtype=_I64)


def gdm_groups(instance: Instance, order_result: JobOrderResult, demand: np.ndarray, *,
               B: int | None = None, quantum: float = 1.0) -> GDMGroups:
    """G-DM's groups ``J_b`` (Algorithm 4, steps 2-5 above) from the job order ``order_result`` and
    the flows' slot demands ``demand``.

    ``B``: the number of doublings to use; ``None`` (default) takes the smallest ``B`` with
    ``gamma 2^B >= T``.  Either way ``B`` is raised until ``gamma 2^B`` covers every key [C].
    ``quantum``: the slot quantum ``demand`` was made with (converts releases to slots).
    """
    inst = instance
    demand = np.asarray(demand, dtype=_I64)
    if demand.shape != (inst.n_flows,):
        raise ValueError(f"gdm_groups: demand needs one entry per flow ({inst.n_flows}), got "
                         f"shape {demand.shape}")
    sigma = np.asarray(order_result.order, dtype=_I64)
    n = inst.n_jobs
    if sigma.size != n or not np.array_equal(np.sort(sigma), np.arange(n)):
        raise ValueError(f"gdm_groups: the order must be a permutation of the {n} jobs, got "
                         f"{sigma.size} entries")
    rho = _job_release_slots(inst, quantum)
    T = _critical_paths(inst, _coflow_eff(inst, demand))
    d = _job_loads(inst, demand)
    D = np.zeros(n, dtype=_I64)
    if n:
        D[sigma] = np.cumsum(d[sigma], axis=0).max(axis=1).astype(_I64)
    key = T + rho + D
    gamma = _gamma(inst, demand)
    horizon = int(rho.max(initial=0) + demand.sum())
    need = max(horizon, int(key.max(initial=0)))
    b_min = 0
    while gamma * 2 ** b_min < horizon:
        b_min += 1
    if B is not None:
        if B < 0:
            raise ValueError(f"gdm_groups: B must be >= 0, got {B}")
        b_min = int(B)
    while gamma * 2 ** b_min < need:
        b_min += 1
    a = gamma * 2 ** np.arange(b_min + 1, dtype=_I64)
    # group b: smallest b with key <= a_b (keys are integers, so this is exact)
    group = np.searchsorted(a, key, side="left").astype(_I64)
    groups = []
    pos = np.empty(n, dtype=_I64)
    pos[sigma] = np.arange(n)
    for b in np.unique(group).tolist():
        jobs = np.flatnonzero(group == b)
        groups.append((int(b), jobs[np.argsort(pos[jobs], kind="stable")]))
    return GDMGroups(sigma, T, rho, D, key, group, gamma, horizon, b_min, a, tuple(groups),
                     order_result)


def coflow_priority(instance: Instance, job_order: np.ndarray) -> np.ndarray:
    """Backfilling rank of every coflow (the BF rule [C]): job position in ``job_order``, then the
    coflow's place in the topological order (0 = served first)."""
    inst = instance
    pos = np.empty(inst.n_jobs, dtype=_I64)
    pos[np.asarray(job_order, dtype=_I64)] = np.arange(inst.n_jobs)
    topo = np.empty(inst.n_coflows, dtype=_I64)
    topo[inst.topological_order] = np.arange(inst.n_coflows)
    o = np.lexsort((topo, pos[inst.coflow_job]))
    rank = np.empty(inst.n_coflows, dtype=_I64)
    rank[o] = np.arange(inst.n_coflows)
    return rank


# -- support tests ---------------------------------------------------------------------------


def gdm_supports(instance: Instance) -> str | None:
    """Why G-DM cannot run ``instance`` (a fabric of unequal port capacities), else ``None``."""
    return uniform_fabric_refusal(instance)


def gdm_rt_supports(instance: Instance) -> str | None:
    """Why G-DM-RT cannot run ``instance``: unequal port capacities, or a job whose DAG is not
    a rooted tree (named); else ``None``."""
    why = uniform_fabric_refusal(instance)
    if why is not None:
        return why
    from coflowopt.schedulers.dag.rooted import rooted_tree_kind

    for j in range(instance.n_jobs):
        if not (instance.coflow_job == j).any():
            continue
        if rooted_tree_kind(instance, j) is None:
            return (f"job {instance.job_id[j]!s} is not a rooted tree (G-DM-RT needs every "
                    f"job's DAG to be a fan-in or fan-out tree)")
    return None


# -- the algorithm ---------------------------------------------------------------------------


def gdm_plan(instance: Instance, params: GDMParams, rng: np.random.Generator, *,
             rooted: bool = False, B: int | None = None
             ) -> tuple[SlotPlan, GDMGroups, np.ndarray]:
    """G-DM's slot plan (G-DM-RT's with ``rooted``), its grouping, and the start slot ``S_b``
    of each non-empty group (in the order of ``groups``)."""
    inst = instance
    demand = slot_demand(inst, params.quantum)
    g = _grouping(inst, params, demand, B)

    def one(jobs: np.ndarray, S: int) -> tuple[Any, int]:
        p = _group_plan(inst, jobs, demand, params, rng, rooted)
        return _compact(p, S), p.makespan   # the group's plan freed once compacted

    parts, starts = _each_group(g, one)
    return _concat_compact([part for part, _ in parts]), g, starts


def gdm_base(instance: Instance, params: GDMParams, rng: np.random.Generator, *,
             rooted: bool = False, B: int | None = None
             ) -> tuple[tuple[np.ndarray, np.ndarray, np.ndarray], GDMGroups, np.ndarray, int]:
    """:func:`gdm_plan`'s pieces in the order the backfill reads them (by start, then flow;
    :func:`~coflowopt.schedulers.dag.backfill.ordered_pieces`): :func:`gdm_base_groups`'
    chunks joined (they follow each other in time, so no whole plan is sorted).  Returns the
    columns ``(flow, start, length)``, the grouping, the groups' start slots and the plan's
    makespan."""
    inst = instance
    demand = slot_demand(inst, params.quantum)
    g = _grouping(inst, params, demand, B)
    parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    starts, end = gdm_base_groups(inst, g, demand, params, rng, parts.append, rooted=rooted)
    cols = []
    for c in range(3):      # each group's column freed once copied
        cols.append(np.concatenate([part[c] for part in parts]) if parts
                    else np.zeros(0, _I64))
        parts = [(None,) * (c + 1) + part[c + 1:] for part in parts]  # type: ignore[misc]
    return (cols[0], cols[1], cols[2]), g, starts, end


def gdm_base_groups(instance: Instance, g: GDMGroups, demand: np.ndarray, params: GDMParams,
                    rng: np.random.Generator,
                    take: Callable[[tuple[np.ndarray, np.ndarray, np.ndarray]], Any], *,
                    rooted: bool = False) -> tuple[np.ndarray, int]:
    """G-DM's plan (G-DM-RT's with ``rooted``) on the grouping ``g`` of flows needing
    ``demand`` slots (``slot_demand`` at ``params.quantum``), one group at a time:
    each group's pieces, ordered by (start, flow) and shifted to its start slot, are handed
    to ``take`` in chunks that follow each other in time
    (:func:`~coflowopt.schedulers.dag.dma.assemble_ordered`) as soon as the group is planned,
    before the next group is (one group's joined pieces held at a time; ``take`` keeps no
    reference to a chunk it has used).  Returns the groups' start slots and the plan's
    makespan."""
    from coflowopt.schedulers.dag.dma import assemble_ordered, resolve_blocks

    inst = instance
    end = [0]

    def one(jobs: np.ndarray, S: int) -> tuple[Any, int]:
        # _group_plan's pieces, joined straight into the backfill's order in chunks (no int64
        # plan, no whole group's ordered columns)
        box = [_group_cut(inst, jobs, demand, params, rng, rooted)]
        if box[0] is None:
            return None, 0
        blocks = resolve_blocks(inst, box.pop(), rule=params.rule)
        span, n = assemble_ordered(blocks, inst.n_flows, S, take)
        if n:
            end[0] = S + span
        return None, span

    _, starts = _each_group(g, one)
    return starts, end[0]


def _group_plan(inst: Instance, jobs: np.ndarray, demand: np.ndarray, params: GDMParams,
                rng: np.random.Generator, rooted: bool) -> SlotPlan:
    """One group's plan from slot 0: DMA (DMA-RT with ``rooted``) of its jobs, ``sigma``
    their priority (:func:`_group_cut`'s runs resolved: ``dma_plan`` / ``dma_rt_plan``)."""
    from coflowopt.schedulers.dag.dma import resolve_cut

    return resolve_cut(inst, _group_cut(inst, jobs, demand, params, rng, rooted),
                       rule=params.rule)


def _group_cut(inst: Instance, jobs: np.ndarray, demand: np.ndarray, params: GDMParams,
               rng: np.random.Generator, rooted: bool) -> RunCut | None:
    """One group's DMA (DMA-RT with ``rooted``) runs from slot 0 before their collisions are
    resolved, ``sigma`` the jobs' priority (``None``: no piece)."""
    if rooted:
        from coflowopt.schedulers.dag.rooted import dma_rt_cut

        return dma_rt_cut(inst, jobs, demand, rng=rng, beta=params.beta,
                          l_I=params.l_I, rule=params.rule, order=jobs)  # type: ignore[attr-defined]
    from coflowopt.schedulers.dag.dma import dma_cut

    return dma_cut(inst, jobs, demand, rng=rng, beta=params.beta, rule=params.rule, order=jobs)


def gdm_cut(instance: Instance, params: GDMParams, rng: np.random.Generator, *,
            rooted: bool = False, B: int | None = None
            ) -> tuple[RunCut | None, GDMGroups, np.ndarray, int]:
    """G-DM's groups as DMA runs before their collisions are resolved (:func:`gdm_plan`'s
    delays, drawn in the same order; G-DM-RT's with ``rooted``): each group's runs
    (:func:`~coflowopt.schedulers.dag.dma.dma_cut`, or :func:`~coflowopt.schedulers.dag.
    rooted.dma_rt_cut`) shifted to its start slot and joined (``None``: no piece); the
    grouping, the groups' start slots and the plan's makespan."""
    inst = instance
    demand = slot_demand(inst, params.quantum)
    g = _grouping(inst, params, demand, B)

    def one(jobs: np.ndarray, S: int) -> tuple[Any, int]:
        cut = _group_cut(inst, jobs, demand, params, rng, rooted)
        return cut, 0 if cut is None else cut.total

    parts, starts = _each_group(g, one)
    joined = join_runs([(cut, S) for cut, S in parts if cut is not None])
    return joined, g, starts, 0 if joined is None else joined.total


def _grouping(inst: Instance, params: GDMParams, demand: np.ndarray, B: int | None
              ) -> GDMGroups:
    res = primal_dual_job_order(inst, params.kappa)
    return gdm_groups(inst, res, demand, B=B, quantum=params.quantum)


def _each_group(g: GDMGroups, one: Callable[[np.ndarray, int], tuple[Any, int]]
                ) -> tuple[list[tuple[Any, int]], np.ndarray]:
    """``one(jobs, S)`` of every group in order, ``S`` the group's start slot (the previous
    group's end or the group's release, whichever is later; ``one`` returns its part and
    its length in slots): the parts with their ``S``, and the starts."""
    out = []
    starts = np.zeros(len(g.groups), dtype=_I64)
    F = 0
    for k, (_, jobs) in enumerate(g.groups):
        S = max(F, int(g.release[jobs].max()))
        part, span = one(jobs, S)
        starts[k] = S
        F = S + span
        out.append((part, S))
    return out, starts


def _compact(plan: SlotPlan, shift: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A group's pieces, ``shift`` slots later, in int32 columns where the values fit (the
    earlier groups are held while the later ones are planned: half the memory)."""
    st = plan.start + shift
    lim = 2 ** 31 - 1
    if plan.flow.size and max(int(plan.flow.max()), int(st.max()), int(plan.length.max())) \
            <= lim:
        return plan.flow.astype(np.int32), st.astype(np.int32), plan.length.astype(np.int32)
    return plan.flow, st, plan.length


def _concat_compact(parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]]) -> SlotPlan:
    """:meth:`SlotPlan.concat` of compact parts, each freed once copied."""
    total = sum(int(p[0].size) for p in parts)
    cols = [np.empty(total, dtype=_I64) for _ in range(3)]
    at = 0
    for i in range(len(parts)):
        n = int(parts[i][0].size)
        for c in range(3):
            cols[c][at:at + n] = parts[i][c]
        parts[i] = None  # type: ignore[call-overload]
        at += n
    return SlotPlan(*cols)


def _meta(name: str, params: GDMParams, g: GDMGroups, starts: np.ndarray) -> dict[str, Any]:
    return {"scheduler": name, "params": params.to_dict(), "groups": len(g.groups),
            "B": g.B, "gamma": g.gamma, "dual": float(g.order_result.dual),
            "group_starts": starts.tolist()}


def _run(name: str, instance: Instance, params: GDMParams, seed: Any, sink: RateSink,
         rooted: bool, bf: bool) -> Outcome:
    why = gdm_rt_supports(instance) if rooted else gdm_supports(instance)
    if why is not None:
        raise ValueError(f"{name} cannot run this instance: {why}")
    rng = np.random.default_rng(seed)
    if not bf and sink.stream and params.rule in ("hk", "auto"):
        # no plan: the groups' runs resolved and executed in time order
        cut, g, starts, span = gdm_cut(instance, params, rng, rooted=rooted)
        meta = _meta(name, params, g, starts)
        meta["base_makespan_slots"] = meta["makespan_slots"] = span
        if cut is not None:
            box_c = [cut]
            del cut
            return run_merged(instance, box_c.pop(), quantum=params.quantum, sink=sink,
                              meta=meta)
        rng = np.random.default_rng(seed)
    if bf:
        from coflowopt.schedulers.dag.backfill import BackfillRun

        # the base plan's groups backfilled as they are planned: one group's pieces held
        demand = slot_demand(instance, params.quantum)
        g = _grouping(instance, params, demand, None)
        bfr = BackfillRun(instance, coflow_priority(instance, g.order), demand,
                          release_slots(instance, params.quantum))
        starts, span = gdm_base_groups(instance, g, demand, params, rng, bfr.feed,
                                       rooted=rooted)
        meta = _meta(name, params, g, starts)
        meta["base_makespan_slots"] = span
        plan = bfr.finish()
        del bfr
    else:
        plan, g, starts = gdm_plan(instance, params, rng, rooted=rooted)
        meta = _meta(name, params, g, starts)
        meta["base_makespan_slots"] = plan.makespan
    meta["makespan_slots"] = plan.makespan
    # the plan travels in a box and is popped into the call, so that no frame here keeps it
    # alive: run_plan drops it once it has its own columns (on a full trace it is hundreds
    # of MB)
    box = [plan]
    del plan
    return run_plan(instance, box.pop(), quantum=params.quantum, sink=sink, meta=meta)


def run_gdm(instance: Instance, params: GDMParams, sink: RateSink, *, seed: Any = None,
            progress: Any = None) -> Outcome:
    """G-DM (Algorithm 4): primal-dual job order, geometric grouping, DMA per group."""
    return _run("gdm", instance, params, seed, sink, rooted=False, bf=False)


def run_gdm_rt(instance: Instance, params: GDMRTParams, sink: RateSink, *, seed: Any = None,
               progress: Any = None) -> Outcome:
    """G-DM-RT (Algorithm 4's rooted-tree corollary): DMA-RT per group; rooted-tree jobs only."""
    return _run("gdm-rt", instance, params, seed, sink, rooted=True, bf=False)


def run_gdm_bf(instance: Instance, params: GDMParams, sink: RateSink, *, seed: Any = None,
               progress: Any = None) -> Outcome:
    """G-DM-BF: G-DM's plan with the backfilling rule [C] (``dag.backfill``)."""
    return _run("gdm-bf", instance, params, seed, sink, rooted=False, bf=True)


def run_gdm_rt_bf(instance: Instance, params: GDMRTParams, sink: RateSink, *, seed: Any = None,
                  progress: Any = None) -> Outcome:
    """G-DM-RT-BF: G-DM-RT's plan with the backfilling rule [C] (``dag.backfill``)."""
    return _run("gdm-rt-bf", instance, params, seed, sink, rooted=True, bf=True)
