"""Single-stage schedulers: the spec's worked examples, validity, work conservation."""

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import example_e1, instances

from coflowopt import CoflowSpec, Fabric, Instance, build_instance, validate
from coflowopt import metrics as M
from coflowopt.orders import bssi, port_loads
from coflowopt.schedulers import get, registry
from coflowopt.service import run
from coflowopt.sim import allocate, simulate
from coflowopt.sim.drive import OrderPolicy

SINGLE_STAGE = ["varys", "aalo", "a-sebf", "sincronia", "fifo", "fair", "scf", "ncf", "lcf"]


def _avg_cct(name: str, inst: Instance, **kw) -> float:
    return float(M.cct(validate(inst, get(name)(inst, **kw))).mean())


# -- E1 (spec 12): Varys 4.33, Aalo 5.17, width-aware 4.67 --------------------------------------

def test_e1_varys() -> None:
    v = validate(example_e1(), get("varys")(example_e1()))
    assert M.cct(v).tolist() == [2.0, 6.0, 5.0]


def test_e1_aalo_queue_height_reading() -> None:
    # thresholds "1, 2, 4, 8" read as queue heights: demotion at 1, 3, 7, 15 of bytes sent
    v = validate(example_e1(), get("aalo")(example_e1(), thresholds=[1, 3, 7, 15]))
    assert M.cct(v).tolist() == [5.0, 6.0, 4.5]
    assert M.cct(v).mean() == pytest.approx(31 / 6)


def test_e1_aalo_absolute_reading() -> None:
    # the spec's other reading: demotion at 1, 2, 4, 8 gives C1 = 4, C2 = 6, C3 = 5
    v = validate(example_e1(), get("aalo")(example_e1(), first=1, growth=2, queues=5))
    assert M.cct(v).tolist() == [4.0, 6.0, 5.0]


def test_e1_width_aware() -> None:
    v = validate(example_e1(), get("a-sebf")(example_e1(), thresholds=[1, 3, 7, 15]))
    assert M.cct(v).tolist() == [3.0, 6.0, 5.0]
    assert _avg_cct("a-sebf", example_e1(), first=1, growth=2, queues=5) == pytest.approx(14 / 3)


# -- E2 (spec 12): BSSI order and greedy CCTs ---------------------------------------------------

def _e2() -> Instance:
    return build_instance(3, coflows=[
        CoflowSpec([(0, 0, 4.0)], id="C1"),
        CoflowSpec([(0, 1, 2.0), (1, 1, 2.0)], id="C2"),
        CoflowSpec([(1, 2, 3.0), (2, 0, 1.0)], id="C3"),
        CoflowSpec([(2, 2, 5.0)], id="C4", weight=2.0),
    ])


def test_e2_bssi_order() -> None:
    inst = _e2()
    loads = port_loads(inst, np.arange(4), inst.flow_volume)
    assert bssi(loads, inst.coflow_weight).tolist() == [1, 3, 0, 2]  # (C2, C4, C1, C3)


class _Fixed(OrderPolicy):
    def __init__(self, order):
        super().__init__("greedy")
        self.fixed = np.asarray(order)

    def order(self, view):
        return self.fixed[np.isin(self.fixed, view.coflows)]


@pytest.mark.parametrize("mode", ["offline", "online"])
def test_e2_sincronia_is_optimal_among_orders(mode: str) -> None:
    inst = _e2()
    v = validate(inst, get("sincronia")(inst, mode=mode))
    assert M.cct(v).tolist() == [6.0, 4.0, 8.0, 5.0]
    assert M.weighted_completion(v) == 28.0
    # brute force over all 24 orders with the same allocator: the optimum is 28 (spec E2)
    best = min(M.weighted_completion(validate(inst, simulate(inst, _Fixed(p))))
               for p in itertools.permutations(range(4)))
    assert best == 28.0


