"""DMA-SRT and DMA-RT (dag-coflows spec section 5): spec Examples 5 and 7 (the reduction
instance of 3.1 against a slotted time-indexed ILP), fan-out by reversal, validity on the DAG
generators, seeds, ``l_I = "sqrt"`` and the refusals."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import LinearConstraint, milp
from strategies import join_touching_pieces

import coflowopt
from coflowopt.model import CoflowSpec, JobSpec, build_instance
from coflowopt.schedulers import UnsupportedInstance
from coflowopt.schedulers.dag import rooted as rooted_mod
from coflowopt.schedulers.dag.bna import bna_items
from coflowopt.schedulers.dag.rooted import (
    DMASRTParams,
    dma_srt_plan,
    interval_length,
    rooted_tree_kind,
)
from coflowopt.schedulers.dag.slots import plan_to_schedule, slot_demand
from coflowopt.validate import validate
from coflowopt.workloads import dags
from coflowopt.workloads.dags import CoflowClassMix

TINY = CoflowClassMix.single(1, 3, 1, 4)


def example5() -> coflowopt.Instance:
    cf = [CoflowSpec([(0, 0, 2.0)], id="a"), CoflowSpec([(1, 1, 1.0)], id="b"),
          CoflowSpec([(0, 1, 3.0)], id="c"), CoflowSpec([(2, 2, 1.0)], id="x"),
          CoflowSpec([(1, 0, 1.0)], id="r")]
    return build_instance(3, jobs=[JobSpec(cf, [(0, 3), (1, 3), (3, 4), (2, 4)], id="T")])


def test_example5_start_time_rule() -> None:
    """Spec Example 5 (l_I = 1, Y = (0, 2, 0)): makespan 8, against our reconstruction."""
    inst = example5()
    plan = dma_srt_plan(inst, 0, slot_demand(inst), rng=np.random.default_rng(0),
                        path_delays=np.array([0, 2, 0]))
    v = validate(inst, plan_to_schedule(inst, plan))
    assert plan.makespan == 8 and v.end == 8
    # x starts in interval 3 (p2's candidate), r in 4: the last two slots
    cid = list(inst.coflow_id)
    assert v.coflow_start[cid.index("x")] == 6 and v.coflow_start[cid.index("r")] == 7


FSP = [(2, 1, 2), (1, 2, 1), (2, 2, 1)]


def example7() -> coflowopt.Instance:
    """Spec 3.1 / Example 7: the flow shop as one fan-in job on m = 4 servers."""
    cfs, edges = [], []
    for i, p in enumerate(FSP):
        for ell, size in enumerate(p):
            cfs.append(CoflowSpec([(ell, ell, float(size))], id=f"c{i}{ell}"))
            if ell:
                edges.append((3 * i + ell - 1, 3 * i + ell))
    cfs.append(CoflowSpec([(3, 3, 1.0)], id="R"))
    edges += [(3 * i + 2, 9) for i in range(len(FSP))]
    return build_instance(4, jobs=[JobSpec(cfs, edges, id="fsp")])


def slotted_optimum(inst: coflowopt.Instance, H: int = 12) -> float:
    """Minimum makespan over unit-slot schedules (capacity 1, integer volumes) by a
    time-indexed ILP: x[f, t] flow f in slot t; z[c, t] coflow c complete before slot t."""
    F, C, m = inst.n_flows, inst.n_coflows, inst.ports
    vol = inst.flow_volume
    nx_, nz = F * H, C * (H + 1)
    X = lambda f, t: f * H + t  # noqa: E731
    Z = lambda c, t: nx_ + c * (H + 1) + t  # noqa: E731
    cvar = nx_ + nz
    n = cvar + 1
    rows, lo, hi = [], [], []

    def add(coef: dict[int, float], lb: float, ub: float) -> None:
        rows.append(coef)
        lo.append(lb)
        hi.append(ub)

    for f in range(F):
        add({X(f, t): 1.0 for t in range(H)}, vol[f], vol[f])
        for t in range(H):
            add({cvar: 1.0, X(f, t): -(t + 1.0)}, 0.0, np.inf)
    for side in (inst.flow_src, inst.flow_dst):
        for port in range(m):
            fl = np.flatnonzero(side == port)
            for t in range(H):
                if fl.size:
                    add({X(int(f), t): 1.0 for f in fl}, -np.inf, 1.0)
    for c in range(C):
        for f in inst.flows_of(c):
            for t in range(H + 1):
                coef = {Z(c, t): float(vol[f])}
                coef.update({X(int(f), s): -1.0 for s in range(t)})
                add(coef, -np.inf, 0.0)
    for u, v in inst.starts_after.tolist():
        for f in inst.flows_of(v):
            for t in range(H):
                add({X(int(f), t): 1.0, Z(u, t): -1.0}, -np.inf, 0.0)
    A = sp.lil_matrix((len(rows), n))
    for i, coef in enumerate(rows):
        for j, a in coef.items():
            A[i, j] = a
    cost = np.zeros(n)
    cost[cvar] = 1.0
    integrality = np.ones(n)
    integrality[cvar] = 0
    bounds_hi = np.ones(n)
    bounds_hi[cvar] = np.inf
    from scipy.optimize import Bounds

    res = milp(cost, constraints=LinearConstraint(A.tocsr(), lo, hi), integrality=integrality,
               bounds=Bounds(np.zeros(n), bounds_hi))
    assert res.status == 0
    return float(res.fun)


def test_example7_reduction_instance() -> None:
    """Spec Example 7: Delta_j = 5, T_j = 6, slotted optimum 9 = 8 + 1 (our ILP); DMA-SRT,
    feasible, is never below it."""
    inst = example7()
    assert rooted_tree_kind(inst, 0) == "fan-in"
    assert inst.aggregate_size[0] == 5 and inst.critical_path[0] == 6
    opt = slotted_optimum(inst)
    assert opt == pytest.approx(9.0)
    for seed in range(5):
        for l_I in (1, 2, "sqrt"):
            res = coflowopt.run(inst, "dma-srt", params={"l_I": l_I}, seed=seed)
            assert res.valid.end >= opt - 1e-9


def test_fan_out_by_reversal() -> None:
    inst = dags.rooted_trees(1, ports=4, kind="fan-out", nodes=6, seed=3, mix=TINY)
    assert rooted_tree_kind(inst, 0) == "fan-out"
    for seed in range(3):
        res = coflowopt.run(inst, "dma-srt", seed=seed)
        assert res.valid.end >= inst.critical_path[0] - 1e-9


@pytest.mark.parametrize("kind", ["fan-in", "fan-out"])
@pytest.mark.parametrize("l_I", [1, 3, "sqrt"])
def test_valid_on_rooted_trees(kind: str, l_I: int | str) -> None:
    for seed in range(3):
        inst = dags.rooted_trees(3, ports=4, kind=kind, nodes=(1, 6), seed=seed, mix=TINY)
        res = coflowopt.run(inst, "dma-rt", params={"l_I": l_I}, seed=seed)
        lb = max(inst.aggregate_size.max(), inst.critical_path.max())
        assert res.valid.end >= lb - 1e-9
        one = dags.rooted_trees(1, ports=4, kind=kind, nodes=(1, 7), seed=seed, mix=TINY)
        coflowopt.run(one, "dma-srt", params={"l_I": l_I}, seed=seed)


@pytest.mark.parametrize("gen", ["ggen_fan_in_fan_out", "layered_dags", "tpcds_like"])
def test_other_generators_run_or_refuse(gen: str) -> None:
    """On the general-DAG generators dma-rt runs exactly when every job is a rooted tree, and
    otherwise refuses in one line naming the job."""
    make = getattr(dags, gen)
    for seed in range(3):
        inst = make(3, ports=4, seed=seed, mix=TINY)
        trees = all(rooted_tree_kind(inst, j) for j in range(inst.n_jobs))
        if trees:
            coflowopt.run(inst, "dma-rt", seed=seed)
        else:
            with pytest.raises(UnsupportedInstance) as exc:
                coflowopt.run(inst, "dma-rt", seed=seed)
            assert "\n" not in str(exc.value) and "job " in str(exc.value)


def test_same_seed_same_schedule() -> None:
    inst = dags.rooted_trees(4, ports=4, nodes=(2, 6), seed=9, mix=TINY)
    a = coflowopt.run(inst, "dma-rt", seed=3, keep_schedule=True).schedule
    b = coflowopt.run(inst, "dma-rt", seed=3, keep_schedule=True).schedule
    assert a == b


def test_sqrt_interval_length() -> None:
    """l_I = max(1, round(max(Delta_j, T_j) / sqrt(mu_j))): Example 7 has mu 10, max 6."""
    inst = example7()
    assert interval_length(inst, 0, slot_demand(inst), "sqrt") == round(6 / np.sqrt(10))
    assert interval_length(inst, 0, slot_demand(inst), 4) == 4
    with pytest.raises(ValueError, match="l_I"):
        DMASRTParams(l_I=0)
    with pytest.raises(ValueError, match="l_I"):
        DMASRTParams(l_I="cube")


def test_refusals_name_the_job() -> None:
    two = dags.rooted_trees(2, ports=3, nodes=3, seed=0, mix=TINY)
    with pytest.raises(UnsupportedInstance, match="2 jobs"):
        coflowopt.run(two, "dma-srt")
    diamond = build_instance(2, jobs=[JobSpec([CoflowSpec([(0, 0, 1.0)]) for _ in range(4)],
                                              [(0, 1), (0, 2), (1, 3), (2, 3)], id="dia")])
    for name in ("dma-srt", "dma-rt"):
        with pytest.raises(UnsupportedInstance) as exc:
            coflowopt.run(diamond, name)
        assert "'dia'" in str(exc.value) and "\n" not in str(exc.value)
    late = build_instance(2, jobs=[JobSpec([CoflowSpec([(0, 0, 1.0)])], id="late",
                                           release=1.0)])
    with pytest.raises(UnsupportedInstance, match="gdm-rt"):
        coflowopt.run(late, "dma-rt")
    with pytest.raises(ValueError, match="1/e"):
        DMASRTParams(beta=0.2)


def _reference_intervals(inst: coflowopt.Instance, flow: np.ndarray, gs: np.ndarray,
                         ge: np.ndarray, lI: int, rule: str
                         ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Step 6 of spec 5.2 interval by interval, in plain Python: interval ``k`` holds every
    piece's share of slots ``[k l_I, (k+1) l_I)``, added per flow; its items by flow become
    ``BNA(D_k)`` (as they are where no port is shared), one interval after another, empty
    ones skipped; pieces then by (flow, start), touching ones joined."""
    items: dict[int, dict[int, int]] = {}
    for f, a, b in zip(flow.tolist(), gs.tolist(), ge.tolist(), strict=True):
        for k in range(a // lI, (b - 1) // lI + 1):
            share = min(b, (k + 1) * lI) - max(a, k * lI)
            items.setdefault(k, {})[f] = items.get(k, {}).get(f, 0) + share
    out, at = [], 0
    for k in sorted(items):
        fl = sorted(items[k])
        amt = np.array([items[k][f] for f in fl])
        src = np.array([inst.flow_src[f] for f in fl])
        dst = np.array([inst.flow_dst[f] for f in fl])
        if len(set(src.tolist())) == len(fl) and len(set(dst.tolist())) == len(fl):
            out += [(f, at, int(a)) for f, a in zip(fl, amt, strict=True)]
            at += int(amt.max())
            continue
        item, s, n, eff = bna_items(src, dst, amt, rule=rule)
        out += [(fl[i], at + int(a), int(b)) for i, a, b in zip(item, s, n, strict=True)]
        at += eff
    return join_touching_pieces(out)


@pytest.mark.parametrize(("rule", "wide"), [("hk", False), ("maxweight", False),
                                            ("auto", False), ("hk", True), ("auto", True)])
def test_runs_match_interval_by_interval(rule: str, wide: bool,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Step 6 by runs of constant membership (one BNA per run, repeated; compiled for all
    runs under "hk" and for those of more than 24 active ports under "auto") gives the pieces
    of the interval-by-interval resolution, for l_I = 1, 2, 3, 7 and "sqrt", on fan-in trees
    with long flows (runs of many intervals) and few ports (shared pairs), and on 40 ports
    with coflows 1 to 30 flows wide (runs on both sides of "auto"'s 24 ports)."""
    seen: list[tuple] = []
    orig = rooted_mod._resolve_intervals

    def record(inst, flow, gs, ge, lI, rule_):  # type: ignore[no-untyped-def]
        seen.append((flow.copy(), gs.copy(), ge.copy(), lI))
        return orig(inst, flow, gs, ge, lI, rule_)

    monkeypatch.setattr(rooted_mod, "_resolve_intervals", record)
    long_flows = CoflowClassMix.single(1, 3, 2, 12)
    for seed in range(3):
        inst = (dags.rooted_trees(2, ports=40, nodes=(2, 5), seed=seed,
                                  mix=CoflowClassMix.single(1, 30, 1, 6)) if wide else
                dags.rooted_trees(2, ports=3, nodes=(2, 6), seed=seed, mix=long_flows))
        d = slot_demand(inst)
        for j in range(inst.n_jobs):
            for l_I in (1, 2, 3, 7, "sqrt"):
                seen.clear()
                plan = dma_srt_plan(inst, j, d, rng=np.random.default_rng(seed), rule=rule,
                                    l_I=l_I)
                flow, gs, ge, lI = seen[0]
                f, s, n = _reference_intervals(inst, flow, gs, ge, lI, rule)
                assert np.array_equal(plan.flow, f) and np.array_equal(plan.start, s)
                assert np.array_equal(plan.length, n)


@pytest.mark.parametrize("seed", range(6))
def test_one_job_read_alone(seed):
    """DMA-SRT reads each job on its own: the order of ``_tree`` is the instance-wide
    ``job_topological_order`` restricted to the job (jobs interleaved in position, edges
    against the positions), its parents are the job's edges, and ``aggregate_slots`` from the
    jobs' own flows is the port-load maximum over every flow of those jobs."""
    from coflowopt.model import Fabric, Instance
    from coflowopt.schedulers.dag.dma import aggregate_slots, job_topological_order

    rng = np.random.default_rng(seed)
    C, J, m = 14, 4, 5
    cjob = rng.integers(0, J, C)
    cjob[:J] = np.arange(J)
    rank = rng.permutation(C)           # edges go up this rank: acyclic, not by position
    edges = [(a, b) for a in range(C) for b in range(C)
             if cjob[a] == cjob[b] and rank[a] < rank[b] and rng.random() < 0.3]
    per = rng.integers(0, 4, C)
    per[-1] = 2                         # the last position names the coflow count
    fc = np.repeat(np.arange(C), per)
    F = fc.size
    inst = Instance.from_arrays(
        Fabric.uniform(m, 1.0), rng.integers(0, m, F), rng.integers(0, m, F),
        rng.integers(1, 5, F).astype(float), fc, coflow_job=cjob, n_jobs=J,
        starts_after=np.array(edges, dtype=np.int64).reshape(-1, 2))
    topo = job_topological_order(inst)
    d = slot_demand(inst)
    for j in range(J):
        want = topo[inst.coflow_job[topo] == j]
        for kind in ("fan-in", "fan-out"):
            order, parent = rooted_mod._tree(inst, j, kind)
            assert order.tolist() == (want if kind == "fan-in" else want[::-1]).tolist()
            mine = [(a, b) for a, b in edges if cjob[a] == j]
            assert parent == ({a: b for a, b in mine} if kind == "fan-in"
                              else {b: a for a, b in mine})
    for jobs in ([0], [1, 3], [0, 1, 2, 3], []):
        sel = np.isin(inst.coflow_job[inst.flow_coflow], jobs)
        loads = [np.bincount(p[sel], weights=d[sel], minlength=m)
                 for p in (inst.flow_src, inst.flow_dst)]
        want_delta = int(max(x.max() for x in loads)) if sel.any() else 0
        assert aggregate_slots(inst, np.array(jobs, dtype=np.int64), d) == want_delta
