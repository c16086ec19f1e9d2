"""DMA (dag-coflows spec section 4): spec Examples 3 and 6, the makespan identity
``sum_t eff(M(t))`` against a slot-by-slot brute force, validity on every DAG generator,
seeds and refusals."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest
from strategies import join_touching_pieces

import coflowopt
from coflowopt.model import CoflowSpec, JobSpec, build_instance
from coflowopt.proofs_check.instances import random_dag_jobs, sqrt_mu_fixture
from coflowopt.schedulers import UnsupportedInstance
from coflowopt.schedulers.dag import dma as dma_mod
from coflowopt.schedulers.dag.bna import bna_items
from coflowopt.schedulers.dag.dma import (
    DMAParams,
    _coflows_by_job,
    delay_and_merge,
    dma_plan,
    isolated_plan,
    job_topological_order,
)
from coflowopt.schedulers.dag.slots import plan_to_schedule, slot_demand
from coflowopt.validate import validate
from coflowopt.workloads import dags
from coflowopt.workloads.dags import CoflowClassMix

TINY = CoflowClassMix.single(1, 3, 1, 4)
GENERATORS = {
    "ggen_fan_in_fan_out": lambda s: dags.ggen_fan_in_fan_out(3, ports=4, nodes=(2, 5),
                                                              seed=s, mix=TINY),
    "rooted_trees": lambda s: dags.rooted_trees(3, ports=4, nodes=(2, 5), seed=s, mix=TINY),
    "rooted_trees_out": lambda s: dags.rooted_trees(3, ports=4, kind="fan-out",
                                                    nodes=(2, 5), seed=s, mix=TINY),
    "layered_dags": lambda s: dags.layered_dags(3, ports=4, layers=(2, 3), width=(1, 2),
                                                seed=s, mix=TINY),
    "tpcds_like": lambda s: dags.tpcds_like(2, ports=4, critical_path=(3, 4), scans=(2, 3),
                                            seed=s, mix=TINY),
}


def example3() -> coflowopt.Instance:
    a = JobSpec([CoflowSpec(np.array([[2, 0], [0, 2]]), id="a1"),
                 CoflowSpec(np.array([[0, 1], [0, 0]]), id="a2")], [(0, 1)], id="A")
    b = JobSpec([CoflowSpec(np.array([[0, 0], [2, 0]]), id="b1")], id="B")
    return build_instance(2, jobs=[a, b])


EX3_TABLE = {(0, 0): 5, (0, 1): 4, (0, 2): 4, (0, 3): 5, (1, 0): 5, (1, 1): 5, (1, 2): 4,
             (2, 0): 5, (4, 4): 5}


@pytest.mark.parametrize(("delays", "makespan"), sorted(EX3_TABLE.items()))
def test_example3_table(delays: tuple[int, int], makespan: int) -> None:
    """Spec Example 3: every cell of the delay table (idle slots compressed)."""
    inst = example3()
    plan = dma_plan(inst, np.array([0, 1]), slot_demand(inst), rng=np.random.default_rng(0),
                    delays=np.array(delays))
    assert plan.makespan == makespan
    assert validate(inst, plan_to_schedule(inst, plan)).end == makespan


@pytest.mark.parametrize(("beta", "expected"), [(1, Fraction(118, 25)), (2, Fraction(14, 3)),
                                                (4, Fraction(19, 4))])
def test_example3_expectation(beta: float, expected: Fraction) -> None:
    """Spec Example 3: exact expected makespan over the integer delay grid {0..floor(4/beta)}^2
    (the discretisation is ours: against our reconstruction)."""
    inst = example3()
    d = slot_demand(inst)
    hi = int(4 // beta)
    grid = [(x, y) for x in range(hi + 1) for y in range(hi + 1)]
    total = sum(dma_plan(inst, np.array([0, 1]), d, rng=np.random.default_rng(0), beta=beta,
                         delays=np.array(g)).makespan for g in grid)
    assert Fraction(total, len(grid)) == expected


@pytest.mark.parametrize("k", [2, 3])
def test_example6_sqrt_mu_fixture(k: int) -> None:
    """Spec Example 6: DMA on the sqrt(mu) fixture takes exactly OPT = k^2 (any seed)."""
    inst = sqrt_mu_fixture(k)
    for seed in range(3):
        res = coflowopt.run(inst, "dma", seed=seed)
        assert res.valid.end == k * k


def _brute_makespan(inst: coflowopt.Instance, delays: np.ndarray) -> int:
    """sum_t eff(M(t)) slot by slot over the delayed isolated schedules (step 3 by brute
    force)."""
    d = slot_demand(inst)
    by_job = _coflows_by_job(inst, job_topological_order(inst))
    m = inst.ports
    slots: dict[int, np.ndarray] = {}
    for j in range(inst.n_jobs):
        p = isolated_plan(inst, by_job[j], d)
        for f, s, n in zip(p.flow, p.start, p.length, strict=True):
            for t in range(int(s), int(s + n)):
                M = slots.setdefault(t + int(delays[j]), np.zeros((m, m), dtype=int))
                M[inst.flow_src[f], inst.flow_dst[f]] += 1
    return sum(int(max(M.sum(0).max(), M.sum(1).max())) for M in slots.values())


def test_makespan_is_sum_of_slot_eff() -> None:
    rng = np.random.default_rng(5)
    for _ in range(15):
        inst = random_dag_jobs(rng, jobs=(2, 4), per_job=(1, 3), max_coflows=8,
                               releases=False)
        delays = rng.integers(0, 4, size=inst.n_jobs)
        plan = dma_plan(inst, np.arange(inst.n_jobs), slot_demand(inst), rng=rng,
                        delays=delays)
        assert plan.makespan == _brute_makespan(inst, delays)
        validate(inst, plan_to_schedule(inst, plan))


@pytest.mark.parametrize("gen", sorted(GENERATORS))
@pytest.mark.parametrize("name", ["bna", "dma"])
def test_valid_on_every_generator(gen: str, name: str) -> None:
    for seed in range(3):
        inst = GENERATORS[gen](seed)
        res = coflowopt.run(inst, name, seed=seed)        # validated (streamed)
        lb = max(inst.aggregate_size.max(), inst.critical_path.max())
        assert res.valid.end >= lb - 1e-9


def test_same_seed_same_schedule() -> None:
    inst = GENERATORS["layered_dags"](4)
    a = coflowopt.run(inst, "dma", seed=7, keep_schedule=True).schedule
    b = coflowopt.run(inst, "dma", seed=7, keep_schedule=True).schedule
    assert a == b


def test_priority_order_on_a_shared_pair() -> None:
    """Two one-flow jobs on one pair, no delay: the job first in ``order`` is served first."""
    inst = build_instance(1, jobs=[JobSpec([CoflowSpec([(0, 0, 2.0)])], id="x"),
                                   JobSpec([CoflowSpec([(0, 0, 1.0)])], id="y")])
    d = slot_demand(inst)
    for order, first in (([0, 1], 0), ([1, 0], 1)):
        plan = dma_plan(inst, np.array([0, 1]), d, rng=np.random.default_rng(0),
                        delays=np.array([0, 0]), order=np.array(order))
        assert plan.makespan == 3
        assert int(plan.start[plan.flow == first].min()) == 0


def test_release_refused_in_one_line() -> None:
    inst = build_instance(2, jobs=[JobSpec([CoflowSpec([(0, 0, 1.0)])], id="early"),
                                   JobSpec([CoflowSpec([(0, 1, 1.0)])], id="late",
                                           release=2.0)])
    with pytest.raises(UnsupportedInstance) as exc:
        coflowopt.run(inst, "dma")
    msg = str(exc.value)
    assert "\n" not in msg and "'late'" in msg and "gdm" in msg


def test_beta_checked() -> None:
    with pytest.raises(ValueError, match="1/e"):
        DMAParams(beta=0.3)
    DMAParams(beta=0.5)


def _reference_merge(inst: coflowopt.Instance, plans: list, delays: np.ndarray,
                     rule: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Spec 4.4 in plain Python: runs of constant membership between consecutive piece
    boundaries, each run's pieces (by plan, then flow) resolved by ``BNA(len * M)`` at the
    compressed time, unshared runs as they are; pieces then by (flow, start), touching ones
    joined."""
    pieces = [(j, int(f), int(s) + int(delays[j]), int(s + n) + int(delays[j]))
              for j, p in enumerate(plans)
              for f, s, n in zip(p.flow, p.start, p.length, strict=True)]
    bounds = sorted({x for _, _, a, b in pieces for x in (a, b)})
    out, at = [], 0
    for lo, hi in itertools.pairwise(bounds):
        mem = sorted((j, f) for j, f, a, b in pieces if a <= lo and hi <= b)
        if not mem:
            continue
        L = hi - lo
        src = np.array([inst.flow_src[f] for _, f in mem])
        dst = np.array([inst.flow_dst[f] for _, f in mem])
        if len(set(src.tolist())) == len(mem) and len(set(dst.tolist())) == len(mem):
            out += [(f, at, L) for _, f in mem]
            at += L
            continue
        item, s, n, eff = bna_items(src, dst, np.full(len(mem), L), rule=rule)
        out += [(mem[i][1], at + int(a), int(b)) for i, a, b in zip(item, s, n, strict=True)]
        at += eff
    return join_touching_pieces(out)