def test_isolation_time_is_achieved_alone() -> None:
    # spec 14: MADD on one coflow alone finishes at exactly C_j^0
    inst = build_instance(3, coflows=[[(0, 1, 3.0), (0, 2, 1.0), (1, 2, 2.0), (2, 0, 4.0)]])
    for name in ("varys", "sincronia", "fifo"):
        v = validate(inst, get(name)(inst))
        assert v.coflow_completion[0] == pytest.approx(inst.isolation_time[0], rel=1e-12)


# -- properties ----------------------------------------------------------------------------------

@pytest.mark.parametrize("name", SINGLE_STAGE)
@settings(max_examples=25, deadline=None)
@given(inst=instances(max_ports=4, max_coflows=5))
def test_schedules_are_valid(name: str, inst: Instance) -> None:
    s = get(name)(inst)
    res = validate(inst, s)
    assert np.all(res.coflow_completion >= inst.earliest_completion - 1e-9)
    assert get(name)(inst) == s  # deterministic


def _available(inst: Instance, res, t: float) -> np.ndarray:
    """Flows that may be served at time t: coflow admitted and flow unfinished."""
    ready = inst.release.astype(float).copy()
    ptr, pred = inst.predecessors_ptr
    for c in range(inst.n_coflows):
        p = pred[ptr[c]:ptr[c + 1]]
        if p.size:
            ready[c] = max(ready[c], res.coflow_completion[p].max())
    c = inst.flow_coflow
    return (ready[c] <= t + 1e-9) & (res.flow_completion > t + 1e-9) & (inst.flow_volume > 0)


@pytest.mark.parametrize("name", ["varys", "sincronia", "fifo", "aalo", "a-sebf", "fair", "scf"])
@settings(max_examples=25, deadline=None)
@given(inst=instances(max_ports=3, max_coflows=5))
def test_work_conserving(name: str, inst: Instance) -> None:
    """No port idles while a flow that could use it waits: in every interval, each available
    flow has its ingress or its egress port full."""
    s = get(name)(inst)
    res = validate(inst, s)
    ptr, flow, rate = s.per_interval()
    cap_in, cap_out = inst.fabric.capacity_in, inst.fabric.capacity_out
    for k in range(s.n_intervals):
        f, r = flow[ptr[k]:ptr[k + 1]], rate[ptr[k]:ptr[k + 1]]
        load_in = np.bincount(inst.flow_src[f], weights=r, minlength=inst.ports)
        load_out = np.bincount(inst.flow_dst[f], weights=r, minlength=inst.ports)
        mid = 0.5 * (s.breakpoints[k] + s.breakpoints[k + 1])
        for g in np.flatnonzero(_available(inst, res, mid)):
            full = (load_in[inst.flow_src[g]] >= cap_in[inst.flow_src[g]] * (1 - 1e-9)
                    or load_out[inst.flow_dst[g]] >= cap_out[inst.flow_dst[g]] * (1 - 1e-9))
            assert full, f"{name}: flow {g} waits in interval {k} with both ports free"


@settings(max_examples=40, deadline=None)
@given(inst=instances(max_ports=4, max_coflows=6, releases=False, dags=False), data=st.data())
def test_allocators_respect_capacity_and_conserve_work(inst: Instance, data) -> None:
    st_ = allocate.AllocState.for_instance(inst)
    # some flows partly served
    frac = np.array([data.draw(st.sampled_from([0.0, 0.5, 1.0])) for _ in range(inst.n_flows)])
    st_.remaining[:] = inst.flow_volume * (1 - frac)
    order = np.array(data.draw(st.permutations(range(inst.n_coflows))), dtype=np.int64)
    for how in ("greedy", "greedy-ordered", "madd", "fair", "queues"):
        if how == "greedy":
            rate = allocate.greedy(st_, order)
        elif how == "greedy-ordered":
            rate = allocate.greedy(st_, order, split="ordered")
        elif how == "madd":
            rate = allocate.madd(st_, order)
        elif how == "fair":
            rate = allocate.max_min_fair(st_, order)
        else:
            half = len(order) // 2
            rate = allocate.priority_queues(st_, [order[:half], order[half:]], weights=[2, 1])
        live = st_.remaining > 0
        assert np.all(rate[~live] == 0)
        li = np.bincount(inst.flow_src, weights=rate, minlength=inst.ports)
        lo = np.bincount(inst.flow_dst, weights=rate, minlength=inst.ports)
        assert np.all(li <= inst.fabric.capacity_in * (1 + 1e-9))
        assert np.all(lo <= inst.fabric.capacity_out * (1 + 1e-9))
        full_in = li >= inst.fabric.capacity_in * (1 - 1e-9)
        full_out = lo >= inst.fabric.capacity_out * (1 - 1e-9)
        for f in np.flatnonzero(live):
            assert full_in[inst.flow_src[f]] or full_out[inst.flow_dst[f]], how


