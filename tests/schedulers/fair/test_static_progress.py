"""The static-progress baseline (SPS of De Pellegrini et al., IEEE TPDS 2022, constraints
(1)-(2), [INF]; leftover stage [PROP]): its
progress against the SPS MILP's ``P*`` (:mod:`coflowopt.lp`), hand-worked slowdowns, the
static bound ``S_j <= 1 / P*`` without the leftover stage, and validated schedules.

Values that depend on the reconstruction are "against our reconstruction"."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from strategies import instances

import coflowopt
from coflowopt import CoflowSpec, Instance, JobSpec, build_instance, validate
from coflowopt import metrics as M
from coflowopt.lp import sps_model, static_progress
from coflowopt.schedulers.fair.static_progress import (
    StaticProgressParams,
    StaticProgressPolicy,
    guarantee_rates,
    run_static_progress,
)
from coflowopt.sim import simulate
from coflowopt.sim.sink import RateSink

STORE = RateSink.store()  # the direct call: the schedule stored, validated here


def _three() -> Instance:
    return build_instance(2, coflows=[
        CoflowSpec([(0, 0, 1.0)], id="A"),
        CoflowSpec([(1, 1, 1.0)], id="B"),
        CoflowSpec([(1, 1, 1.0)], id="C"),
    ])


def _run(inst: Instance, wc: bool):
    s = run_static_progress(inst, StaticProgressParams(work_conserving=wc), STORE).schedule
    return s, validate(inst, s)


def test_hand_worked_three_coflows() -> None:
    """Against our reconstruction.  Two unit ports; A = in0->out0, B and C = in1->out1, volume
    1 each, all at t = 0.  d = 1 on each coflow's two ports; in1 and out1 carry 2, so
    P = 1/2: every flow at 1/2.  Leftover: in0 and out0 have 1/2 free, so A's flow gets +1/2
    (rate 1) and ends at 1; B and C end at 2 (their ports are full).  Slowdowns (1, 2, 2).
    Without the leftover stage A also runs at 1/2: (2, 2, 2).  The SPS MILP (lp.sps_model)
    with the floor P0 = P* = 1/2 has optimum 1 + 2 + 2 = 5 and is infeasible at P0 = 0.6."""
    inst = _three()
    s, v = _run(inst, True)
    assert M.slowdown(v).tolist() == pytest.approx([1.0, 2.0, 2.0])
    np.testing.assert_allclose(s.meta["progress"], [[0.0, 0.5], [1.0, 0.5]])
    _, v0 = _run(inst, False)
    assert M.slowdown(v0).tolist() == pytest.approx([2.0, 2.0, 2.0])
    assert static_progress(inst).P_star == pytest.approx(0.5)
    sps = sps_model(inst, 0.5).solve()
    assert sps.value == pytest.approx(M.weighted_completion(v))
    assert not sps_model(inst, 0.6).solve().result.has_solution


def test_hand_worked_leftover_breaks_the_static_bound() -> None:
    """Against our reconstruction.  Two unit ports; A = in0->out1 volume 1; B = in0->out0
    volume 1 and in1->out0 volume 1/2 (C_B^0 = 1.5, d_B = in0 2/3, in1 1/3, out0 1).  in0
    carries 5/3: P* = 3/5.  Guarantee: A 3/5, B (2/5, 1/5).  Leftover: only B's in1->out0
    flow can grow (in0 is full): +2/5, rate 3/5, so it ends at t = 5/6.  Then A has 1/2 left
    and B 2/3 on in0->out0 only: d = 1 each on in0, P = 1/2, both at 1/2; A ends at
    5/6 + 1 = 11/6, B has 1/6 left, alone at rate 1, ends at 2.  S_A = 11/6 > 1/P* = 5/3.
    Without the leftover stage: A at 3/5 ends at 5/3 (S_A = 5/3 exactly); B then has 1/3 and
    1/6 left, both into out0: Gamma = 1/2, P = 1, ends at 13/6 (S_B = 13/9)."""
    inst = build_instance(2, coflows=[
        CoflowSpec([(0, 1, 1.0)], id="A"),
        CoflowSpec([(0, 0, 1.0), (1, 0, 0.5)], id="B"),
    ])
    assert static_progress(inst).P_star == pytest.approx(0.6)
    s, v = _run(inst, True)
    assert v.coflow_completion.tolist() == pytest.approx([11 / 6, 2.0])
    np.testing.assert_allclose(s.meta["progress"], [[0.0, 0.6], [5 / 6, 0.5], [11 / 6, 1.0]])
    _, v0 = _run(inst, False)
    assert v0.coflow_completion.tolist() == pytest.approx([5 / 3, 13 / 6])
    assert M.slowdown(v0).tolist() == pytest.approx([5 / 3, 13 / 9])


def test_hand_worked_release() -> None:
    """Against our reconstruction.  The three-coflow instance plus D = in0->out0 volume 1
    released at t = 1: A ends at 1 (rate 1, as above), D arrives alone on in0/out0 (P = 1/2
    with B, C), takes the leftover 1/2 too: rate 1, ends at 2.  CCT_D = 1."""
    inst = build_instance(2, coflows=[
        CoflowSpec([(0, 0, 1.0)], id="A"),
        CoflowSpec([(1, 1, 1.0)], id="B"),
        CoflowSpec([(1, 1, 1.0)], id="C"),
        CoflowSpec([(0, 0, 1.0)], id="D", release=1.0),
    ])
    v = coflowopt.run(inst, "static-progress").valid
    assert M.cct(v).tolist() == pytest.approx([1.0, 2.0, 2.0, 1.0])


@settings(max_examples=25, deadline=None)
@given(instances(max_coflows=5, max_flows=4, releases=False, dags=False))
def test_progress_is_the_sps_p_star_and_the_static_bound(inst: Instance) -> None:
    """At t = 0 (all releases 0) the progress is ``P*`` of the SPS formulation
    (:func:`coflowopt.lp.static_progress`), and without the leftover stage every coflow
    meets the SPS consequence ``S_j <= 1 / P*`` (SPS => PS with ``E = 1/P0``, De Pellegrini
    et al., TPDS 2022)."""
    P = static_progress(inst).P_star
    s, v = _run(inst, False)
    assert s.meta["progress"][0, 1] == pytest.approx(P, rel=1e-9)
    assert (M.slowdown(v) <= (1 + 1e-9) / P).all()
    s1, _ = _run(inst, True)
    assert s1.meta["progress"][0, 1] == pytest.approx(P, rel=1e-9)


class _Checked(StaticProgressPolicy):
    """Checks at every event: the guarantee fits on every port, and after the leftover stage
    every unfinished flow has a saturated port (work conservation)."""

    def rates(self, view):
        out = super().rates(view)
        st = view.alloc
        flows, r, _ = guarantee_rates(view.instance, view.coflows, view.remaining)
        m = view.ports
        assert (np.bincount(st.src[flows], weights=r, minlength=m) <= st.cap_in + 1e-9).all()
        assert (np.bincount(st.dst[flows], weights=r, minlength=m) <= st.cap_out + 1e-9).all()
        assert (st.rate[flows] >= r - 1e-12).all()
        used_in = np.bincount(st.src[flows], weights=st.rate[flows], minlength=m)
        used_out = np.bincount(st.dst[flows], weights=st.rate[flows], minlength=m)
        full_in = used_in >= st.cap_in * (1 - 1e-9)
        full_out = used_out >= st.cap_out * (1 - 1e-9)
        assert (full_in[st.src[flows]] | full_out[st.dst[flows]]).all()
        return out


@settings(max_examples=25, deadline=None)
@given(instances(max_coflows=5, max_flows=4))
def test_guarantee_fits_and_leftover_is_work_conserving(inst: Instance) -> None:
    """Releases and Starts-After included; the schedule validates."""
    validate(inst, simulate(inst, _Checked(True)))


def test_registry_run_and_determinism() -> None:
    rng = np.random.default_rng(7)
    coflows = [CoflowSpec([(int(rng.integers(3)), int(rng.integers(3)),
                            float(rng.uniform(0.5, 3.0))) for _ in range(3)],
                          release=float(rng.choice([0.0, 1.5])), id=f"c{k}") for k in range(6)]
    inst = build_instance(3, coflows=coflows)
    a = coflowopt.run(inst, "static-progress", seed=0).valid
    b = coflowopt.run(inst, "static-progress", seed=0).valid
    np.testing.assert_array_equal(a.coflow_completion, b.coflow_completion)
    with pytest.raises(coflowopt.params.ParamsError, match="work_conserving"):
        coflowopt.run(inst, "static-progress", params={"work_conserving": "yes"})


# -- the compiled engine against the reference policy ------------------------------------------


def _random_dag_instance(seed: int) -> Instance:
    """A small random instance: jobs of 1-3 coflows with random Starts-After edges, random
    releases (coflow and job), 1-4 flows a coflow on 2-4 ports, a few zero-volume flows."""
    rng = np.random.default_rng(seed)
    m = int(rng.integers(2, 5))
    jobs = []
    for _ in range(int(rng.integers(1, 4))):
        k = int(rng.integers(1, 4))
        coflows = []
        for _ in range(k):
            flows = [(int(rng.integers(m)), int(rng.integers(m)),
                      float(rng.choice([0.0, 0.5, 1.0, 2.0, 3.5])) if rng.random() < 0.15
                      else float(rng.uniform(0.1, 4.0))) for _ in range(int(rng.integers(1, 5)))]
            coflows.append(CoflowSpec(flows, release=float(rng.choice([0.0, 0.0, 0.75, 2.0]))))
        edges = [(a, b) for a in range(k) for b in range(a + 1, k) if rng.random() < 0.5]
        jobs.append(JobSpec(coflows, edges, release=float(rng.choice([0.0, 1.0]))))
    return build_instance(m, jobs=jobs)


def _engines(inst: Instance, wc: bool):
    fast = run_static_progress(inst, StaticProgressParams(work_conserving=wc), STORE).schedule
    ref = run_static_progress(inst, StaticProgressParams(work_conserving=wc,
                                                         engine="reference"), STORE).schedule
    return fast, validate(inst, fast), ref, validate(inst, ref)


@pytest.mark.parametrize("wc", [True, False])
def test_compiled_engine_matches_the_reference_policy(wc: bool) -> None:
    """A second implementation as the expected value: the reference-engine policy
    (:class:`StaticProgressPolicy` on :func:`coflowopt.sim.engine.simulate`, NumPy guarantee
    and the shared progressive filling).  On twelve random instances with releases and
    Starts-After edges both engines give the same per-coflow CCTs (1e-9 relative), the same
    ``(t, P)`` at every event, and validated schedules."""
    for seed in range(12):
        inst = _random_dag_instance(seed)
        fast, vf, ref, vr = _engines(inst, wc)
        assert fast.meta["engine"] == "fast" and ref.meta["engine"] == "reference"
        np.testing.assert_allclose(vf.coflow_completion, vr.coflow_completion, rtol=1e-9,
                                   atol=1e-12, err_msg=f"seed {seed}")
        np.testing.assert_allclose(fast.meta["progress"], ref.meta["progress"], rtol=1e-9,
                                   err_msg=f"seed {seed}")


def test_random_instances_have_releases_and_starts_after() -> None:
    """The instances of the comparison above do exercise both (guards the generator)."""
    insts = [_random_dag_instance(s) for s in range(12)]
    assert sum(int(np.diff(i.predecessors_ptr[0]).sum()) for i in insts) >= 5
    assert sum(int((i.release > 0).sum()) for i in insts) >= 5
    assert any((i.flow_volume == 0).any() for i in insts)


@settings(max_examples=15, deadline=None)
@given(instances(max_coflows=5, max_flows=4))
def test_compiled_engine_matches_on_hypothesis_instances(inst: Instance) -> None:
    """The same comparison on the shared strategy's instances (job DAGs, job and coflow
    releases, weights), with the leftover stage."""
    _, vf, _, vr = _engines(inst, True)
    np.testing.assert_allclose(vf.coflow_completion, vr.coflow_completion, rtol=1e-9,
                               atol=1e-12)


def test_streamed_run_equals_stored_and_is_deterministic() -> None:
    """The run service streams the compiled engine's rate changes into the validator
    (nothing stored): the same CCTs as the stored schedule validated afterwards; two runs with
    the same seed give the same schedule, breakpoint for breakpoint."""
    inst = _random_dag_instance(3)
    res = coflowopt.run(inst, "static-progress", seed=0)
    assert res.valid.schedule is None and res.valid.meta["rate_changes"] > 0
    a = run_static_progress(inst, StaticProgressParams(), STORE, seed=0).schedule
    b = run_static_progress(inst, StaticProgressParams(), STORE, seed=0).schedule
    np.testing.assert_allclose(res.valid.coflow_completion, validate(inst, a).coflow_completion,
                               rtol=0, atol=0)
    np.testing.assert_array_equal(a.breakpoints, b.breakpoints)
    for col in ("flow", "rate", "first", "last"):
        np.testing.assert_array_equal(getattr(a, col), getattr(b, col))


def test_engine_param_is_checked() -> None:
    inst = _three()
    with pytest.raises(coflowopt.params.ParamsError, match="engine"):
        coflowopt.run(inst, "static-progress", params={"engine": "gpu"})
    ref = coflowopt.run(inst, "static-progress", params={"engine": "reference"}).valid
    assert M.slowdown(ref).tolist() == pytest.approx([1.0, 2.0, 2.0])