@pytest.mark.parametrize("rule", ["hk", "maxweight"])
def test_merge_matches_run_by_run_reference(rule: str, monkeypatch: pytest.MonkeyPatch
                                            ) -> None:
    """The compiled merge (int32 columns, colliding runs resolved a block at a time, the
    blocks scattered by flow) equals a plain run-by-run resolution; blocks of 3 pieces force
    many blocks and runs larger than a block."""
    monkeypatch.setattr(dma_mod, "_BLOCK", 3)
    rng = np.random.default_rng(11)
    for _ in range(8):
        inst = random_dag_jobs(rng, jobs=(2, 4), per_job=(1, 3), max_coflows=8,
                               releases=False)
        d = slot_demand(inst)
        by_job = _coflows_by_job(inst, job_topological_order(inst))
        plans = [isolated_plan(inst, c, d, rule=rule) for c in by_job]
        delays = rng.integers(0, 4, size=inst.n_jobs)
        got = delay_and_merge(inst, plans, delays, rule=rule)
        f, s, n = _reference_merge(inst, plans, delays, rule)
        assert np.array_equal(got.flow, f) and np.array_equal(got.start, s)
        assert np.array_equal(got.length, n)
        validate(inst, plan_to_schedule(inst, got))


def test_unit_eff_sweep_matches_per_port_counts() -> None:
    """``run_eff`` of unit pieces (a sweep over the runs keeping the ports at each load)
    against its per-port difference arrays (the weighted form, given weights of 1) and a
    brute count per run."""
    rng = np.random.default_rng(3)
    for _ in range(200):
        m, P = int(rng.integers(1, 6)), int(rng.integers(1, 40))
        n_runs = int(rng.integers(1, 15))
        ra = rng.integers(0, n_runs, P)
        rb = ra + 1 + rng.integers(0, n_runs - ra)
        port = np.concatenate([rng.integers(0, m, P), m + rng.integers(0, m, P)])
        got = dma_mod.run_eff(ra, rb, port, 2 * m, n_runs, dma_mod.NO_W)
        weighted = dma_mod.run_eff(ra, rb, port, 2 * m, n_runs, np.ones(P, np.int64))
        brute = np.zeros(n_runs, np.int64)
        for r in range(n_runs):
            on = (ra <= r) & (r < rb)
            brute[r] = np.bincount(port[np.concatenate([on, on])], minlength=2 * m).max()
        assert np.array_equal(got, weighted) and np.array_equal(got, brute)