def test_madd_rates_finish_together() -> None:
    # one coflow alone: MADD gives every flow volume / Gamma
    inst = build_instance(2, coflows=[[(0, 0, 2.0), (0, 1, 2.0), (1, 1, 1.0)]])
    st_ = allocate.AllocState.for_instance(inst)
    rate = allocate.madd(st_, np.array([0]), backfill=np.zeros(0, dtype=np.int64))
    # Gamma = max(in0: 4, in1: 1, out0: 2, out1: 3) = 4
    assert rate.tolist() == [0.5, 0.5, 0.25]


def test_non_clairvoyant_cannot_read_volumes() -> None:
    class Peek:
        clairvoyant = False

        def start(self, view):
            pass

        def rates(self, view):
            return view.remaining

    with pytest.raises(PermissionError):
        simulate(example_e1(), Peek())


def test_aalo_coordination_interval() -> None:
    inst = example_e1()
    v = validate(inst, get("aalo")(inst, thresholds=[1, 3, 7, 15], interval=0.25))
    # updates only every 0.25: still valid, and no better than the exact coordinator here
    assert M.cct(v).mean() >= 5.0 - 1e-9


def test_weighted_queues_valid() -> None:
    inst = example_e1()
    v = validate(inst, get("aalo")(inst, thresholds=[1, 3], queue_weights=[3, 2, 1]))
    assert np.isfinite(M.cct(v)).all()


def test_registry_names() -> None:
    names = set(registry())
    assert set(SINGLE_STAGE) <= names
    assert get("sincronia").factor == "4"
    assert not get("aalo").clairvoyant and get("varys").clairvoyant


def test_releases_respected_online() -> None:
    inst = build_instance(2, coflows=[CoflowSpec([(0, 0, 2.0)], id="a"),
                                      CoflowSpec([(0, 0, 1.0)], id="b", release=1.0)])
    # at t=1 both have Gamma 1 (a's remaining unit, b's unit): ties go by admission, a first
    v = validate(inst, get("varys")(inst))
    assert v.coflow_completion.tolist() == [2.0, 3.0]
    assert math.isclose(M.cct(v).mean(), (2 + 2) / 2)


# -- the two engines agree ------------------------------------------------------------------

FAST = [("varys", {}), ("sincronia", {}), ("sincronia", {"mode": "offline"}), ("fifo", {}),
        ("scf", {}), ("ncf", {}), ("lcf", {}), ("aalo", {"thresholds": [0.5, 1.5, 4.0]}),
        ("a-sebf", {"thresholds": [0.5, 1.5, 4.0]}), ("aalo", {}), ("fair", {})]


@pytest.mark.parametrize("name,kw", FAST, ids=[f"{n}-{i}" for i, (n, _) in enumerate(FAST)])
@settings(max_examples=40, deadline=None)
@given(inst=instances(max_ports=4, max_coflows=6))
def test_fast_engine_equals_reference(name: str, kw: dict, inst: Instance) -> None:
    fast = get(name)(inst, **kw)
    ref = get(name)(inst, engine="reference", **kw)
    assert fast.meta["engine"] == "fast" and ref.meta["engine"] == "reference"
    a, b = validate(inst, fast), validate(inst, ref)
    np.testing.assert_allclose(a.flow_completion, b.flow_completion, rtol=1e-9, atol=1e-9)


