"""The fast engine's full recomputation touches only what can change (issue 28): remaining
volumes of served flows, the live ranges of coflows with a finished flow, the pair heads in
the greedy and rate passes.  Expected values hand-worked on tiny instances."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from strategies import instances, least_remaining

import coflowopt as co
from coflowopt import CoflowSpec, Fabric, Instance, Tolerance, build_instance, metrics
from coflowopt.sim import order_schedule


def _overtaken() -> Instance:
    """Two ports, capacity 1.  Coflow A (release 0): an empty flow and 4 units, both 0 -> 1;
    coflow B (release 1): 1 unit on 0 -> 1.  B is the smaller one."""
    return Instance.from_arrays(Fabric.uniform(2, 1.0), np.array([0, 0, 0]),
                                np.array([1, 1, 1]), np.array([0.0, 4.0, 1.0]),
                                np.array([0, 0, 1]), coflow_release=np.array([0.0, 1.0]))


def test_a_served_flow_overtaken_by_a_new_pair_head_stops_until_the_head_finishes() -> None:
    # by hand: A's flow runs alone over [0, 1] (3 units left); B arrives, is first in the
    # smallest-first order, so its flow becomes the head of pair (0, 1) and A's flow (served,
    # no longer a head) must drop to 0; B runs over [1, 2], then A's 3 units over [2, 5]
    res = co.run(_overtaken(), "scf")
    assert metrics.cct(res.valid).tolist() == [5.0, 1.0]
    # arrivals only (a fixed order): at t = 0 A's one unfinished flow (the empty one is
    # dropped from its live range on admission), at t = 1 two flows on one pair: one head
    assert res.counters["recomputations"] == 2
    assert res.counters["recompute_flows"] == 1 + 2
    assert res.valid.meta["recompute_heads"] == 1 + 1
    # B's arrival keeps A's place among the coflows listed before (A alone): the pair chains
    # are kept and only B's flow is linked in (ahead of A's flow, which stops being a head)
    assert res.counters["recompute_linked"] == 1 + 1


def test_a_fifo_order_keeps_the_served_flow_and_the_new_one_waits() -> None:
    # by hand: FIFO keeps A first, so A's flow stays the head and runs over [0, 4]; B's flow
    # waits behind it on the same pair and runs over [4, 5]: CCTs 4 and 5 - 1 = 4
    res = co.run(_overtaken(), "fifo")
    assert metrics.cct(res.valid).tolist() == [4.0, 4.0]
    # B's arrival is appended (one capacity: a kept re-ranking, tests below): its flow is not
    # a head, and A's is not listed again
    assert res.valid.meta["recompute_heads"] == 1 + 0


def _served_alone(coflows: list[list[float]], late: float, at: float) -> Instance:
    """Every flow on its own ingress and egress port (capacity 1: each runs at rate 1 from its
    release to its end); one coflow per list of flow volumes at t = 0, and one more flow of
    ``late`` units released at ``at``."""
    specs, p = [], 0
    for vols in coflows:
        specs.append(CoflowSpec([(p + i, p + i, v) for i, v in enumerate(vols)]))
        p += len(vols)
    specs.append(CoflowSpec([(p, p, late)], release=at))
    return build_instance(p + 1, coflows=specs)


def test_a_coflow_that_changes_places_is_relinked_the_others_keep_their_chains() -> None:
    # least remaining first, re-ordered at arrivals and departures; A = 2 + 2 units, B = 3,
    # C = 5 units at t = 1.5:
    # t = 0    B (3) before A (4): first list, all 3 flows linked
    # t = 1.5  A (1) before B (1.5) before C (5): of A and B, a longest run in their old order
    #          is one coflow; patience sorting keeps the one whose old rank is lowest (B, 0),
    #          so A's 2 flows and C's 1 are linked
    # t = 2    A departs; B (1) before C (4.5), their order: nothing linked
    # t = 3    B departs; C alone: nothing linked; C ends at 6.5
    got = order_schedule(_served_alone([[2.0, 2.0], [3.0]], 5.0, 1.5), key=least_remaining,
                         check=Tolerance())
    assert got.coflow_completion.tolist() == [2.0, 3.0, 6.5]
    assert got.meta["recomputations"] == 4
    # the departures at 2 and 3 keep the order on one capacity: repaired, nothing listed
    # (recomputed from scratch: 3 + 4 + 2 + 1)
    assert got.meta["recompute_flows"] == 3 + 4
    assert got.meta["recompute_linked"] == 3 + 3


def test_the_list_is_rebuilt_when_most_listed_coflows_change_places() -> None:
    # A = 3 x 2 units, B = 2 x 2.5, C = 4, D = 10 units at t = 1.5 (least remaining first):
    # t = 0    C (4) before B (5) before A (6): first list, 6 flows linked
    # t = 1.5  A (1.5) before B (2) before C (2.5) before D (10): the old order reversed, a
    #          longest run keeps one of three, two move: rebuilt, all 7 flows linked
    # t = 2, 2.5, 4: A, B, C depart, the others keep their order: nothing linked; D ends at
    # 1.5 + 10 = 11.5
    got = order_schedule(_served_alone([[2.0] * 3, [2.5] * 2, [4.0]], 10.0, 1.5),
                         key=least_remaining, check=Tolerance())
    assert got.coflow_completion.tolist() == [2.0, 2.5, 4.0, 11.5]
    assert got.meta["recomputations"] == 5
    # the departures keep the order on one capacity: repaired, nothing listed (recomputed
    # from scratch: 6 + 7 + 4 + 2 + 1)
    assert got.meta["recompute_flows"] == 6 + 7
    assert got.meta["recompute_linked"] == 6 + 7


def _longest_increasing(x: list[int]) -> int:
    """Brute force O(k^2): the length of a longest strictly increasing subsequence."""
    best = [1] * len(x)
    for i in range(len(x)):
        for j in range(i):
            if x[j] < x[i]:
                best[i] = max(best[i], best[j] + 1)
    return max(best, default=0)


def test_kept_order_keeps_a_longest_run_in_the_old_order() -> None:
    from coflowopt.sim.fast import _kept_order

    rng = np.random.default_rng(7)
    for _ in range(300):
        C = int(rng.integers(1, 12))
        act = rng.permutation(C).astype(np.int64)
        inlist = rng.random(C) < 0.7
        # distinct places in the last list, -1 for a coflow not in it
        rank = np.where(inlist, rng.permutation(C), -1).astype(np.int64)
        moved = np.zeros(C, dtype=np.bool_)
        got = _kept_order(act, rank, moved)
        old = [int(rank[c]) for c in act if inlist[c]]
        lis = _longest_increasing(old)
        if 2 * (len(old) - lis) > len(old):
            assert got == -1 and not moved.any()
            continue
        assert got == len(old) - lis == int(moved.sum())
        assert not moved[~inlist].any()
        kept = [int(rank[c]) for c in act if inlist[c] and not moved[c]]
        assert kept == sorted(kept) and len(kept) == lis


def test_port_lists_with_buried_slots_follow_a_sorted_list_model() -> None:
    # a finished head is buried in O(1) (its slot keeps ~position) and dropped by compaction;
    # checked against a plain sorted list of the live positions
    from coflowopt.sim.fast import _bury, _compact_port, _insert, _live_before, _walk

    rng = np.random.default_rng(11)
    cap, p = 12, 1  # port 1's slots are 12..23 of a two-port table
    for _ in range(200):
        plist = np.full(2 * cap, -7, dtype=np.int32)
        cnt = np.zeros(2, dtype=np.int64)
        qp = np.full((64, 2), -1, dtype=np.int32)
        live: set[int] = set()  # the model: the live positions
        free = list(rng.permutation(64))
        for _ in range(30):
            op = rng.random()
            if op < 0.5 and cnt[p] < cap and free:
                q = int(free.pop())
                k = _insert(plist, cnt, qp, 1, p, cap, q)
                assert plist[k] == q
                live.add(q)
            elif op < 0.8 and live:
                q = int(rng.choice(sorted(live)))
                _bury(plist, qp, 1, q)
                live.remove(q)
            else:
                _compact_port(plist, cnt, qp, 1, p, cap)
                assert cnt[p] == len(live)  # nothing buried is left
            slots = plist[p * cap: p * cap + cnt[p]]
            alive = slots[slots >= 0]
            assert alive.tolist() == sorted(live)
            # the buried keep their order among the live (a walk passes them in place)
            decoded = np.where(slots >= 0, slots, ~slots)
            assert (np.diff(decoded) > 0).all()
            for q in live:
                assert plist[int(qp[q, 1])] == q  # each live position knows its slot
            # a walk from the port's first slot visits the live positions in order
            cur = np.full(2, -1, dtype=np.int64)
            seen: list[int] = []
            idx = p * cap - 1
            end = p * cap + int(cnt[p])
            while True:
                nq = _walk(p, idx, end, True, cur, plist, qp)
                if nq < 0:
                    break
                seen.append(int(nq))
                idx = int(qp[nq, 1])
            assert seen == sorted(live)
            for a in range(p * cap, end):
                j = _live_before(plist, a, p * cap)
                before = [b for b in range(p * cap, a) if plist[b] >= 0]
                assert j == (before[-1] if before else p * cap - 1)


def test_cascade_stamps_wrap_with_the_old_stamps_cleared() -> None:
    # the stamps live in int32 row columns: event n stamps n + 1 until the int32 range is
    # used up; the event that wraps gets stamp 1 and clears every stored stamp, so a row or a
    # port stamped 2**31 - 1 events before cannot pass for one stamped in this cascade
    from coflowopt.sim.fast import _STAMP, _STAMP_WRAP, _cascade_stamp

    qp = np.zeros((4, 16), dtype=np.int32)
    pm_in, pm_out = np.zeros(3, dtype=np.int64), np.zeros(3, dtype=np.int64)
    assert _cascade_stamp(0, qp, pm_in, pm_out) == 1
    assert _cascade_stamp(41, qp, pm_in, pm_out) == 42
    qp[:, _STAMP] = [1, 7, 2**31 - 1, 0]
    qp[:, 0] = 9
    pm_in[:] = [1, 5, 2**31 - 1]
    pm_out[:] = [3, 1, 0]
    assert _cascade_stamp(_STAMP_WRAP - 1, qp, pm_in, pm_out) == 2**31 - 1  # the last, no wrap
    assert qp[:, _STAMP].tolist() == [1, 7, 2**31 - 1, 0]
    assert _cascade_stamp(_STAMP_WRAP, qp, pm_in, pm_out) == 1
    assert not qp[:, _STAMP].any() and not pm_in.any() and not pm_out.any()
    assert (qp[:, 0] == 9).all()  # only the stamp column
    assert _cascade_stamp(_STAMP_WRAP + 5, qp, pm_in, pm_out) == 6


def test_a_new_head_takes_the_residual_its_live_predecessor_left() -> None:
    # by hand, on port 1's egress list (column 1 of the rows): heads at positions 5 (residual
    # 0.8 before it, share 0.3) and 9 (0.5, 0.2); 9 finishes and is buried.  Position 12
    # enters after them: its live predecessor is 5, so it sees 0.8 - 0.3 = 0.5 (9 is skipped).
    # Position 2 enters first on the port: nothing before it, so the port's capacity, 1.0.
    # The ingress residual (column 0) is not touched.
    from coflowopt.sim.fast import _EG, _RES, _bury, _enter_head, _insert

    cap, p = 12, 1
    plist = np.full(2 * cap, -7, dtype=np.int32)
    cnt = np.zeros(2, dtype=np.int64)
    qp = np.zeros((16, 16), dtype=np.int32)
    qx = qp.view(np.float64)
    qx[:, _RES] = -7.0
    for q, res, share in [(5, 0.8, 0.3), (9, 0.5, 0.2)]:
        _insert(plist, cnt, qp, 1, p, cap, q)
        qx[q, _RES + 1], qx[q, _EG] = res, share
    _bury(plist, qp, 1, 9)
    _enter_head(plist, cnt, qp, qx, 1, p, cap, 12, 1.0)
    assert qx[12, _RES + 1] == 0.8 - 0.3
    _enter_head(plist, cnt, qp, qx, 1, p, cap, 2, 1.0)
    assert qx[2, _RES + 1] == 1.0
    assert plist[p * cap: p * cap + cnt[p]].tolist() == [2, 5, ~9, 12]
    assert (qx[:, _RES] == -7.0).all()


# -- kept re-rankings (the cascade and an appended list instead of a recomputation) -----------

def _fifo(inst: Instance, keep: bool) -> co.ValidSchedule:
    from coflowopt.sim.fast import fast_simulate
    from coflowopt.sim.policy import EnginePolicy

    # the default key (no priority: admission order) re-ordered at arrivals only: FIFO
    out = fast_simulate(inst, EnginePolicy(departures=False), check=Tolerance(), keep=keep)
    assert isinstance(out, co.ValidSchedule)
    return out


def test_a_fifo_arrival_appends_its_flows_instead_of_relisting() -> None:
    # by hand (_overtaken, one capacity): at t = 0 A's one unfinished flow is listed (a head);
    # at t = 1 B arrives last in FIFO order, so only B's flow is listed, behind A's flow on the
    # same pair (not a head).  Recomputed from scratch instead: A's flow again and B's, two
    # heads' worth of greedy steps (A's twice).  CCTs 4 and 5 - 1 both ways.
    kept, full = _fifo(_overtaken(), True), _fifo(_overtaken(), False)
    for got in (kept, full):
        assert metrics.cct(got).tolist() == [4.0, 4.0]
        assert got.meta["recomputations"] == 2
    assert kept.meta["recompute_flows"] == 1 + 1
    assert kept.meta["recompute_heads"] == 1 + 0
    assert full.meta["recompute_flows"] == 1 + 2
    assert full.meta["recompute_heads"] == 1 + 1


def test_ports_of_two_capacities_recompute_every_time() -> None:
    # the same instance on a fabric whose egress port 1 runs at 2: shares and residuals are no
    # longer all 0 or one capacity, so the arrival is recomputed (flows listed 1 + 2) even
    # with keep; by hand A's flow runs at 1 (ingress 0) over [0, 4] and B's over [4, 5]
    inst = _overtaken()
    two = Instance.from_arrays(Fabric(2, np.array([1.0, 1.0]), np.array([1.0, 2.0])),
                               inst.flow_src, inst.flow_dst, inst.flow_volume, inst.flow_coflow,
                               coflow_release=inst.coflow_release)
    got = _fifo(two, True)
    assert metrics.cct(got).tolist() == [4.0, 4.0]
    assert got.meta["recompute_flows"] == 1 + 2


def test_a_departure_that_moves_no_one_is_repaired_by_the_cascade() -> None:
    # least remaining first, re-ordered at departures too (_served_alone: every flow on its
    # own ports, so no flow waits for another): A = 1 unit, B = 2, C = 4 at t = 0.  The
    # first list holds all three; A departs at 1 and B at 2, and each time the others keep
    # their order, so nothing is listed (recomputed each time: 3 + 2 + 1 + 0 + 1)
    inst = _served_alone([[1.0], [2.0], [4.0]], 4.0, 10.0)  # D: 4 units alone at t = 10
    got = order_schedule(inst, key=least_remaining, check=Tolerance())
    assert got.coflow_completion.tolist() == [1.0, 2.0, 4.0, 14.0]
    # re-rankings: the arrivals at 0 and 10 and the departures of A, B and C (D's, the last,
    # ends the run); listed: A, B and C at 0, D at 10 (appended to a list of finished flows)
    assert got.meta["recomputations"] == 5
    assert got.meta["recompute_flows"] == 3 + 1


def _both_ways(inst: Instance, name: str) -> dict[bool, co.RunResult]:
    """``name`` on ``inst`` with the engine's kept re-rankings (``True``) and with every
    re-ranking recomputed (``fast_simulate(keep=False)``), each schedule kept."""
    import functools

    import coflowopt.sim.drive as drive
    import coflowopt.sim.fast as fast

    orig = fast.fast_simulate
    got = {}
    for keep in (True, False):
        f = functools.partial(orig, keep=keep)
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(drive, "fast_simulate", f)
            mp.setattr(fast, "fast_simulate", f)  # cofair imports it when it runs
            got[keep] = co.run(inst, name, keep_schedule=True, seed=0)
    return got


def _same_schedule(got: dict[bool, co.RunResult]) -> None:
    a, b = got[True].valid, got[False].valid
    assert a.schedule is not None and b.schedule is not None
    np.testing.assert_array_equal(metrics.cct(a), metrics.cct(b))
    for name, x in vars(a.schedule).items():
        if isinstance(x, np.ndarray):
            np.testing.assert_array_equal(x, getattr(b.schedule, name), err_msg=name)


def test_kept_re_rankings_give_the_schedules_of_recomputations() -> None:
    # the second algorithm is the recomputation from scratch (keep=False): every rate change,
    # bit for bit, for the order-based policies on random one-capacity traces, DAG jobs
    # among them (a kept re-ranking then also follows a released successor)
    from coflowopt.workloads.dags import tpcds_like
    from coflowopt.workloads.synthetic import synthetic_trace

    names = ["fifo", "scf", "ncf", "lcf", "sincronia", "aalo", "a-sebf", "cofair", "utopia"]
    cases = [(synthetic_trace(n_coflows=60, ports=12, seed=seed), names) for seed in range(3)]
    # the policies that take Starts-After edges (cofair and utopia: single-stage only)
    dag = [n for n in names if n not in ("cofair", "utopia")]
    cases.append((tpcds_like(n_jobs=8, ports=10, seed=1), [*dag, "deepweave"]))
    for inst, run_names in cases:
        assert inst.fabric.is_uniform
        for name in run_names:
            got = _both_ways(inst, name)
            _same_schedule(got)
            if name == "fifo":  # every arrival appends: each flow listed once
                assert got[True].counters["recompute_flows"] <= inst.n_flows
                assert (got[False].counters["recompute_flows"]
                        > got[True].counters["recompute_flows"])


@settings(max_examples=40, deadline=None)
@given(instances(max_ports=3, max_coflows=6, integer=True))
def test_kept_re_rankings_match_recomputations_on_tied_events(inst: Instance) -> None:
    # integer volumes on capacity 1: completions tie with each other and with arrivals (a
    # kept re-ranking then runs the cascade before it appends)
    for name in ("fifo", "scf", "sincronia", "aalo"):
        _same_schedule(_both_ways(inst, name))
