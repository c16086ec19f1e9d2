"""The backfilling rule of G-DM-BF (Shafiee and Ghaderi, IEEE/ACM ToN 2021, Section VII; our
reconstruction [R]/[P]): the worked example, the event-driven
kernel against the slot-by-slot rule on the shared allocator, and "BF never increases a
completion time"."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import coflowopt
from coflowopt.metrics import weighted_jct
from coflowopt.model import CoflowSpec, JobSpec, build_instance
from coflowopt.proofs_check.instances import example4, random_dag_jobs
from coflowopt.schedulers.dag import backfill as bfmod
from coflowopt.schedulers.dag.backfill import backfill, backfill_reference
from coflowopt.schedulers.dag.gdm import GDMParams, coflow_priority, gdm_plan, release_slots
from coflowopt.schedulers.dag.om_lp import om_lp_plan
from coflowopt.schedulers.dag.slots import SlotPlan, plan_to_schedule, slot_demand
from coflowopt.validate import validate


def _cells(plan: SlotPlan) -> list[tuple[int, int]]:
    return sorted((int(f), int(s) + k) for f, s, n in zip(plan.flow, plan.start, plan.length,
                                                          strict=True) for k in range(n))


def _setup(seed: int, beta: float = 1.0, **kw):
    inst = random_dag_jobs(np.random.default_rng(seed), **kw)
    base, g, _ = gdm_plan(inst, GDMParams(beta=beta), np.random.default_rng(seed))
    return (inst, base, coflow_priority(inst, g.order), slot_demand(inst),
            release_slots(inst))


def test_example4_gdm_bf():
    """Example 4: G-DM-BF completes job0 at 8, job1 at 2, job2 at 4; sum w C = 22 -- against
    our reconstruction of BF ([R]/[P])."""
    inst = example4()
    r = coflowopt.run(inst, "gdm-bf", seed=0)
    assert r.valid.job_completion.tolist() == [8.0, 2.0, 4.0]
    assert weighted_jct(r.valid) == pytest.approx(22.0)


def test_example4_both_engines():
    inst = example4()
    base, g, _ = gdm_plan(inst, GDMParams(), np.random.default_rng(0))
    pr, d, rel = coflow_priority(inst, g.order), slot_demand(inst), release_slots(inst)
    a = backfill(inst, base, pr, d, rel)
    b = backfill(inst, base, pr, d, rel, engine="reference")
    assert _cells(a) == _cells(b)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 100_000), beta=st.sampled_from([0.5, 1.0, 4.0]))
def test_fast_equals_reference(seed, beta):
    """The event-driven kernel serves exactly the (flow, slot) cells of the slot-by-slot rule
    run through ``coflowopt.sim.allocate.greedy``."""
    inst, base, pr, d, rel = _setup(seed, beta, ports=(2, 4), jobs=(1, 5), max_coflows=10,
                                    flows=(1, 4), vmax=4)
    a = backfill(inst, base, pr, d, rel)
    b = backfill_reference(inst, base, pr.astype(float), d, rel)
    assert _cells(a) == _cells(b)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 100_000))
def test_bf_never_later(seed):
    """BF never increases any flow's, coflow's or job's completion time against the base plan
    (both validated), on random DAG jobs with releases."""
    inst, base, pr, d, rel = _setup(seed, ports=(2, 4), jobs=(1, 5), max_coflows=10,
                                    flows=(1, 3))
    bf = backfill(inst, base, pr, d, rel)
    v0 = validate(inst, plan_to_schedule(inst, base))
    v1 = validate(inst, plan_to_schedule(inst, bf))
    tol = 1e-9
    assert (v1.flow_completion <= v0.flow_completion + tol).all()
    assert (v1.coflow_completion <= v0.coflow_completion + tol).all()
    assert (v1.job_completion <= v0.job_completion + tol).all()
    # every flow gets exactly its demand, no port twice in a slot
    assert np.array_equal(np.bincount(bf.flow, weights=bf.length, minlength=inst.n_flows), d)


def test_bf_on_sequential_base():
    """BF of the one-coflow-at-a-time plan (om-lp's shape) in an arbitrary topological order:
    validated, never later, and it fills: two coflows on disjoint ports overlap."""
    inst = build_instance(2, jobs=[
        JobSpec([CoflowSpec([(0, 0, 3.0)], id="a")], id="A", weight=1.0),
        JobSpec([CoflowSpec([(1, 1, 2.0)], id="b")], id="B", weight=1.0)])
    d, rel = slot_demand(inst), release_slots(inst)
    base, _ = om_lp_plan(inst, np.array([0, 1]), d, rel)
    assert base.makespan == 5
    bf = backfill(inst, base, np.array([0, 1]), d, rel)
    v = validate(inst, plan_to_schedule(inst, bf))
    assert v.job_completion.tolist() == [3.0, 2.0]


def test_release_and_precedence_respected_when_filling():
    """A released-late job and a successor coflow are not pulled ahead of their release or of
    their predecessor's completion."""
    inst = build_instance(2, jobs=[
        JobSpec([CoflowSpec([(0, 0, 2.0)], id="p"), CoflowSpec([(1, 1, 1.0)], id="q")],
                [(0, 1)], id="A"),
        JobSpec([CoflowSpec([(1, 0, 1.0)], id="late")], id="L", release=3.0)])
    d, rel = slot_demand(inst), release_slots(inst)
    base, _ = om_lp_plan(inst, np.array([0, 1, 2]), d, rel)
    bf = backfill(inst, base, np.array([0, 1, 2]), d, rel)
    v = validate(inst, plan_to_schedule(inst, bf))
    assert v.coflow_start[1] >= v.coflow_completion[0]
    assert v.coflow_start[2] >= 3.0


def test_event_driven_on_long_flows():
    """Long flows cost events, not slots: the same instance at a thousand and at a million slots
    per flow makes the same work (the plan's counters), two events (the start, and the end of a
    and c, when b becomes ready)."""
    plans = []
    for size in (1e3, 1e6):
        inst = build_instance(2, jobs=[
            JobSpec([CoflowSpec([(0, 0, size)], id="a"), CoflowSpec([(0, 1, size)], id="b")],
                    [(0, 1)], id="A"),
            JobSpec([CoflowSpec([(1, 1, size)], id="c")], id="B")])
        d, rel = slot_demand(inst), release_slots(inst)
        base, _ = om_lp_plan(inst, np.array([0, 1, 2]), d, rel)
        bf = backfill(inst, base, np.array([0, 1, 2]), d, rel)
        assert bf.makespan == 2 * size  # c runs beside a
        plans.append(bf)
    assert plans[0].counters == plans[1].counters
    assert plans[1].counters["events"] == 2


def test_bad_inputs_are_one_line_errors():
    inst, base, pr, d, rel = _setup(1, ports=(2, 2), jobs=(2, 2), max_coflows=4)
    with pytest.raises(ValueError, match="priority needs one rank per coflow"):
        backfill(inst, base, pr[:-1], d, rel)
    with pytest.raises(ValueError, match="release_slot"):
        backfill(inst, base, pr, d, rel[:-1])
    short = SlotPlan(base.flow[1:], base.start[1:], base.length[1:])
    with pytest.raises(ValueError, match=r"gives flow \d+ .* it needs"):
        backfill(inst, short, pr, d, rel)
    with pytest.raises(ValueError, match="engine"):
        backfill(inst, base, pr, d, rel, engine="slow")  # type: ignore[arg-type]
    early = SlotPlan(base.flow, base.start - 1 - base.start.min(), base.length)
    with pytest.raises(ValueError, match=r"base piece \d+ starts at slot -1, before 0"):
        backfill(inst, early, pr, d, rel)


@pytest.mark.parametrize("seed", range(5))
def test_base_order_equals_a_lexsort(seed):
    """The kernel's base pieces by (start, flow), ties in plan order, empty pieces out: the two
    counting sorts against numpy's lexsort (random pieces, many ties; int32 and int64
    orders)."""
    from coflowopt.schedulers.dag.backfill import _start_flow_order

    rng = np.random.default_rng(seed)
    n, F = 3000, 40
    flow = rng.integers(0, F, n)
    start = rng.integers(0, 60, n)
    length = rng.integers(0, 3, n)           # a third empty
    keep = np.flatnonzero(length > 0)
    want = keep[np.lexsort((flow[keep], start[keep]))]
    for dt in (np.int32, np.int64):
        got = _start_flow_order(flow, start, length, F, int(start.max()) + 1, np.zeros(0, dt))
        assert got.dtype == dt and got.tolist() == want.tolist()


def test_base_with_a_far_piece_takes_the_lexsort_path():
    """A redundant base piece 3 million slots out (its flow is done long before) sends the
    base order through the lexsort path instead of a count per slot; the kernel skips the
    piece, so the plan served is the one without it."""
    inst, base, pr, d, rel = _setup(3, ports=(3, 4), jobs=(2, 3), max_coflows=4)
    far = SlotPlan(np.r_[base.flow, base.flow[:1]], np.r_[base.start, 3_000_000],
                   np.r_[base.length, 1])
    a, b = backfill(inst, base, pr, d, rel), backfill(inst, far, pr, d, rel)
    assert _cells(a) == _cells(b) and a.makespan == b.makespan


def test_infeasible_base_is_refused():
    """A base plan that serves a successor before its predecessor is reported, not filled."""
    inst = build_instance(2, jobs=[JobSpec([CoflowSpec([(0, 0, 1.0)], id="p"),
                                            CoflowSpec([(1, 1, 1.0)], id="q")], [(0, 1)],
                                           id="A")])
    d, rel = slot_demand(inst), release_slots(inst)
    base = SlotPlan(np.array([0, 1]), np.array([1, 0]), np.array([1, 1]))
    for engine in ("fast", "reference"):
        with pytest.raises(ValueError, match="infeasible base"):
            backfill(inst, base, np.array([0, 1]), d, rel, engine=engine)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 100_000), beta=st.sampled_from([0.5, 1.0, 4.0]))