@settings(max_examples=60, deadline=None)
@given(inst=instances(max_ports=4, max_coflows=6, dags=False),
       caps=st.lists(st.sampled_from([0.125, 0.3, 1.0, 2.0, 0.7, 4.0]), min_size=8, max_size=8))
def test_online_sincronia_on_mixed_capacities_equals_reference(inst: Instance,
                                                               caps: list[float]) -> None:
    # BSSI's port times: the compiled rank multiplies by a power-of-two capacity's exact
    # reciprocal and divides by any other; the reference engine divides by every one
    m = inst.ports
    fab = Fabric(m, capacity_in=np.array(caps[:m]), capacity_out=np.array(caps[4:4 + m]))
    inst = Instance.from_arrays(fab, inst.flow_src, inst.flow_dst, inst.flow_volume,
                                inst.flow_coflow, coflow_release=inst.coflow_release,
                                coflow_weight=inst.coflow_weight)
    fast = get("sincronia")(inst)
    ref = get("sincronia")(inst, engine="reference")
    a, b = validate(inst, fast), validate(inst, ref)
    np.testing.assert_allclose(a.flow_completion, b.flow_completion, rtol=1e-9, atol=1e-9)


def test_varys_deadline_admission() -> None:
    from coflowopt import JobSpec

    # one port pair; A (deadline 2) needs 2 units: admitted at rate 1; B (deadline 3) finds no
    # free capacity at t=0: rejected, served after A and late; C has no deadline
    inst = build_instance(2, jobs=[
        JobSpec([CoflowSpec([(0, 0, 2.0)], id="A")], id="a", deadline=2.0),
        JobSpec([CoflowSpec([(0, 0, 2.0)], id="B")], id="b", deadline=3.0),
        JobSpec([CoflowSpec([(1, 1, 1.0)], id="C")], id="c"),
    ])
    s = get("varys")(inst, deadlines=True)
    v = validate(inst, s)
    assert s.meta["admitted"] == [0] and s.meta["rejected"] == [1]
    assert v.coflow_completion.tolist() == [2.0, 4.0, 1.0]
    assert M.deadline_misses(v).tolist() == [False, True, False]
    # two coflows that fit together: A reserves half the port, B's Gamma on the other half
    # is 2 <= 2, so both are admitted and both finish exactly on time
    late = build_instance(2, jobs=[
        JobSpec([CoflowSpec([(0, 0, 1.0)], id="A")], id="a", deadline=2.0),
        JobSpec([CoflowSpec([(0, 0, 1.0)], id="B")], id="b", deadline=2.0),
    ])
    s2 = get("varys")(late, deadlines=True)
    v2 = validate(late, s2)
    assert s2.meta["admitted"] == [0, 1]
    assert v2.coflow_completion.tolist() == [2.0, 2.0]
    assert not M.deadline_misses(v2).any()


@settings(max_examples=40, deadline=None)
@given(inst=instances(max_ports=4, max_coflows=6))
def test_varys_without_refill(inst: Instance) -> None:
    lazy = get("varys")(inst, refill=False)
    v = validate(inst, lazy)
    assert np.all(v.coflow_completion >= inst.earliest_completion - 1e-9)
    # with one flow per coflow every flow completion is a coflow departure: nothing idles,
    # so the schedule is the work-conserving one
    single = build_instance(inst.fabric, coflows=[
        CoflowSpec([(int(inst.flow_src[f]), int(inst.flow_dst[f]), float(inst.flow_volume[f]))],
                   release=float(inst.release[inst.flow_coflow[f]]))
        for f in range(inst.n_flows)])
    a = validate(single, get("varys")(single, refill=False))
    b = validate(single, get("varys")(single))
    np.testing.assert_allclose(a.coflow_completion, b.coflow_completion, rtol=1e-9, atol=1e-9)


