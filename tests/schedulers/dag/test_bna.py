"""BNA (dag-coflows spec section 2): the decomposition invariants of 2.4 on generated integer
matrices for both rules, spec Example 1, real-first execution and the one-at-a-time
scheduler."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import coflowopt
from coflowopt.model import CoflowSpec, JobSpec, build_instance
from coflowopt.schedulers.dag.bna import (
    augment,
    birkhoff_von_neumann,
    bna_items,
    bna_plan,
    effective_size,
)
from coflowopt.schedulers.dag.slots import plan_to_schedule, slot_demand
from coflowopt.validate import validate

RULES = ("maxweight", "hk")
EX1 = np.array([[1, 2, 0], [0, 1, 3], [2, 0, 1]])


def _eff(D: np.ndarray) -> int:
    """Independent effective size: the largest line sum, by plain Python."""
    rows = [sum(int(x) for x in r) for r in D.tolist()]
    cols = [sum(int(D[i][j]) for i in range(len(D))) for j in range(len(D))]
    return max(rows + cols + [0])


def _check_decomposition(D: np.ndarray, rule: str) -> None:
    m = D.shape[0]
    A = augment(D)
    E = _eff(D)
    assert (A >= D).all()
    assert (A.sum(axis=0) == E).all() and (A.sum(axis=1) == E).all()
    perms, durs = birkhoff_von_neumann(D, rule)
    assert int(durs.sum()) == E
    assert len(durs) <= max(1, m * m - 2 * m + 2) or E == 0
    assert (durs >= 1).all()
    rest = A.copy()
    acc = np.zeros_like(A)
    for perm, dur in zip(perms, durs, strict=True):
        assert sorted(perm.tolist()) == list(range(m))      # a permutation
        used = rest[np.arange(m), perm]
        assert (used >= dur).all() and (used > 0).all()     # every used entry positive
        rest[np.arange(m), perm] -= dur
        acc[np.arange(m), perm] += dur
    assert (acc == A).all()                                  # sum dur * P(perm) = A


@pytest.mark.parametrize("rule", RULES)
@settings(max_examples=30, deadline=None)
@given(D=st.integers(1, 6).flatmap(
    lambda m: arrays(np.int64, (m, m), elements=st.integers(0, 5))))
def test_decomposition_invariants(rule: str, D: np.ndarray) -> None:
    _check_decomposition(D, rule)


@pytest.mark.parametrize("rule", RULES)
def test_example1_invariants(rule: str) -> None:
    """Spec Example 1: eff 4, the north-west-corner augmentation, both rules' invariants."""
    assert effective_size(EX1) == 4
    assert augment(EX1).tolist() == [[2, 2, 0], [0, 1, 3], [2, 1, 1]]
    _check_decomposition(EX1, rule)


def test_example1_maxweight_sequence() -> None:
    """Spec Example 1 with the pinned "maxweight" rule: pi1 for 2, identity for 1, pi3 for 1."""
    perms, durs = birkhoff_von_neumann(EX1, "maxweight")
    assert perms.tolist() == [[1, 2, 0], [0, 1, 2], [0, 2, 1]]
    assert durs.tolist() == [2, 1, 1]


def _example1_instance() -> coflowopt.Instance:
    return build_instance(3, coflows=[CoflowSpec(EX1.astype(float), id="D")])


def test_example1_real_first_completions() -> None:
    """Spec Example 1, real-first with "maxweight": (0,1), (2,0) finish at 2; (0,0), (1,1),
    (2,2) at 3; (1,2) at 4."""
    inst = _example1_instance()
    res = coflowopt.run(inst, "bna", params={"rule": "maxweight"})
    done = {(int(s), int(d)): float(c) for s, d, c in
            zip(inst.flow_src, inst.flow_dst, res.valid.flow_completion, strict=True)}
    assert done == {(0, 1): 2, (2, 0): 2, (0, 0): 3, (1, 1): 3, (2, 2): 3, (1, 2): 4}