def test_fast_equals_reference_many_idle_ports(seed, beta):
    """Fabrics of 65-200 ports (two to four blocks of the kernel's port event table), a few
    flows on them, so most ports are idle at every event; unit-size volumes make holders run
    out at the slots where base pieces end and jobs are released.  Same (flow, slot) cells as
    the slot-by-slot rule, and the pieces are maximal runs in (start, ingress port) order."""
    inst, base, pr, d, rel = _setup(seed, beta, ports=(65, 200), jobs=(2, 6), max_coflows=12,
                                    flows=(1, 5), vmax=2)
    a = backfill(inst, base, pr, d, rel)
    b = backfill_reference(inst, base, pr.astype(float), d, rel)
    assert _cells(a) == _cells(b)
    key = np.lexsort((inst.flow_src[a.flow], a.start))
    assert np.array_equal(key, np.arange(a.flow.size))  # emitted by (start, ingress port)
    o = np.lexsort((a.start, a.flow))
    f, s, n = a.flow[o], a.start[o], a.length[o]
    assert not ((f[1:] == f[:-1]) & (s[1:] == s[:-1] + n[:-1])).any()  # no touching pieces


def test_holder_out_base_end_and_release_at_one_slot():
    """Hand-worked, on three blocks of ports (0, 70, 129 of 130): a flow backfilled from slot 0
    runs out at slot 2, where another flow's base piece ends, its own base piece starts (and is
    skipped: no data left) and a job is released; the released flows take the freed ports at
    slot 2.  Cells f0: 0, 1; f1: 0, 1; f2: 2; f3: 2 -- the slot-by-slot rule agrees."""
    inst = build_instance(130, jobs=[
        JobSpec([CoflowSpec([(0, 0, 2.0)], id="a")], id="A"),
        JobSpec([CoflowSpec([(70, 70, 2.0)], id="b")], id="B"),
        JobSpec([CoflowSpec([(129, 129, 1.0), (0, 70, 1.0)], id="l")], id="L", release=2.0)])
    d, rel = slot_demand(inst), release_slots(inst)
    base = SlotPlan(np.array([0, 1, 2, 3]), np.array([0, 2, 4, 5]), np.array([2, 2, 1, 1]))
    pr = np.array([0, 1, 2])
    a = backfill(inst, base, pr, d, rel)
    want = [(0, 0), (0, 1), (1, 0), (1, 1), (2, 2), (3, 2)]
    assert _cells(a) == want
    assert _cells(backfill_reference(inst, base, pr.astype(float), d, rel)) == want
    assert a.makespan == 3


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 100_000), beta=st.sampled_from([0.5, 1.0, 4.0]))
def test_repair_heap_grown_mid_repair(seed, beta):
    """The repair heap starting with room for one key: the repair step stops whenever it is
    full (while keying the listed ports, or after a pop) and goes on in a grown heap.  The
    same pieces, in the same order, as with the heap's usual room, and the same cells as the
    slot-by-slot rule."""
    inst, base, pr, d, rel = _setup(seed, beta, ports=(2, 12), jobs=(2, 6), max_coflows=12,
                                    flows=(1, 8), vmax=4)
    a = backfill(inst, base, pr, d, rel)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(bfmod, "_HEAP_ROOM", 0)
        b = backfill(inst, base, pr, d, rel)
    for col in ("flow", "start", "length"):
        assert np.array_equal(getattr(a, col), getattr(b, col))
    assert a.counters == b.counters
    assert _cells(b) == _cells(backfill_reference(inst, base, pr.astype(float), d, rel))