def test_varys_without_refill_idles_freed_bandwidth() -> None:
    # A = {0->0: 1, 1->1: 4} (Gamma 4), B = {0->2: 10, 1->2: 1} (Gamma 11, needs ingress 1,
    # which A's MADD fills, so B is blocked).  A's flow 0->0 gets MADD 1/4 plus the rest of
    # ingress 0 as backfill and finishes at t=1.  Work conserving: B's 0->2 takes ingress 0
    # from t=1 (3 units by t=4), then B alone needs Gamma = 8: B completes at 12.  Without
    # refill ingress 0 idles until A departs at t=4; then Gamma_B = 11: B completes at 15.
    inst = build_instance(3, coflows=[
        CoflowSpec([(0, 0, 1.0), (1, 1, 4.0)], id="A"),
        CoflowSpec([(0, 2, 10.0), (1, 2, 1.0)], id="B"),
    ])
    wc = validate(inst, get("varys")(inst))
    lazy = validate(inst, get("varys")(inst, refill=False))
    assert wc.coflow_completion.tolist() == [4.0, 12.0]
    assert lazy.coflow_completion.tolist() == [4.0, 15.0]


@pytest.mark.parametrize("engine", ["fast", "reference"])
def test_fair_hand_worked(engine: str) -> None:
    # unit ports.  A = 0->0 (2), B = 0->1 (4), C = 1->1 (1): every port has two flows or
    # one at level 1/2, so all run at 1/2; C ends at 2; then ingress 0 still splits A and B
    # at 1/2: A ends at 4; B (2 left) alone at 1 ends at 6
    inst = build_instance(2, coflows=[CoflowSpec([(0, 0, 2.0)]), CoflowSpec([(0, 1, 4.0)]),
                                      CoflowSpec([(1, 1, 1.0)])])
    v = validate(inst, get("fair")(inst, engine=engine))
    np.testing.assert_allclose(v.coflow_completion, [4.0, 6.0, 2.0])
    # one pair, three flows: 1 and 3 at t=0, 1 more at t=1.  Halves until 1, thirds until
    # the first ends at 2.5, halves until the third ends at 3.5, then the second alone to 5
    same = build_instance(1, coflows=[CoflowSpec([(0, 0, 1.0), (0, 0, 3.0)]),
                                      CoflowSpec([(0, 0, 1.0)], release=1.0)])
    w = validate(same, get("fair")(same, engine=engine))
    np.testing.assert_allclose(w.flow_completion, [2.5, 5.0, 3.5])