def test_slot_runs_match_unique_and_searchsorted() -> None:
    """The run boundaries marked on the slots (``_slot_runs``) against the sort
    (``np.unique``, ``np.searchsorted``) that ``cut_runs`` takes for sparse slots."""
    rng = np.random.default_rng(8)
    for _ in range(100):
        P = int(rng.integers(1, 30))
        st = rng.integers(0, 60, P)
        en = st + rng.integers(1, 20, P)
        bounds, ra, rb = dma_mod._slot_runs(st, en, int(en.max()) + 1, np.zeros(0, np.int32))
        u = np.unique(np.concatenate([st, en]))
        assert np.array_equal(bounds, u)
        assert np.array_equal(ra, np.searchsorted(u, st))
        assert np.array_equal(rb, np.searchsorted(u, en))


@pytest.mark.parametrize("seed", range(4))
def test_assemble_ordered_is_the_plan_ordered_for_the_backfill(seed):
    """``assemble_ordered``: the blocks joined and ordered by (start, flow) as
    ``ordered_pieces(assemble_pieces(blocks))`` gives them (touching pieces of a flow joined
    across blocks, zero-length pieces dropped, shifted, int32 while the slots fit), handed
    over in chunks that follow each other in time, with the plan's makespan and number of
    pieces; also when the starts lie too far apart to count."""
    from coflowopt.schedulers.dag.backfill import ordered_pieces
    from coflowopt.schedulers.dag.dma import assemble_ordered, assemble_pieces

    rng = np.random.default_rng(seed)
    F = 30
    spread = 1 if seed < 3 else 1 << 22      # seed 3: starts beyond 4 n + 2^20
    pieces = []
    for f in range(F):      # each flow: runs of touching pieces with gaps between them
        t = int(rng.integers(0, 5))
        for _ in range(int(rng.integers(0, 8))):
            n = int(rng.integers(0, 4))
            pieces.append((f, t * spread, n))
            t += n + int(rng.integers(0, 2)) * int(rng.integers(1, 4))
    rng.shuffle(pieces)
    cols = np.array(pieces, dtype=np.int64).reshape(-1, 3).T

    def blocks(dt):
        parts = np.array_split(np.arange(cols.shape[1]), 3)
        return [tuple(cols[c, p].astype(dt) for c in range(3)) for p in parts]

    plan = assemble_pieces(blocks(np.int32), F)
    cases = ((0, np.int32, 1 << 22), (17, np.int32, 5), (2 ** 31 - 2, np.int64, 1))
    for shift, dt, chunk in cases:
        if spread > 1 and dt is np.int64:
            continue
        parts: list = []
        span, n = assemble_ordered(blocks(np.int32), F, shift, parts.append, chunk=chunk)
        want = ordered_pieces(plan, F, shift)
        assert (span, n) == (plan.makespan, plan.n_pieces)
        assert all(c.dtype == dt for p in parts for c in p) and want[0].dtype == dt
        if spread == 1 and chunk < 1 << 22:   # chunks of about `chunk` pieces, in time order
            assert len(parts) > 1
        starts = [p[1] for p in parts if p[1].size]
        assert all(a[-1] < b[0] for a, b in itertools.pairwise(starts))
        for c in range(3):
            got = np.concatenate([p[c] for p in parts]) if parts else np.zeros(0)
            assert got.tolist() == want[c].tolist()
    parts = []
    assert assemble_ordered([], F, 0, parts.append) == (0, 0)
    assert all(c.size == 0 for p in parts for c in p)