@pytest.mark.parametrize("seed", range(3))
def test_ordered_pieces_against_a_lexsort(seed):
    """``ordered_pieces``: the pieces of positive length by (start, flow), shifted, int32
    while every slot fits and int64 past it."""
    rng = np.random.default_rng(seed)
    n, F = 2000, 50
    # a plan's pieces: no two of one flow start at one slot
    cells = rng.choice(F * 80, size=n, replace=False)
    flow, start = cells % F, cells // F
    length = rng.integers(0, 4, n)
    keep = np.flatnonzero(length > 0)
    want = keep[np.lexsort((flow[keep], start[keep]))]
    for shift, dt in ((0, np.int32), (1000, np.int32), (2 ** 31 - 60, np.int64)):
        f, s, ln = bfmod.ordered_pieces(SlotPlan(flow, start, length), F, shift)
        assert f.dtype == s.dtype == ln.dtype == dt
        assert f.tolist() == flow[want].tolist()
        assert s.tolist() == (start[want] + shift).tolist()
        assert ln.tolist() == length[want].tolist()
    # no piece: int32 as well, so that it does not widen the groups it is joined with
    z = np.zeros(0, np.int64)
    assert all(c.dtype == np.int32 and c.size == 0
               for c in bfmod.ordered_pieces(SlotPlan(z, z, z), F, 5))


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 100_000), beta=st.sampled_from([0.5, 1.0, 4.0]),
       rooted=st.booleans())