@pytest.mark.parametrize("name,kw", FAST, ids=[f"{n}-{i}" for i, (n, _) in enumerate(FAST)])
@settings(max_examples=25, deadline=None)
@given(inst=instances(max_ports=3, max_coflows=6, dags=False))
def test_fast_engine_late_in_a_long_trace(name: str, kw: dict, inst: Instance) -> None:
    # the same instance 1.4e7 time units later (the end of a 4x replicated FB2010 trace):
    # time resolution there is ~2e-9, so event merging and threshold crossings must not
    # rely on absolute slack; the schedule stays valid and its CCTs those of the early copy
    late = Instance.from_arrays(inst.fabric, inst.flow_src, inst.flow_dst, inst.flow_volume,
                                inst.flow_coflow, coflow_release=inst.release + 1.4e7,
                                coflow_weight=inst.coflow_weight)
    a = validate(inst, get(name)(inst, **kw))
    b = validate(late, get(name)(late, **kw))
    np.testing.assert_allclose(M.cct(b), M.cct(a), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name", ["sincronia", "varys", "aalo", "fifo", "fair"])
def test_close_completions_late_stay_apart(name: str) -> None:
    # two independent unit-rate flows released at 1.4e7, finishing 5e-6 apart: merging
    # events within 1e-12 t (1.4e-5) would end the second one 5e-6 short of its volume
    inst = build_instance(2, coflows=[CoflowSpec([(0, 0, 1.0)], release=1.4e7),
                                      CoflowSpec([(1, 1, 1.0 + 5e-6)], release=1.4e7)])
    v = validate(inst, get(name)(inst))
    np.testing.assert_allclose(M.cct(v), [1.0, 1.0 + 5e-6], rtol=0, atol=1e-7)


# -- streamed validation: the fast kernels feed the validator, nothing is stored ---------------

STREAM = [*FAST, ("varys", {"refill": False})]


@pytest.mark.parametrize("name,kw", STREAM, ids=[f"{n}-{i}" for i, (n, _) in enumerate(STREAM)])
@settings(max_examples=30, deadline=None)
@given(inst=instances(max_ports=4, max_coflows=6))
def test_streamed_equals_stored(name: str, kw: dict, inst: Instance) -> None:
    # the same kernel run twice: its stored schedule through the stored-schedule validator,
    # and its rate changes through the streaming one, must give the same times
    stored = validate(inst, get(name)(inst, **kw))
    streamed = run(inst, name, params=kw).valid
    assert streamed.schedule is None and streamed.meta["engine"] == "fast"
    assert streamed.meta["scheduler"] == name
    for field in ("flow_start", "flow_completion", "coflow_completion", "job_completion"):
        np.testing.assert_allclose(getattr(streamed, field), getattr(stored, field),
                                   rtol=1e-12, atol=1e-12)
    assert M.summary(streamed) == pytest.approx(M.summary(stored), rel=1e-12, abs=1e-12)


def test_run_service_falls_back_to_stored() -> None:
    # A: in0->out0 and in0->out1, 2 units each; B: in1->out1, 1 unit; unit ports.  BSSI puts
    # B first (bottleneck 1 < 4): B ends at 1; A's first flow holds in0 until 2, its second
    # then runs alone until 4 (hand-worked)
    inst = build_instance(2, coflows=[CoflowSpec([(0, 0, 2.0), (0, 1, 2.0)]),
                                      CoflowSpec([(1, 1, 1.0)])])
    s = run(inst, "sincronia").valid
    assert s.schedule is None
    assert s.coflow_completion.tolist() == [4.0, 1.0]
    # the reference engine and schedulers outside the simulator store and validate as usual
    v = run(inst, "sincronia", params={"engine": "reference"}).valid
    assert v.schedule is not None and v.meta["engine"] == "reference"
    assert v.coflow_completion.tolist() == [4.0, 1.0]
    assert run(inst, "sequential").schedule is not None
    # asked to keep it, a streaming scheduler stores its schedule too
    kept = run(inst, "sincronia", keep_schedule=True)
    assert kept.schedule is not None and not kept.streamed
    assert kept.valid.coflow_completion.tolist() == [4.0, 1.0]


@pytest.mark.parametrize("engine", ["fast", "reference"])
def test_dclas_tied_crossings_late_stay_tied(engine: str) -> None:
    # found by hypothesis: coflows 0 and 3 reach the 1.5 threshold at the same instant
    # (t = 2.08333).  Shifted by 1.4e7 their bytes sent carry ~1e-9 of rounding: the fast
    # engine crossed them one ulp apart (coflow 3 first in FIFO, coflow 0's CCT 3.08 -> 5.0)
    # and the reference engine's timer stalled.  Both engines, both offsets: the same CCTs.
    src, dst = [0, 0, 1, 2, 0, 0, 1], [1, 0, 2, 2, 1, 0, 0]
    vol, cof = [2.0, 1.0, 0.25, 1.0, 1.0, 1.0, 1.0], [0, 1, 2, 3, 3, 3, 3]
    got = []
    for off in (0.0, 1.4e7):
        inst = Instance.from_arrays(Fabric.uniform(3, 1.0), src, dst, vol, cof,
                                    coflow_release=np.array([0.0, 1.0, 1.0, 1.0]) + off)
        got.append(M.cct(validate(inst, get("aalo")(inst, thresholds=[0.5, 1.5, 4.0],
                                                      engine=engine))))
    ref = M.cct(validate(inst, get("aalo")(inst, thresholds=[0.5, 1.5, 4.0],
                                           engine="fast" if engine == "reference" else
                                           "reference")))
    np.testing.assert_allclose(got[1], got[0], rtol=1e-9, atol=1e-7)
    np.testing.assert_allclose(got[1], ref, rtol=1e-9, atol=1e-7)
