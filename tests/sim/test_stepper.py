"""The decision-epoch stepper (:mod:`coflowopt.sim.stepper`) against the order-to-schedule
function on both engines (an independent event loop), on random DAG instances."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from strategies import instances

from coflowopt import CoflowSpec, Instance, JobSpec, build_instance
from coflowopt.sim import order_schedule
from coflowopt.sim.engine import SimView
from coflowopt.sim.stepper import DagState, Stepper
from coflowopt.validate import Tolerance, ValidSchedule, validate
from coflowopt.workloads.dags import ggen_fan_in_fan_out, tpcds_like


def _dag(seed: int) -> Instance:
    if seed % 2:
        return tpcds_like(2, ports=6, critical_path=(3, 5), scans=(2, 4), seed=seed)
    return ggen_fan_in_fan_out(2, ports=6, nodes=(4, 10), seed=seed,
                               arrival_rate=0.02 if seed % 4 == 2 else None)


def _episode(inst: Instance, policy) -> tuple[Stepper, float, list[DagState]]:
    st = Stepper(inst)
    states = [st.reset()]
    ret = 0.0
    done = st.done
    while not done:
        elapsed, n_jobs, done = st.step(policy(states[-1]))
        ret -= elapsed * n_jobs
        states.append(st.state)
    return st, ret, states


@pytest.mark.parametrize("seed", range(6))
def test_fixed_priority_equals_order_schedule(seed: int) -> None:
    inst = _dag(seed)
    p = np.random.default_rng(seed).random(inst.n_coflows)
    st, ret, _ = _episode(inst, lambda s: p)
    mine = st.validate()
    assert isinstance(mine, ValidSchedule)
    ref = order_schedule(inst, priority=p, check=Tolerance())  # the compiled engine
    np.testing.assert_allclose(mine.coflow_completion, ref.coflow_completion, rtol=0, atol=1e-9)
    np.testing.assert_allclose(st.coflow_completion, ref.coflow_completion, rtol=0, atol=1e-9)
    # the Decima reward (Mao et al., SIGCOMM 2019) sums to minus the total JCT
    jct = ref.job_completion - inst.job_release
    assert ret == pytest.approx(-jct.sum(), rel=1e-12)
    np.testing.assert_allclose(st.job_completion(), ref.job_completion, atol=1e-9)
    # the stored form validates to the same completions
    stored = validate(inst, st.schedule())
    np.testing.assert_allclose(stored.coflow_completion, ref.coflow_completion, atol=1e-9)


def _remaining_rule(volume: np.ndarray, remaining: np.ndarray, coflow: np.ndarray,
                    n: int) -> np.ndarray:
    """A re-ranking rule: least remaining coflow volume first (shortest-remaining-first)."""
    return np.bincount(coflow, weights=remaining, minlength=n)


@pytest.mark.parametrize("seed", range(4))
def test_reranked_priority_equals_order_schedule_rerank(seed: int) -> None:
    inst = _dag(seed)
    n = inst.n_coflows

    def mine(state: DagState) -> np.ndarray:
        return _remaining_rule(inst.flow_volume, state.remaining, inst.flow_coflow, n)

    def ref_rule(view: SimView) -> np.ndarray:
        key = _remaining_rule(inst.flow_volume, view.remaining, inst.flow_coflow, n)
        c = view.coflows
        return c[np.lexsort((c, view.admitted[c], key[c]))]

    st, _, states = _episode(inst, mine)
    got = st.validate()
    ref = validate(inst, order_schedule(inst, rerank=ref_rule, engine="reference"))
    np.testing.assert_allclose(got.coflow_completion, ref.coflow_completion, rtol=0, atol=1e-9)
    assert st.n_steps == len(states) - 1 >= 2


@settings(max_examples=25, deadline=None)
@given(inst=instances(max_ports=3, max_coflows=6))
def test_fixed_priority_on_random_instances(inst: Instance) -> None:
    """Releases of coflows before or after their job's release, empty ready sets, DAGs."""
    p = np.random.default_rng(inst.n_flows).random(inst.n_coflows)
    st, ret, _ = _episode(inst, lambda s: p)
    ref = order_schedule(inst, priority=p, check=Tolerance())
    np.testing.assert_allclose(st.validate().coflow_completion, ref.coflow_completion,
                               rtol=0, atol=1e-9)
    assert ret == pytest.approx(-(ref.job_completion - inst.job_release).sum(), rel=1e-9)


def test_epochs_and_state() -> None:
    # job 0: a -> b (b starts after a); job 1: c, on a port shared with a
    inst = build_instance(2, jobs=[
        JobSpec([CoflowSpec([(0, 0, 2.0)], id="a"), CoflowSpec([(1, 1, 1.0)], id="b")],
                [(0, 1)]),
        JobSpec([CoflowSpec([(0, 1, 1.0)], id="c")], [], release=0.5),
    ])
    st = Stepper(inst)
    s0 = st.reset()
    assert s0.time == 0.0 and s0.coflow_ready.tolist() == [True, False, False]
    assert np.isnan(s0.coflow_start[1]) and s0.coflow_waiting.tolist() == [False, True, True]
    with pytest.raises(ValueError, match=r"read-only"):
        s0.remaining[0] = 1.0
    # epoch at 0.5: c becomes ready (a has sent 0.5)
    assert st.step(np.array([0.0, 0.0, 0.0])) == (0.5, 1, False)
    s1 = st.state
    assert s1.coflow_ready.tolist() == [True, False, True] and s1.remaining[0] == 1.5
    # c first now: it takes in0 until 1.5, a waits; epoch at 1.5 (c completes)
    assert st.step(np.array([1.0, 0.0, 0.0])) == (1.0, 2, False)
    assert st.state.coflow_done.tolist() == [False, False, True]
    assert st.step(np.zeros(3)) == (1.5, 1, False)  # a completes at 3.0, b ready
    assert st.state.coflow_start[1] == 3.0
    assert st.step(np.zeros(3)) == (1.0, 1, True)
    assert st.coflow_completion.tolist() == [3.0, 4.0, 1.5]
    assert validate(inst, st.schedule()).coflow_completion.tolist() == [3.0, 4.0, 1.5]
    with pytest.raises(RuntimeError, match="reset"):
        st.step(np.zeros(3))
    # reset starts the same episode again
    assert st.reset().time == 0.0 and st.n_steps == 0


def test_bad_priorities_are_refused() -> None:
    inst = _dag(0)
    st = Stepper(inst)
    with pytest.raises(ValueError, match="one per coflow"):
        st.step(np.zeros(inst.n_coflows + 1))
    p = np.zeros(inst.n_coflows)
    p[st.ready[0]] = np.nan
    with pytest.raises(ValueError, match="not finite"):
        st.step(p)
    with pytest.raises(RuntimeError, match="finished episode"):
        st.validate()