def test_gdm_base_ordered_group_by_group(seed, beta, rooted):
    """G-DM-BF's base (G-DM-RT-BF's on rooted trees), its groups ordered one by one and
    concatenated, is G-DM's plan by (start, flow) (a lexsort of ``gdm_plan``'s pieces, the
    same draws); backfilled it serves the cells of the slot-by-slot rule on that plan, and
    ``gdm-bf`` / ``gdm-rt-bf`` runs it."""
    from coflowopt.schedulers.dag.gdm import GDMRTParams, gdm_base
    from coflowopt.workloads import dags

    if rooted:
        inst = dags.rooted_trees(4, ports=4, kind="fan-in", nodes=(1, 6), seed=seed,
                                 arrival_rate=0.3)
        p = GDMRTParams(beta=beta, l_I=2)
    else:
        inst = random_dag_jobs(np.random.default_rng(seed), ports=(2, 6), jobs=(2, 6),
                               max_coflows=12)
        p = GDMParams(beta=beta)
    base, g, starts, span = gdm_base(inst, p, np.random.default_rng(seed), rooted=rooted)
    plan, _, starts2 = gdm_plan(inst, p, np.random.default_rng(seed), rooted=rooted)
    assert starts.tolist() == starts2.tolist() and span == plan.makespan
    keep = np.flatnonzero(plan.length > 0)
    o = keep[np.lexsort((plan.flow[keep], plan.start[keep]))]
    for got, col in zip(base, (plan.flow, plan.start, plan.length), strict=True):
        assert got.tolist() == col[o].tolist()
    pr, d, rel = coflow_priority(inst, g.order), slot_demand(inst), release_slots(inst)
    served = bfmod.backfill_ordered(inst, base, pr, d, rel)
    assert _cells(served) == _cells(backfill_reference(inst, plan, pr.astype(float), d, rel))
    out = coflowopt.run(inst, "gdm-rt-bf" if rooted else "gdm-bf", seed=seed,
                        params=p, keep_schedule=True)
    assert out.valid.meta["base_makespan_slots"] == plan.makespan
    assert out.valid.meta["makespan_slots"] == served.makespan
    want = validate(inst, plan_to_schedule(inst, served))
    assert np.array_equal(out.valid.flow_completion, want.flow_completion)


def test_ordered_base_refusals():
    """Pieces out of (start, flow) order, empty, naming no flow, before slot 0 or short of a
    flow's demand are refused with the piece and what is wrong."""
    inst, base, pr, d, rel = _setup(1, ports=(2, 3), jobs=(2, 3), max_coflows=5)
    f, s, ln = bfmod.ordered_pieces(base, inst.n_flows)
    assert f.size >= 3

    def run(f, s, ln):
        return bfmod.backfill_ordered(inst, (f, s, ln), pr, d, rel)

    run(f, s, ln)
    swap = np.r_[1, 0, np.arange(2, f.size)]
    with pytest.raises(ValueError, match=r"base piece 1 .* not after piece 0 .* by \(start, "):
        run(f[swap], s[swap], ln[swap])
    with pytest.raises(ValueError, match="base piece 2 has length 0"):
        run(f, s, np.r_[ln[:2], 0, ln[3:]])
    with pytest.raises(ValueError, match="base piece 0 names flow -1"):
        run(np.r_[-1, f[1:]], s, ln)
    with pytest.raises(ValueError, match="base piece 0 starts at slot -1"):
        run(f, np.r_[-1, s[1:]], ln)
    with pytest.raises(ValueError, match=r"gives flow \d+ .* it needs"):
        run(f[1:], s[1:], ln[1:])
    with pytest.raises(ValueError, match="columns differ"):
        run(f[1:], s, ln)