@pytest.mark.parametrize("rule", RULES)
def test_bna_plan_exact_on_one_coflow(rule: str) -> None:
    rng = np.random.default_rng(3)
    for _ in range(10):
        m = int(rng.integers(2, 6))
        D = rng.integers(0, 4, size=(m, m)) * (rng.random((m, m)) < 0.6)
        D[0, 0] += 1
        inst = build_instance(m, coflows=[CoflowSpec(D.astype(float))])
        plan = bna_plan(inst, np.array([0]), slot_demand(inst), rule=rule)
        v = validate(inst, plan_to_schedule(inst, plan))
        assert plan.makespan == _eff(D) == v.end


def test_items_of_a_pair_served_in_index_order() -> None:
    """Two items on one pair: the first gets the pair's first matched slots."""
    item, start, length, eff = bna_items(np.array([0, 0, 1]), np.array([0, 0, 1]),
                                         np.array([2, 1, 3]))
    assert eff == 3
    got = {int(i): (int(s), int(n)) for i, s, n in zip(item, start, length, strict=True)}
    assert got == {0: (0, 2), 1: (2, 1), 2: (0, 3)}


def test_bad_matrices() -> None:
    with pytest.raises(ValueError, match="square"):
        birkhoff_von_neumann(np.zeros((2, 3), dtype=int))
    with pytest.raises(ValueError, match="negative"):
        birkhoff_von_neumann(np.array([[1, -1], [0, 0]]))
    with pytest.raises(ValueError, match="integers"):
        birkhoff_von_neumann(np.array([[0.5, 0], [0, 1]]))
    with pytest.raises(ValueError, match="rule"):
        birkhoff_von_neumann(EX1, "greedy")
    perms, durs = birkhoff_von_neumann(np.zeros((3, 3), dtype=int))
    assert perms.shape == (0, 3) and durs.size == 0


def test_path_job_is_optimal_and_releases_hold() -> None:
    """A chain runs in T_j = sum of its coflows' eff (its lower bound) after its release."""
    chain = JobSpec([CoflowSpec([(0, 1, 2.0), (1, 0, 1.0)]), CoflowSpec([(0, 0, 3.0)]),
                     CoflowSpec([(1, 1, 1.0), (0, 1, 1.0)])], [(0, 1), (1, 2)], id="P",
                    release=1.5)
    inst = build_instance(2, jobs=[chain])
    res = coflowopt.run(inst, "bna")
    assert res.valid.job_completion[0] == pytest.approx(1.5 + 2 + 3 + 2)  # eff 2, 3, 2
    assert res.streamed


def test_real_volumes_and_quantum() -> None:
    """quantum 0.5 on capacity 2: slots of 0.25; real-first cuts the last slot short."""
    inst = build_instance(coflowopt.Fabric.uniform(2, 2.0),
                          coflows=[CoflowSpec([(0, 0, 1.3), (1, 1, 0.2)])])
    res = coflowopt.run(inst, "bna", params={"quantum": 0.5})
    assert res.valid.flow_completion.tolist() == pytest.approx([0.65, 0.1])


def test_non_uniform_fabric_refused() -> None:
    fab = coflowopt.Fabric(2, [1.0, 2.0], [1.0, 1.0])
    inst = build_instance(fab, coflows=[CoflowSpec([(0, 0, 1.0)])])
    with pytest.raises(coflowopt.schedulers.UnsupportedInstance) as exc:
        coflowopt.run(inst, "bna")
    assert "\n" not in str(exc.value) and "port in 1" in str(exc.value)


def test_same_seed_same_schedule() -> None:
    from coflowopt.workloads.dags import layered_dags

    inst = layered_dags(3, ports=4, seed=2)
    a = coflowopt.run(inst, "bna", seed=1, keep_schedule=True).schedule
    b = coflowopt.run(inst, "bna", seed=1, keep_schedule=True).schedule
    assert a == b
