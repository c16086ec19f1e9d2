"""The validator: every kind of violation, located exactly; and a brute-force twin."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import example2, instances

from coflowopt import (
    CoflowSpec,
    InfeasibleSchedule,
    Instance,
    JobSpec,
    Schedule,
    Tolerance,
    build_instance,
    check,
    check_all,
    schedule_changes,
    validate,
    validate_changes,
)
from coflowopt.schedulers import sequential
from coflowopt.validate import (
    Report,
    StreamGroups,
    StreamState,
    StreamValidator,
    analyse,
    group_consume,
    group_push,
    member_push,
    own_push,
    readonly,
    stream_consume,
    stream_push,
)

TWO = build_instance(2, coflows=[CoflowSpec([(0, 0, 2.0), (0, 1, 2.0)], id="A"),
                                 CoflowSpec([(1, 1, 3.0)], id="B", release=1.0)])


def test_valid_hand_schedule() -> None:
    # f0 then f1 on ingress 0; f2 (B) from its release at 1 on ingress 1 / egress 1
    s = Schedule.from_intervals([0, 1, 2, 4], [
        ({0: 1.0}), ({0: 1.0, 2: 0.5}), ({1: 1.0, 2: 0.5}),
    ])
    # egress 1 in interval 2 carries f1 (1.0) + f2 (0.5) > 1: infeasible as written
    v = check(TWO, s)
    assert (v.kind, v.interval, v.port) == ("capacity", 2, "out 1")
    assert v.amount == pytest.approx(0.5)
    ok = Schedule.from_intervals([0, 1, 3, 5, 7], [
        {0: 1.0}, {0: 0.5, 2: 1.0}, {1: 1.0}, {2: 0.5},
    ])
    # f0: 1 + 1 = 2; f2: 2 + 1 = 3; f1: 2
    res = validate(TWO, ok)
    assert res.flow_completion.tolist() == [3.0, 5.0, 7.0]
    assert res.coflow_completion.tolist() == [5.0, 7.0]


def test_capacity_violation_located() -> None:
    s = Schedule.from_intervals([0, 2, 5], [{0: 1.0, 1: 1.0}, {2: 1.0}])
    v = check(TWO, s)
    assert (v.kind, v.interval, v.port, v.amount) == ("capacity", 0, "in 0", 1.0)
    assert "port in 0 carries 2 > capacity 1" in v.message


def test_volume_short_located() -> None:
    s = Schedule.from_intervals([0, 2, 3, 6], [{0: 1.0}, {1: 1.0}, {2: 1.0}])
    v = check(TWO, s)
    assert (v.kind, v.flow, v.coflow, v.amount) == ("volume", 1, 0, 1.0)


def test_overserved_located() -> None:
    s = Schedule.from_intervals([0, 2, 4, 8], [{0: 1.0}, {1: 1.0}, {2: 1.0}])
    v = check(TWO, s)
    assert (v.kind, v.flow, v.amount) == ("overserved", 2, 1.0)


def test_release_violation_located() -> None:
    s = Schedule.from_intervals([0, 0.5, 2, 4, 5.5], [{0: 1.0}, {0: 1.0, 2: 1.0}, {1: 1.0},
                                                      {2: 1.0}])
    v = check(TWO, s)
    assert (v.kind, v.flow, v.coflow, v.time) == ("release", 2, 1, 0.5)
    assert v.amount == pytest.approx(0.5)


def test_negative_rate_located() -> None:
    s = Schedule.from_intervals([0, 2, 4, 7, 8], [{0: 1.0}, {1: 1.0}, {2: 1.0}, {2: -0.5}])
    v = check(TWO, s)
    assert (v.kind, v.interval, v.flow, v.amount) == ("negative_rate", 3, 2, 0.5)


def test_precedence_violation_located() -> None:
    chain = build_instance(2, jobs=[JobSpec([CoflowSpec([(0, 0, 2.0)], id="a"),
                                             CoflowSpec([(1, 1, 1.0)], id="b")], [(0, 1)])])
    s = Schedule.from_intervals([0, 1, 2], [{0: 1.0, 1: 1.0}, {0: 1.0}])
    v = check(chain, s)
    assert (v.kind, v.coflow, v.flow, v.time, v.amount) == ("precedence", 1, 1, 0.0, 2.0)
    assert "before its Starts-After predecessor id 'a' (position 0)" in v.message
    fine = Schedule.from_intervals([0, 2, 3], [{0: 1.0}, {1: 1.0}])
    assert validate(chain, fine).coflow_completion.tolist() == [2.0, 3.0]


def test_finishes_before_violation() -> None:
    inst = build_instance(2, jobs=[JobSpec([CoflowSpec([(0, 0, 2.0)], id="a"),
                                            CoflowSpec([(1, 1, 1.0)], id="b")],
                                           finishes_before=[(0, 1)])])
    both = Schedule.from_intervals([0, 1, 2], [{0: 1.0, 1: 1.0}, {0: 1.0}])
    v = check(inst, both)
    assert (v.kind, v.coflow) == ("finishes_before", 1)
    ok = Schedule.from_intervals([0, 2], [{0: 1.0, 1: 0.5}])
    validate(inst, ok)


def test_malformed() -> None:
    out_of_range = Schedule.from_intervals([0, 1], [{9: 1.0}])
    assert check(TWO, out_of_range).kind == "malformed"
    twice = Schedule.from_segments([0, 2, 4], [0, 0], [1.0, 0.5], [0, 1], [2, 2])
    v = check(TWO, twice)
    assert (v.kind, v.flow, v.interval) == ("malformed", 0, 1)


def test_validate_raises_with_first_violation() -> None:
    s = Schedule.from_intervals([0, 2, 5], [{0: 1.0, 1: 1.0}, {2: 1.0}])
    with pytest.raises(InfeasibleSchedule) as exc:
        validate(TWO, s)
    assert exc.value.violation.kind == "capacity"
    assert [x.kind for x in exc.value.violations][:1] == ["capacity"]


def test_tolerance_is_explicit() -> None:
    s = Schedule.from_intervals([0, 2, 4, 7], [{0: 1.0 + 1e-7}, {1: 1.0}, {2: 1.0}])
    # 2e-7 too much volume, 1e-7 over capacity: inside the default relative 1e-6
    validate(TWO, s)
    strict = Tolerance(capacity_rtol=1e-9, volume_rtol=1e-9)
    assert check(TWO, s, strict).kind == "capacity"


def test_empty_coflow_and_zero_volume() -> None:
    inst = build_instance(1, jobs=[JobSpec([CoflowSpec([(0, 0, 0.0)], id="z", release=2.0),
                                            CoflowSpec([(0, 0, 1.0)], id="w")], [(0, 1)])])
    s = Schedule.from_intervals([0, 2, 3], [{}, {1: 1.0}])
    res = validate(inst, s)
    assert res.coflow_completion.tolist() == [2.0, 3.0]


# -- properties ----------------------------------------------------------------------------

@settings(max_examples=80, deadline=None)
@given(instances())
def test_sequential_is_valid(inst: Instance) -> None:
    res = validate(inst, sequential(inst))
    assert np.all(res.coflow_completion >= inst.earliest_completion - 1e-9)


def _loads(inst: Instance, s: Schedule) -> np.ndarray:
    """Brute force: per interval, ingress and egress loads from the per-interval listing."""
    out = np.zeros((s.n_intervals, 2, inst.ports))
    for k in range(s.n_intervals):
        for f, r in zip(*s.interval(k), strict=True):
            out[k, 0, inst.flow_src[f]] += r
            out[k, 1, inst.flow_dst[f]] += r
    return out


@settings(max_examples=60, deadline=None)
@given(instances(releases=False), st.data())
def test_mutations_are_caught(inst: Instance, data: st.DataObject) -> None:
    s = sequential(inst)
    pos = np.flatnonzero(s.rate > 0)
    if pos.size == 0:
        return
    loads = _loads(inst, s)
    cap = np.stack([inst.fabric.capacity_in, inst.fabric.capacity_out])
    # overload a saturated port: MADD saturates every coflow's bottleneck port
    sat = [(k, side, p) for k in range(s.n_intervals) for side in (0, 1)
           for p in range(inst.ports) if loads[k, side, p] >= cap[side, p] * (1 - 1e-9)]
    k, side, p = data.draw(st.sampled_from(sat))
    ports = inst.flow_src if side == 0 else inst.flow_dst
    seg = int(next(i for i in pos if s.first[i] <= k < s.last[i] and ports[s.flow[i]] == p))
    rate = s.rate.copy()
    rate[seg] *= 1.25
    v = check(inst, Schedule.from_segments(s.breakpoints, s.flow, rate, s.first, s.last))
    assert v is not None and v.kind == "capacity"
    first_bad = int(s.first[seg])
    assert v.interval <= first_bad
    # drop volume from one segment
    rate = s.rate.copy()
    seg = int(data.draw(st.sampled_from(pos.tolist())))
    rate[seg] *= 0.5
    v = check(inst, Schedule.from_segments(s.breakpoints, s.flow, rate, s.first, s.last))
    assert v is not None and (v.kind, v.flow) == ("volume", int(s.flow[seg]))
    # start a coflow that has predecessors before they finish: move it to time 0
    if inst.starts_after.size:
        a, b = (int(x) for x in inst.starts_after[data.draw(
            st.integers(0, len(inst.starts_after) - 1))])
        if inst.isolation_time[a] > 0 and inst.isolation_time[b] > 0:
            move = np.isin(s.flow, inst.flows_of(b))
            t = np.r_[-inst.isolation_time[b], s.breakpoints]
            first = np.where(move, 0, s.first + 1)
            last = np.where(move, 1, s.last + 1)
            v = check(inst, Schedule.from_segments(t, s.flow, s.rate, first, last))
            assert v is not None and v.kind in ("precedence", "release")


@settings(max_examples=40, deadline=None)
@given(instances(releases=True))
def test_early_start_caught(inst: Instance) -> None:
    s = sequential(inst)
    late = np.flatnonzero(inst.release > 0)
    if not late.size or not (s.rate > 0).any():
        return
    shifted = s.shifted(-float(inst.release.max()) - 1.0)
    v = check(inst, shifted)
    assert v is not None and v.kind in ("release", "precedence")


def test_example2_sequential_completions() -> None:
    # order by earliest start: c1 [0,2], c2 [2,5], c4 [5,7], c3 [7,9], c5 [9,11]
    res = validate(example2(), sequential(example2()))
    assert res.coflow_completion.tolist() == [2.0, 5.0, 9.0, 7.0, 11.0]
    assert res.job_completion.tolist() == [9.0, 11.0]


def test_check_all_lists_several() -> None:
    s = Schedule.from_intervals([0, 2, 3], [{0: 1.0, 1: 1.0}, {}])
    kinds = [v.kind for v in check_all(TWO, s)]
    assert kinds[0] == "capacity" and "volume" in kinds


@settings(max_examples=80, deadline=None)
@given(instances(releases=False, dags=False), st.data())
def test_capacity_agrees_with_brute_force(inst: Instance, data: st.DataObject) -> None:
    K = data.draw(st.integers(1, 4))
    t = np.cumsum([0.0] + [data.draw(st.sampled_from([0.5, 1.0, 2.0])) for _ in range(K)])
    n = data.draw(st.integers(0, 8))
    flow = [data.draw(st.integers(0, inst.n_flows - 1)) for _ in range(n)]
    first = [data.draw(st.integers(0, K - 1)) for _ in range(n)]
    last = [data.draw(st.integers(a + 1, K)) for a in first]
    rate = [data.draw(st.sampled_from([0.25, 0.5, 1.0])) for _ in range(n)]
    # one segment per flow keeps it well-formed
    keep = {f: i for i, f in enumerate(flow)}
    idx = sorted(keep.values())
    s = Schedule.from_segments(t, np.array(flow)[idx] if idx else [],
                               np.array(rate)[idx] if idx else [],
                               np.array(first)[idx] if idx else [],
                               np.array(last)[idx] if idx else [])
    loads = _loads(inst, s)
    cap = np.stack([inst.fabric.capacity_in, inst.fabric.capacity_out])
    over = [(k, side, p) for k in range(K) for side in (0, 1) for p in range(inst.ports)
            if loads[k, side, p] > cap[side, p] * (1 + 1e-6) + 1e-9]
    found = [v for v in check_all(inst, s, limit=1000) if v.kind == "capacity"]
    got = [(v.interval, 0 if v.port.startswith("in") else 1, int(v.port.split()[1]))
           for v in found]
    # the validator names where each overload begins: the first one, and every port involved
    assert got[:1] == over[:1]
    assert {g[1:] for g in got} == {o[1:] for o in over}
    assert set(got) <= set(over)


# -- the streaming form (rate changes consumed as a simulator makes them) -----------------------

def _streamed(inst: Instance, s: Schedule):
    """The violations of ``s`` found by the streaming validator (empty list when valid)."""
    try:
        validate_changes(inst, s.breakpoints, *schedule_changes(s))
    except InfeasibleSchedule as e:
        return e.violations
    return []


def _where(v):
    return (v.kind, v.interval, v.port, v.flow)


def test_stream_hand_worked() -> None:
    # the schedules of test_valid_hand_schedule
    s = Schedule.from_intervals([0, 1, 2, 4], [
        ({0: 1.0}), ({0: 1.0, 2: 0.5}), ({1: 1.0, 2: 0.5}),
    ])
    v = _streamed(TWO, s)[0]
    assert (v.kind, v.interval, v.port) == ("capacity", 2, "out 1")
    assert v.amount == pytest.approx(0.5)
    ok = Schedule.from_intervals([0, 1, 3, 5, 7], [
        {0: 1.0}, {0: 0.5, 2: 1.0}, {1: 1.0}, {2: 0.5},
    ])
    res = validate_changes(TWO, ok.breakpoints, *schedule_changes(ok))
    assert res.schedule is None
    assert res.flow_completion.tolist() == [3.0, 5.0, 7.0]
    assert res.coflow_completion.tolist() == [5.0, 7.0]
    s_short = Schedule.from_intervals([0, 1, 2, 4], [({0: 1.0}), ({0: 1.0}), ({1: 1.0})])
    (first,) = _streamed(TWO, s_short)[:1]
    assert (first.kind, first.flow) == ("volume", 2)
    over = Schedule.from_intervals([0, 2, 3], [{0: 1.0, 1: 1.0}, {}])
    assert _where(_streamed(TWO, over)[0]) == ("capacity", 0, "in 0", None)
    neg = Schedule.from_intervals([0, 1], [{0: -1.0}], drop_zero=False)
    assert _where(_streamed(TWO, neg)[0]) == ("negative_rate", 0, None, 0)


def test_stream_out_of_order_is_malformed() -> None:
    t = np.array([0.0, 1.0, 2.0])
    with pytest.raises(InfeasibleSchedule) as e:
        validate_changes(TWO, t, np.array([0, 0]), np.array([1, 0]), np.array([1.0, 0.0]))
    assert e.value.violation.kind == "malformed"
    with pytest.raises(InfeasibleSchedule) as e:  # never brought back to rate 0
        validate_changes(TWO, t, np.array([0]), np.array([0]), np.array([1.0]))
    assert e.value.violation.kind == "malformed"


@settings(max_examples=60, deadline=None)
@given(instances(), st.data())
def test_stream_agrees_with_stored(inst: Instance, data: st.DataObject) -> None:
    """Same first violation (kind and place) and the same times as the stored validator, on
    feasible schedules and on mutated ones."""
    s = sequential(inst)
    res = validate(inst, s)
    got = validate_changes(inst, s.breakpoints, *schedule_changes(s))
    for name in ("flow_start", "flow_completion", "coflow_completion", "job_completion"):
        np.testing.assert_array_equal(getattr(got, name), getattr(res, name))
    pos = np.flatnonzero(s.rate > 0)
    if pos.size == 0:
        return
    rate = s.rate.copy()
    seg = int(data.draw(st.sampled_from(pos.tolist())))
    rate[seg] *= data.draw(st.sampled_from([0.5, 1.25, -1.0]))
    bad = Schedule.from_segments(s.breakpoints, s.flow, rate, s.first, s.last)
    want = check_all(inst, bad, limit=1000)
    assert want
    assert [_where(v) for v in _streamed(inst, bad)][:1] == [_where(want[0])]


@settings(max_examples=40, deadline=None)
@given(instances())
def test_stream_validator_protocol(inst: Instance) -> None:
    """The documented protocol (push in time order, consume when the buffer is full, finish,
    result) with a 3-change buffer, so that every schedule takes several consumes."""
    s = sequential(inst)
    want = validate(inst, s)
    flow, k, rate = schedule_changes(s)
    sv = StreamValidator(inst, size=3)
    assert isinstance(sv.state, StreamState) and sv.state.row.size == inst.n_flows
    buf_i, buf_d = sv.buffer
    n = 0
    for f, kk, r in zip(flow.tolist(), k.tolist(), rate.tolist(), strict=True):
        n = stream_push(buf_i, buf_d, n, f, kk, r)
        if n == buf_d.size:
            n = stream_consume(sv.state, buf_i, buf_d, n, s.breakpoints)
    sv.finish(s.breakpoints, n)
    got = sv.result({"engine": "test"})
    assert got.schedule is None and got.meta == {"engine": "test", "rate_changes": len(flow)}
    for name in ("flow_start", "flow_completion", "coflow_completion", "job_completion"):
        np.testing.assert_array_equal(getattr(got, name), getattr(want, name))


def test_stream_validator_names_a_violation() -> None:
    # flow 0 at rate 3 on ingress 0 (capacity 1), pushed through the public hooks
    sv = StreamValidator(TWO)
    buf_i, buf_d = sv.buffer
    bps = np.array([0.0, 1.0, 2.0])
    n = stream_push(buf_i, buf_d, 0, 0, 0, 3.0)
    n = stream_push(buf_i, buf_d, n, 0, 1, 0.0)
    sv.finish(bps, n)
    with pytest.raises(InfeasibleSchedule) as e:
        sv.result()
    assert (e.value.violation.kind, e.value.violation.port) == ("capacity", "in 0")


# -- the grouped protocol: one change per rate group -------------------------------------------

# a = 0->0 (1), b = 0->0 (2), c = 1->1 (1, released at 1); groups: 0 = pair (0, 0), 1 = (1, 1)
PAIRS = build_instance(2, coflows=[CoflowSpec([(0, 0, 1.0), (0, 0, 2.0)], id="A"),
                                   CoflowSpec([(1, 1, 1.0)], id="C", release=1.0)])


def _grouped(inst: Instance, bps: list[float], changes: list[tuple], size: int = 3
             ) -> StreamValidator:
    """Feed ``changes`` (("rate", group, k, rate) | ("join", flow, k, group) | ("leave",
    flow, k) | ("own", flow, k, rate)) through the public hooks, with a small buffer so that
    several consumes run."""
    sv = StreamValidator(inst, size=size)
    groups = sv.grouped(np.array([0, 1]), np.array([0, 1]))
    assert isinstance(groups, StreamGroups)
    buf_i, buf_d = sv.buffer
    t = np.array(bps)
    n = 0
    for ch in changes:
        if ch[0] == "rate":
            n = group_push(buf_i, buf_d, n, ch[1], ch[2], ch[3])
        elif ch[0] == "own":
            n = own_push(buf_i, buf_d, n, ch[1], ch[2], ch[3])
        else:
            n = member_push(buf_i, buf_d, n, ch[1], ch[2], ch[3] if ch[0] == "join" else -1)
        if n == buf_d.size:
            n = group_consume(sv.state, groups, buf_i, buf_d, n, t)
    sv.finish(t, n)
    return sv


def test_grouped_hand_worked() -> None:
    # a and b share group 0 at 1/2 each (ingress 0 full) until a has its 1 at t=2; b (1 left)
    # then alone at 1 until 3.  c joins group 1 at its release 1, rate 1, done at 2
    changes = [("join", 0, 0, 0), ("join", 1, 0, 0), ("rate", 0, 0, 0.5),
               ("join", 2, 1, 1), ("rate", 1, 1, 1.0),
               ("leave", 0, 2), ("leave", 2, 2), ("rate", 1, 2, 0.0), ("rate", 0, 2, 1.0),
               ("leave", 1, 3), ("rate", 0, 3, 0.0)]
    res = _grouped(PAIRS, [0.0, 1.0, 2.0, 3.0], changes).result()
    assert res.flow_start.tolist() == [0.0, 0.0, 1.0]
    assert res.flow_completion.tolist() == [2.0, 3.0, 2.0]
    assert res.coflow_completion.tolist() == [3.0, 2.0]
    # the same schedule stored, through the stored validator
    stored = validate(PAIRS, Schedule.from_intervals([0, 1, 2, 3], [
        {0: 0.5, 1: 0.5}, {0: 0.5, 1: 0.5, 2: 1.0}, {1: 1.0}]))
    assert stored.flow_completion.tolist() == res.flow_completion.tolist()


def test_grouped_own_rate_after_leaving() -> None:
    # a and b share group 0 at 1/2 each; at t=1 a (1/2 served) leaves and runs the rest at an
    # own rate of 1/2 beside b, done at 2; then b alone in group 0 at 1: its 2 done at 3.
    # c joins group 1 at its release 1, rate 1, done at 2
    changes = [("join", 0, 0, 0), ("join", 1, 0, 0), ("rate", 0, 0, 0.5),
               ("leave", 0, 1), ("own", 0, 1, 0.5), ("join", 2, 1, 1), ("rate", 1, 1, 1.0),
               ("own", 0, 2, 0.0), ("leave", 2, 2), ("rate", 1, 2, 0.0), ("rate", 0, 2, 1.0),
               ("leave", 1, 3), ("rate", 0, 3, 0.0)]
    res = _grouped(PAIRS, [0.0, 1.0, 2.0, 3.0], changes).result()
    assert res.flow_start.tolist() == [0.0, 0.0, 1.0]
    assert res.flow_completion.tolist() == [2.0, 3.0, 2.0]
    stored = validate(PAIRS, Schedule.from_intervals([0, 1, 2, 3], [
        {0: 0.5, 1: 0.5}, {0: 0.5, 1: 0.5, 2: 1.0}, {1: 1.0}]))
    assert stored.flow_completion.tolist() == res.flow_completion.tolist()
    # an own rate counts in its ports' capacity: a at 0.6 beside b's 0.5 overloads ingress 0
    v = _grouped_violation([("join", 0, 0, 0), ("join", 1, 0, 0), ("rate", 0, 0, 0.5),
                            ("leave", 0, 1), ("own", 0, 1, 0.6), ("own", 0, 2, 0.0),
                            ("leave", 1, 2), ("rate", 0, 2, 0.0)])
    assert (v.kind, v.interval, v.port) == ("capacity", 1, "in 0")
    assert v.amount == pytest.approx(0.1)


def _grouped_violation(changes: list[tuple], bps: list[float] | None = None):
    sv = _grouped(PAIRS, bps or [0.0, 1.0, 2.0, 3.0], changes)
    with pytest.raises(InfeasibleSchedule) as e:
        sv.result()
    return e.value.violation


def test_grouped_capacity_counts_members() -> None:
    # two members at 0.6 each load ingress 0 with 1.2 > 1
    v = _grouped_violation([("join", 0, 0, 0), ("join", 1, 0, 0), ("rate", 0, 0, 0.6),
                            ("rate", 0, 1, 0.0), ("leave", 0, 1), ("leave", 1, 1)])
    assert (v.kind, v.interval, v.port) == ("capacity", 0, "in 0")
    assert v.amount == pytest.approx(0.2)


def test_grouped_volume_short_and_negative_rate() -> None:
    # a leaves having been served 0.5 of its 1
    v = _grouped_violation([("join", 0, 0, 0), ("rate", 0, 0, 0.5), ("leave", 0, 1),
                            ("rate", 0, 1, 0.0), ("join", 1, 1, 0), ("rate", 0, 1, 1.0),
                            ("leave", 1, 3), ("rate", 0, 3, 0.0)])
    assert (v.kind, v.flow) == ("volume", 0)
    v = _grouped_violation([("join", 0, 0, 0), ("rate", 0, 0, -1.0), ("leave", 0, 1)])
    assert v.kind == "negative_rate" and "rate group 0" in v.message


@pytest.mark.parametrize("changes,words", [
    ([("join", 2, 0, 0)], "on other ports"),       # c is on pair (1, 1), not group 0's
    ([("join", 0, 0, 0), ("join", 0, 0, 0)], "while in one"),
    ([("leave", 0, 0)], "without being in a rate group"),
    ([("join", 0, 1, 0), ("leave", 0, 0)], "out of time order"),
    ([("join", 0, 0, 0), ("rate", 0, 0, 1.0)], "still in rate group 0"),
    ([("join", 0, 0, 0), ("own", 0, 1, 1.0)], "sets its own rate while in a rate group"),
    ([("own", 0, 0, 0.5), ("join", 0, 1, 0)], "joins a rate group at a nonzero own rate"),
    ([("own", 0, 0, float("nan"))], "own rate not finite"),
    ([("own", 0, 0, 1.0)], "still has rate 1.0"),
])
def test_grouped_malformed(changes: list[tuple], words: str) -> None:
    v = _grouped_violation(changes)
    assert v.kind == "malformed" and words in v.message


def test_stream_with_more_negative_rates_than_the_limit() -> None:
    # 25 flows at rate -1 in interval 0: the hits fill the report (limit 20); the streamed
    # report still goes on to the outcome (the single module raised AttributeError here)
    n = 25
    inst = build_instance(n, coflows=[CoflowSpec([(i, i, 1.0) for i in range(n)], id="A")])
    s = Schedule.from_intervals([0, 1], [{i: -1.0 for i in range(n)}], drop_zero=False)
    streamed = _streamed(inst, s)
    stored = check_all(inst, s)
    assert [_where(v) for v in streamed] == [_where(v) for v in stored]
    assert [v.kind for v in stored] == ["negative_rate"] * 20


def test_stored_and_streamed_report_through_one_report() -> None:
    # the two checkers give the same Report (violations, times) for the same schedule
    s = Schedule.from_intervals([0, 1, 2, 4], [({0: 1.0}), ({0: 1.0, 2: 0.5}), ({1: 1.0})])
    stored = analyse(TWO, s)
    sv = StreamValidator(TWO)
    flow, k, rate = schedule_changes(s)
    sv.buffer[0][0, : flow.size], sv.buffer[0][1, : flow.size] = flow, k
    sv.buffer[1][: flow.size] = rate
    sv.finish(s.breakpoints, flow.size)
    streamed = sv.report()
    assert isinstance(stored, Report) and isinstance(streamed, Report)
    assert [str(v) for v in streamed.found] == [str(v) for v in stored.found]
    assert [v.kind for v in stored.found] == ["volume"]
    for name, got in streamed.times.items():
        np.testing.assert_array_equal(got, stored.times[name])
    with pytest.raises(InfeasibleSchedule):
        stored.result(s, start=0.0, end=4.0, meta={})


def test_the_parts_reach_no_private_name_of_another() -> None:
    # the stored and streamed checkers use the report's public methods only: an ``x._name``
    # names something its own module defines (the import rule is tests/test_layering.py's)
    import ast
    import sys
    from pathlib import Path

    # (``import coflowopt.validate.report`` would find the function coflowopt.validate)
    bad = []
    for path in sorted(Path(sys.modules[Report.__module__].__file__).parent.glob("*.py")):
        tree = ast.parse(path.read_text())
        own = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
        own |= {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)
                and isinstance(n.ctx, ast.Store)}
        bad += [f"{path.name}:{n.lineno} .{n.attr}" for n in ast.walk(tree)
                if isinstance(n, ast.Attribute) and n.attr.startswith("_")
                and not n.attr.startswith("__") and n.attr not in own]
    assert not bad, bad


def test_readonly_is_a_view() -> None:
    a = np.arange(5)
    v = readonly(a)
    assert not v.flags.writeable and np.shares_memory(a, v) and a.flags.writeable


def test_validate_given_no_schedule_says_so() -> None:
    inst = build_instance(1, coflows=[CoflowSpec([(0, 0, 1.0)])])
    with pytest.raises(TypeError, match=r"returned no schedule.*see its status"):
        validate(inst, None)  # type: ignore[arg-type]


def test_messages_say_which_number_is_a_position_and_which_an_id() -> None:
    inst = build_instance(2, coflows=[CoflowSpec([(0, 1, 1.0)], id="x"),
                                      CoflowSpec([(1, 0, 2.0)], id=7, release=1.0)])
    early = Schedule.from_intervals([0.0, 2.0], [{0: 0.5, 1: 1.0}])
    msg = check(inst, early).message
    assert "flow position 1 of coflow id '7' (position 1)" in msg, msg