def _chunks_at(s: np.ndarray, cuts: np.ndarray) -> list[slice]:
    """Slices of the (start-ordered) pieces cut before each piece of ``cuts`` whose start
    differs from the piece before it (a chunk must start after the chunk before it)."""
    at = sorted({int(i) for i in cuts if 0 < i < s.size and s[i] != s[i - 1]})
    edges = [0, *at, s.size]
    return [slice(a, b) for a, b in itertools.pairwise(edges)]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 100_000), beta=st.sampled_from([0.5, 1.0, 4.0]),
       n_cuts=st.integers(0, 12), room=st.sampled_from([0, 8]))
def test_backfill_fed_in_chunks_equals_the_whole_base(seed, beta, n_cuts, room):
    """``BackfillRun`` fed the ordered base in chunks (cut at random places between two
    start slots, empty chunks among them, int32 and int64 ones alternating) serves the same
    plan, piece by piece, with the same counters, as the whole base fed at once, which serves
    the cells of the slot-by-slot rule; also when the repair heap starts empty (grown across
    chunks)."""
    inst, base, pr, d, rel = _setup(seed, beta, ports=(2, 5), jobs=(1, 6), max_coflows=12)
    f, s, ln = bfmod.ordered_pieces(base, inst.n_flows)
    whole = bfmod.backfill_ordered(inst, (f, s, ln), pr, d, rel)
    rng = np.random.default_rng(seed)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(bfmod, "_HEAP_ROOM", room)
        run = bfmod.BackfillRun(inst, pr, d, rel)
        for k, sl in enumerate(_chunks_at(s, rng.integers(0, max(1, s.size), n_cuts))):
            # every other chunk int64 (the output columns widened on the first)
            dt = np.int64 if k % 2 else np.int32
            run.feed((f[sl].astype(dt), s[sl].astype(dt), ln[sl].astype(dt)))
            run.feed((f[:0], s[:0], ln[:0]))
        got = run.finish()
    for col in ("flow", "start", "length"):
        assert getattr(got, col).tolist() == getattr(whole, col).tolist()
    assert got.counters == whole.counters
    assert _cells(whole) == _cells(backfill_reference(inst, base, pr.astype(float), d, rel))


def test_backfill_chunks_after_the_last_flow_is_done():
    """Chunks fed after every flow has been served (here two more copies of the base, later)
    are checked but change nothing; a chunk that does not start after the one before, or
    whose pieces are out of order, is refused naming the piece by its number across
    chunks."""
    inst, base, pr, d, rel = _setup(4, ports=(2, 3), jobs=(2, 3), max_coflows=5)
    f, s, ln = bfmod.ordered_pieces(base, inst.n_flows)
    whole = bfmod.backfill_ordered(inst, (f, s, ln), pr, d, rel)
    run = bfmod.BackfillRun(inst, pr, d, rel)
    run.feed((f, s, ln))
    late = int(s[-1] + ln.max()) + 1
    run.feed((f, s + late, ln))     # the loop ends in this one (every flow served)
    run.feed((f, s + 2 * late, ln))  # only checked
    got = run.finish()
    assert got.flow.tolist() == whole.flow.tolist() and got.counters == whole.counters
    run = bfmod.BackfillRun(inst, pr, d, rel)
    run.feed((f, s, ln))
    with pytest.raises(ValueError, match=rf"base piece {f.size} .* starts no later than piece "
                                         rf"{f.size - 1}"):
        run.feed((f, s, ln))
    run = bfmod.BackfillRun(inst, pr, d, rel)
    run.feed((f[:1], s[:1], ln[:1]))
    swap = np.r_[1, 0, np.arange(2, f.size - 1)] + 1
    with pytest.raises(ValueError, match=r"base piece 2 .* not after piece 1"):
        run.feed((f[swap], s[swap] + late, ln[swap]))
