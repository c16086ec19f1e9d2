"""DeepWeave's Policy Converter (Algorithm 2, spec 9.5): example E4 exactly, and a brute force
over candidate start times on random DAG workloads, against our reconstruction of the
converter's semantics ([PROP] in spec 9.5)."""

from __future__ import annotations

import numpy as np
import pytest

from coflowopt import metrics
from coflowopt.model import CoflowSpec, Fabric, JobSpec, build_instance
from coflowopt.schedulers.learned.converter import policy_converter
from coflowopt.validate import validate
from coflowopt.workloads.dags import ggen_fan_in_fan_out, tpcds_like


def _e4():
    # e1 (priority 0.9) = {1->1: 3, 2->2: 1}; e2 (priority 0.4) = {2->3: 2}; 0-based ports
    return build_instance(3, coflows=[CoflowSpec([(0, 0, 3.0), (1, 1, 1.0)], id="e1"),
                                      CoflowSpec([(1, 2, 2.0)], id="e2")])


def _segments(s):
    t = s.breakpoints
    return {int(f): (float(t[a]), float(t[b]), float(r))
            for f, a, b, r in zip(s.flow, s.first, s.last, s.rate, strict=True)}


def test_e4_aligned():
    """E4: e1's 1->1 on [0, 3), its 2->2 aligned to end at 3 on [2, 3), e2's 2->3 fills
    ingress 2 on [0, 2); CCT 3 and 2, mean 2.5."""
    inst = _e4()
    s = policy_converter(inst, [0.9, 0.4])
    assert _segments(s) == {0: (0.0, 3.0, 1.0), 1: (2.0, 3.0, 1.0), 2: (0.0, 2.0, 1.0)}
    v = validate(inst, s)
    assert metrics.summary(v)["avg_cct"] == pytest.approx(2.5)


def test_e4_plain_asap():
    """E4's comparison: plain ASAP puts 2->2 on [0, 1) and e2 on [1, 3): mean CCT 3.0."""
    inst = _e4()
    s = policy_converter(inst, [0.9, 0.4], align=False)
    assert _segments(s) == {0: (0.0, 3.0, 1.0), 1: (0.0, 1.0, 1.0), 2: (1.0, 3.0, 1.0)}
    assert metrics.summary(validate(inst, s))["avg_cct"] == pytest.approx(3.0)


def test_priority_and_order_forms_agree_and_input_is_checked():
    inst = _e4()
    assert policy_converter(inst, [0.1, 0.4]) == policy_converter(inst, order=[1, 0])
    with pytest.raises(ValueError, match="exactly one"):
        policy_converter(inst)
    with pytest.raises(ValueError, match="priority needs 2"):
        policy_converter(inst, [1.0])
    with pytest.raises(ValueError, match="permutation"):
        policy_converter(inst, order=[0, 0])


def test_finishes_before_is_refused_by_coflow():
    job = JobSpec([CoflowSpec([(0, 1, 1.0)], id="a"), CoflowSpec([(1, 0, 1.0)], id="b")],
                  finishes_before=[(0, 1)])
    inst = build_instance(2, jobs=[job])
    with pytest.raises(ValueError, match=r"Finishes-Before.*'b'"):
        policy_converter(inst, [1.0, 0.0])


def _placement_order(inst, priority):
    """Highest priority first among the coflows whose predecessors are placed (by hand)."""
    n = inst.n_coflows
    preds = [set() for _ in range(n)]
    for a, b in inst.starts_after.tolist():
        preds[b].add(a)
    done: list[int] = []
    left = set(range(n))
    while left:
        c = min((c for c in left if preds[c] <= set(done)), key=lambda c: (-priority[c], c))
        done.append(c)
        left.remove(c)
    return done


def _free(busy, lo, hi):
    return all(hi <= s or e <= lo for s, e in busy)


def _brute_force_check(inst, priority, s, align=True):
    """Replays the placement and checks each flow's start against every candidate start
    (t0, ends of busy intervals, End* - d, starts of busy intervals - d)."""
    seg = _segments(s)
    m = inst.ports
    rate = np.minimum(inst.fabric.capacity_in[inst.flow_src],
                      inst.fabric.capacity_out[inst.flow_dst])
    busy: dict[int, list[tuple[float, float]]] = {p: [] for p in range(2 * m)}
    end_of = {}
    for c in _placement_order(inst, priority):
        t0 = float(inst.release[c])
        for a, b in inst.starts_after.tolist():
            if b == c:
                t0 = max(t0, end_of[a])
        flows = [int(f) for f in inst.flows_of(c) if inst.flow_volume[f] > 0]
        flows.sort(key=lambda f: (-inst.flow_volume[f] / rate[f], f))
        end_star = None
        end_c = t0
        for f in flows:
            d = inst.flow_volume[f] / rate[f]
            ports = (int(inst.flow_src[f]), m + int(inst.flow_dst[f]))
            bb = busy[ports[0]] + busy[ports[1]]
            cand = {t0} | {e for _, e in bb} | {x - d for x, _ in bb}
            if end_star is not None:
                cand.add(end_star - d)
            ok = sorted(t for t in cand if t >= t0 - 1e-12 and _free(bb, t + 1e-12,
                                                                      t + d - 1e-12))
            if end_star is None or not align:
                want = ok[0]
            else:
                want = min(ok, key=lambda t: (round(abs(t + d - end_star), 9), t))
            st, en, r = seg[f]
            assert st == pytest.approx(want, abs=1e-7), (c, f)
            assert en - st == pytest.approx(d, rel=1e-9) and r == pytest.approx(rate[f])
            if end_star is None:
                end_star = en
            for p in ports:
                busy[p].append((st, en))
            end_c = max(end_c, en)
        end_of[c] = end_c


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("align", [True, False])
def test_brute_force_on_dag_workloads(seed, align):
    """Random priorities on small DAG workloads (releases by arrivals for odd seeds): every
    flow is one full-rate segment at the start the brute force finds; the schedule is
    valid."""
    gen = tpcds_like if seed % 2 == 0 else ggen_fan_in_fan_out
    kw = {} if seed % 2 == 0 else {"nodes": (3, 8), "arrival_rate": 1e-4}
    inst = gen(2, ports=4, seed=seed, **kw)
    pri = np.random.default_rng(seed).uniform(size=inst.n_coflows)
    s = policy_converter(inst, pri, align=align)
    validate(inst, s)
    assert np.bincount(s.flow, minlength=inst.n_flows).max() == 1
    _brute_force_check(inst, pri, s, align)


def test_heterogeneous_capacity_zero_volume_and_release():
    """Rates are min(B_in, B_out); a zero-volume flow gets no segment; nothing starts before
    its job's release or its predecessors' completion."""
    fab = Fabric(2, capacity_in=[1.0, 2.0], capacity_out=[4.0, 0.5])
    job = JobSpec([CoflowSpec([(1, 0, 4.0), (0, 1, 0.0)]), CoflowSpec([(0, 1, 1.0)])],
                  starts_after=[(0, 1)], release=5.0)
    inst = build_instance(fab, jobs=[job])
    s = policy_converter(inst, [0.0, 1.0])
    seg = _segments(s)
    assert seg == {0: (5.0, 7.0, 2.0), 2: (7.0, 9.0, 0.5)}
    validate(inst, s)
