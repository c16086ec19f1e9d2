"""The proofs-check machinery: registration, skipping, the factor rule, failures with their
instance, the built-in checks, parallel runs and the ``verify`` command."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from coflowopt import Instance, Schedule, metrics, validate
from coflowopt.cli import main
from coflowopt.interchange import instance_from_dict
from coflowopt.lp import best_lower_bound, bssi_order, fluid_optimum
from coflowopt.proofs_check import (
    LB,
    NO_CONSTANT,
    SLOT,
    Trial,
    all_checks,
    factor_trial,
    format_failures,
    format_table,
    get_check,
    load,
    register_check,
    run_checks,
)
from coflowopt.proofs_check import registry as reg_mod
from coflowopt.proofs_check.instances import e2_instance, random_single_stage
from coflowopt.proofs_check.reference import exact_optimum
from coflowopt.schedulers import sequential

load()


def greedy_order_schedule(inst: Instance, order: np.ndarray) -> Schedule:
    """Order-preserving, work-conserving greedy allocation (single-stage spec 5.3, list order
    within a coflow), event-driven: at each flow completion, walk the coflows in ``order`` and
    give each unfinished flow ``min(residual in, residual out)``.  A tiny local stand-in for
    Sincronia, written for these tests only (releases 0)."""
    rem = inst.flow_volume.astype(float).copy()
    t = 0.0
    bps, intervals = [0.0], []
    flows_by_coflow = [inst.flows_of(c) for c in order]
    while (rem > 1e-12).any():
        cin = inst.fabric.capacity_in.copy()
        cout = inst.fabric.capacity_out.copy()
        rate = {}
        for fl in flows_by_coflow:
            for f in fl:
                if rem[f] <= 1e-12:
                    continue
                r = min(cin[inst.flow_src[f]], cout[inst.flow_dst[f]])
                if r > 1e-12:
                    rate[int(f)] = r
                    cin[inst.flow_src[f]] -= r
                    cout[inst.flow_dst[f]] -= r
        dt = min(rem[f] / r for f, r in rate.items())
        for f, r in rate.items():
            rem[f] = 0.0 if rem[f] - r * dt < 1e-12 else rem[f] - r * dt
        t += dt
        bps.append(t)
        intervals.append(rate)
    return Schedule.from_intervals(bps, intervals)


def local_sincronia(inst: Instance, *, seed=None) -> Schedule:
    return greedy_order_schedule(inst, bssi_order(inst).order)


def stretched_sequential(inst: Instance, *, seed=None) -> Schedule:
    """Feasible but ten times too slow: a guarantee violation the check must catch."""
    s = sequential(inst)
    return Schedule.from_segments(s.breakpoints * 10, s.flow, s.rate / 10, s.first, s.last)


def overloaded(inst: Instance, *, seed=None) -> Schedule:
    """Infeasible: every rate doubled and every interval halved (capacity violated)."""
    s = sequential(inst)
    return Schedule.from_segments(s.breakpoints / 2, s.flow, s.rate * 2, s.first, s.last)


def unsupported(inst: Instance, *, seed=None) -> Schedule:
    raise NotImplementedError("does not handle this instance")


def test_local_bssi_reproduces_e2() -> None:
    """The test's own BSSI + greedy allocator gives the spec's E2 numbers: CCTs 6, 4, 8, 5."""
    inst = e2_instance()
    v = validate(inst, local_sincronia(inst))
    assert v.coflow_completion.tolist() == pytest.approx([6, 4, 8, 5])
    assert metrics.weighted_completion(v) == pytest.approx(28.0)


def test_sincronia_check_with_a_local_bssi() -> None:
    [rep] = run_checks(["sincronia"], algorithms={"sincronia": local_sincronia}, count=8)
    assert rep.status == "passed" and rep.n == 8 and rep.failed == 0
    assert 1.0 <= rep.mean <= rep.worst <= 4.0
    assert rep.references == {"OPT (fluid, exact)": 8}


def test_a_violation_fails_and_prints_the_instance() -> None:
    [rep] = run_checks(["sincronia"], algorithms={"sincronia": stretched_sequential}, count=3)
    assert rep.status == "failed" and rep.failed == 3
    _, message, dump = rep.failures[0]
    assert "> factor 4" in message
    inst = instance_from_dict(json.loads(dump))
    assert isinstance(inst, Instance)
    text = format_failures([rep])
    assert "FAILED sincronia instance 0" in text and '"format":"coflowopt-instance/1"' in text


def test_an_infeasible_schedule_fails() -> None:
    [rep] = run_checks(["sincronia"], algorithms={"sincronia": overloaded}, count=2)
    assert rep.status == "failed"
    assert "infeasible schedule: capacity" in rep.failures[0][1]


def test_unsupported_instances_are_skipped() -> None:
    [rep] = run_checks(["sincronia"], algorithms={"sincronia": unsupported}, count=2)
    assert rep.status == "skipped" and rep.skipped_trials == 2
    assert "does not handle" in rep.reason


def test_missing_scheduler_skips_the_check() -> None:
    @register_check("test-needs-nothing-registered", instances=lambda rng, i:
                    random_single_stage(rng), quick=2, full=2, requires=("no-such-algorithm",))
    def _evaluate(inst: Instance, algs) -> Trial:  # pragma: no cover - never runs
        raise AssertionError

    try:
        [rep] = run_checks(["test-needs-nothing-registered"])
        assert rep.status == "skipped"
        assert "not registered: no-such-algorithm" in rep.reason
        assert "test-needs-nothing-registered" in all_checks()
        with pytest.raises(ValueError, match="registered twice"):
            register_check("test-needs-nothing-registered",
                           instances=lambda rng, i: None)(_evaluate)
    finally:
        reg_mod._CHECKS.pop("test-needs-nothing-registered", None)


def test_factor_rule() -> None:
    """Pass against the lower bound; decide by the exact optimum; inconclusive when only the
    slotted optimum (an upper bound on OPT) is available and the ratio lies in between."""
    inst = e2_instance()  # equal releases, 4 coflows: exact fluid optimum available
    opt = fluid_optimum(inst).value
    ok = factor_trial(inst, 1.5 * opt, 2.0, "weighted_completion")
    assert ok.ok is True and ok.ratio == pytest.approx(1.5) and ok.reference.startswith("OPT")
    bad = factor_trial(inst, 2.5 * opt, 2.0, "weighted_completion")
    assert bad.ok is False and bad.ratio == pytest.approx(2.5)
    assert factor_trial(inst, 0.5 * opt, 2.0, "weighted_completion").ok is False  # below LB
    # releases: no exact fluid optimum; pick a value between factor * LB and factor * OPT_slot
    rng = np.random.default_rng(11)
    for _ in range(20):
        inst = random_single_stage(rng, coflows=(6, 6), releases=True)
        lb = best_lower_bound(inst).value
        ub, ref, exact = exact_optimum(inst, "weighted_completion")
        if not exact and ub > lb * (1 + 1e-3):
            break
    assert ref == SLOT and not exact
    mid = factor_trial(inst, 2.0 * (lb + ub) / 2, 2.0, "weighted_completion", lb=lb)
    assert mid.ok is None and mid.reference == LB and "inconclusive" in mid.message
    assert factor_trial(inst, 2.0 * lb, 2.0, "weighted_completion", lb=lb).ok is True
    high = factor_trial(inst, 2.01 * ub, 2.0, "weighted_completion", lb=lb)
    assert high.ok is False and high.reference == SLOT


BUILTIN = ["lp-sandwich", "dag-lp-sandwich", "job-ordering-lp-examples", "job-ordering-lp",
           "bssi-order-2-approx", "slowdown-bisection", "om-lp-rounding",
           "lower-bound:sequential"]


def test_builtin_checks_pass() -> None:
    reports = run_checks(BUILTIN, quick=True, count=4, seed=3)
    reports += run_checks(["sqrt-mu-gap"], quick=True)  # k = 2, 3 (k = 4 in full mode)
    table = format_table(reports)
    for r in reports:
        assert r.status == "passed", (r.name, r.failures, table)
    by = {r.name: r for r in reports}
    assert by["job-ordering-lp-examples"].worst == pytest.approx(1.0)
    assert by["sqrt-mu-gap"].worst == pytest.approx(3.0)  # k = 3: OPT 9 = 3 max(Delta, T)
    assert by["bssi-order-2-approx"].worst <= 2.0
    assert by["job-ordering-lp"].worst <= 3.0
    assert "ratio against" in table


def test_quick_mode_has_enough_instances() -> None:
    quick = sum(c.quick for c in all_checks().values() if not c.missing())
    assert quick >= 200


def test_parallel_run_matches_serial() -> None:
    names = ["bssi-order-2-approx", "job-ordering-lp-examples"]
    a = run_checks(names, count=6, jobs=1)
    b = run_checks(names, count=6, jobs=2)
    for x, y in zip(a, b, strict=True):
        assert (x.name, x.status, x.n, x.passed) == (y.name, y.status, y.n, y.passed)
        assert x.worst == pytest.approx(y.worst) and x.mean == pytest.approx(y.mean)


def test_verify_command(capsys) -> None:
    assert main(["verify", "--list"]) == 0
    out = capsys.readouterr().out
    assert "sqrt-mu-gap" in out and "lp-sandwich" in out
    assert main(["verify", "--quick", "--check", "job-ordering-lp-examples", "--check",
                 "sqrt-mu-gap", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert "job-ordering-lp-examples  passed" in out
    assert "4 instances, 2 checks run, 0 skipped, 0 failed" in out
    assert main(["verify", "--check", "no-such-check"]) == 2


def test_check_metadata() -> None:
    c = get_check("sincronia")
    assert c.factor == "4" and c.requires == ("sincronia",)
    assert all(math.isfinite(float(c.quick)) for c in all_checks().values())


def local_cofair(inst: Instance, *, seed=None, E: float = math.inf) -> Schedule:
    """Stand-in for CoFair: BSSI at E = inf, the MPS order (primal-feasible for E >= E_MPS,
    spec 3.3) otherwise, both through the greedy allocator."""
    from coflowopt.lp import mps

    order = bssi_order(inst).order if math.isinf(E) else mps(inst).order
    return greedy_order_schedule(inst, order)


def local_om_lp(inst: Instance, *, seed=None) -> Schedule:
    from coflowopt.lp import tian_lp

    return sequential(inst, order=tian_lp(inst).order)


@pytest.mark.parametrize("name,alg", [
    ("bna", sequential),          # one coflow alone at MADD rates: exactly eff(D)
    ("om-lp", local_om_lp),       # Tian LP order, one coflow at a time
    ("dma", sequential),          # one coflow at a time = the serial bound: sanity holds
    ("gdm", sequential),
    ("cofair", local_cofair),
])
def test_algorithm_checks_with_stand_ins(name: str, alg) -> None:
    """The checks for algorithms that other modules will register run on stand-ins now."""
    [rep] = run_checks([name], algorithms={name: alg}, count=4)
    # dma and gdm have no constant: reported, never passed
    assert rep.status == ("reported" if name in ("dma", "gdm") else "passed"), \
        (rep.failures, rep.notes)
    assert rep.n == 4
    if name == "bna":
        assert rep.worst == pytest.approx(1.0)


# -- O(.) results without a constant: report checks ------------------------------------------

NO_CONSTANT_CHECKS = ["dma", "dma-srt", "dma-rt", "gdm", "gdm-rt"]


def test_growth_functions() -> None:
    """g and h of dag-coflows 1.6, by hand: clamped to 1 at x <= e; g(e^e) = e / 1;
    ln 4 / ln ln 4 = 1.386294 / 0.326634 = 4.2442."""
    from coflowopt.proofs_check.reference import g_of, h_of

    assert g_of(2) == 1.0 and h_of(2, 1) == 1.0
    assert g_of(math.exp(math.e)) == pytest.approx(math.e)
    assert g_of(4) == pytest.approx(4.2442, rel=1e-4)
    assert h_of(2, 2) == pytest.approx(4.2442, rel=1e-4)


@pytest.mark.parametrize("name", NO_CONSTANT_CHECKS)
def test_no_constant_checks_report_and_never_pass(name: str) -> None:
    """The registered algorithm meets the sanity bounds on every instance; the check is
    ``reported`` (not ``passed``) with ratio / f over the whole (m, mu) grid."""
    from coflowopt.proofs_check.instances import GRID_M, GRID_MU

    [rep] = run_checks([name], count=12, seed=5)
    assert rep.status == "reported" and rep.failed == 0, (rep.failures, rep.notes)
    assert rep.kind == "report" and rep.n == 12
    assert set(rep.by_size) == {(m, mu) for m in GRID_M for mu in GRID_MU}
    assert 0 < rep.mean <= rep.worst
    table = format_table([rep])
    assert "reported" in table and "passed" not in table
    assert NO_CONSTANT in table and f"ratio / ({rep.function})" in table


def delayed(name: str):
    """A broken ``name``: its own schedule, every event later by more than the serial bound
    (every job's release plus all coflows one after another)."""
    from coflowopt.schedulers import registry

    def alg(inst: Instance, *, seed=None, **params) -> Schedule:
        s = registry()[name](inst, seed=seed, **params)
        d = float(np.ceil(inst.isolation_time).sum() + inst.job_release.max(initial=0) + 1)
        return Schedule.from_segments(s.breakpoints + d, s.flow, s.rate, s.first, s.last)

    return alg


@pytest.mark.parametrize("name", NO_CONSTANT_CHECKS)
def test_no_constant_checks_fail_on_a_delayed_algorithm(name: str) -> None:
    [rep] = run_checks([name], algorithms={name: delayed(name)}, count=6, seed=5)
    assert rep.status == "failed" and rep.failed == 6
    assert "above the" in rep.failures[0][1] and "serial BNA" in rep.failures[0][1]


def test_dma_report_values_on_the_gap_fixture() -> None:
    """Spec Example 6, k = 2: Delta = T = 2 and DMA (one job) runs the four unit coflows one
    after another, makespan 4 = the serial bound; ratio 4 / 2 = 2; m = 2 so g(m) = 1 and
    mu = 4: ratio / (mu g(m)) = 0.5."""
    from coflowopt.proofs_check.algorithm_checks import check_dma
    from coflowopt.proofs_check.instances import sqrt_mu_fixture
    from coflowopt.proofs_check.registry import SCALED
    from coflowopt.schedulers import registry

    t = check_dma(sqrt_mu_fixture(2), {"dma": registry()["dma"]})
    assert t.ok is True and t.ratio == pytest.approx(2.0)
    assert t.values[SCALED] == pytest.approx(0.5)
    assert t.values["alg"] == pytest.approx(4.0) and t.values["serial_bound"] == 4.0


def test_one_job_dma_must_equal_the_serial_schedule() -> None:
    """One job: DMA has no collision to resolve, so a schedule shorter than sum eff(D_c) is
    flagged even though it is valid (here: the fluid optimum of a one-job instance whose
    coflows can overlap)."""
    from coflowopt import CoflowSpec, JobSpec, build_instance
    from coflowopt.proofs_check.algorithm_checks import check_dma

    inst = build_instance(2, jobs=[JobSpec([CoflowSpec([(0, 0, 1.0)]),
                                            CoflowSpec([(1, 1, 1.0)])], id="j")])

    def parallel(instance: Instance, *, seed=None, **params) -> Schedule:
        return Schedule.from_intervals([0.0, 1.0], [{0: 1.0, 1: 1.0}])

    t = check_dma(inst, {"dma": parallel})
    assert t.ok is False and "one job" in t.message


def test_sized_jobs_shapes() -> None:
    """The largest job has exactly mu coflows; tree shapes are rooted trees by the workloads'
    own test (is_rooted_tree)."""
    from coflowopt.proofs_check.instances import sized_jobs
    from coflowopt.workloads.dags import is_rooted_tree

    rng = np.random.default_rng(4)
    for shape in ("fan-in", "fan-out", "tree"):
        inst = sized_jobs(rng, 4, 6, jobs=(3, 3), shape=shape)
        assert np.bincount(inst.coflow_job).max() == 6 and inst.ports == 4
        kinds = {is_rooted_tree(inst, j) for j in range(inst.n_jobs)}
        assert None not in kinds
        if shape != "tree":
            assert kinds <= {shape, "fan-in"}  # a path counts as fan-in
    with pytest.raises(ValueError, match="shape"):
        sized_jobs(rng, 2, 2, shape="star")


def test_verify_prints_tags_and_no_constant_section(capsys) -> None:
    assert main(["verify", "--quick", "--check", "dma-srt", "--check",
                 "job-ordering-lp-examples"]) == 0
    out = capsys.readouterr().out
    assert "dma-srt                   reported" in out
    assert "dma-srt                   passed" not in out
    assert "[R] recovered from the paper, [C] reconstructed by us" in out
    assert "max ratio / (sqrt(mu) h(m,mu)) by size" in out
    assert "(1 without a constant: reported only)" in out
    assert main(["verify", "--list"]) == 0
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if x.startswith("job-ordering-lp "))
    assert "3 [C]" in line
    line = next(x for x in out.splitlines() if x.startswith("gdm-rt "))
    assert "O(sqrt(mu) g(m) h(m,mu)) [R]" in line and NO_CONSTANT in line


def test_approximate_check_limits_and_violations() -> None:
    """The approximate check: the registered scheduler passes (4 x the ordering LP at r = 0,
    5 x with releases, the limit chosen per instance); a schedule ten times too slow fails;
    the LP value comes from scipy's linprog on the same LP, built here independently."""
    from scipy.optimize import linprog

    from coflowopt.proofs_check.algorithm_checks import check_approximate
    from coflowopt.schedulers import registry

    [rep] = run_checks(["approximate"], count=6, seed=2)
    assert rep.status == "passed", (rep.failures, rep.notes)
    assert 1.0 <= rep.worst <= 5.0
    rng = np.random.default_rng(7)
    inst = random_single_stage(rng, releases=True)
    while not np.any(inst.release > 0):
        inst = random_single_stage(rng, releases=True)
    trial = check_approximate(inst, {"approximate": registry()["approximate"]})
    assert trial.ok and trial.limit == 5.0
    # independent LP: variables f_k then delta_ab (a < b); d_lk = port loads / capacity
    n = inst.n_coflows
    m = inst.ports
    d = np.zeros((n, 2 * m))  # ingress ports, then egress ports, in time units
    np.add.at(d, (inst.flow_coflow, inst.flow_src),
              inst.flow_volume / inst.fabric.capacity_in[inst.flow_src])
    np.add.at(d, (inst.flow_coflow, m + inst.flow_dst),
              inst.flow_volume / inst.fabric.capacity_out[inst.flow_dst])
    pairs = [(a, b) for a in range(n) for b in range(a + 1, n)]
    A, ub = [], []
    for k in range(n):
        for col in np.flatnonzero(d[k] > 0):
            row = np.zeros(n + len(pairs))
            row[k] = -1.0
            rhs = -d[k, col]
            for p, (a, b) in enumerate(pairs):
                if b == k:    # delta_{a k} = delta_ab
                    row[n + p] += d[a, col]
                elif a == k:  # delta_{b k} = 1 - delta_ab
                    row[n + p] -= d[b, col]
                    rhs -= d[b, col]
            A.append(row)
            ub.append(rhs)
    bounds = [(inst.release[k] + d[k].max(), None) for k in range(n)] + [(0, 1)] * len(pairs)
    c = np.concatenate([inst.coflow_weight, np.zeros(len(pairs))])
    res = linprog(c, A_ub=np.array(A), b_ub=np.array(ub), bounds=bounds, method="highs")
    assert trial.values["ordering_lp"] == pytest.approx(res.fun, rel=1e-6)
    bad = check_approximate(inst, {"approximate": stretched_sequential})
    assert bad.ok is False and "ordering LP" in bad.message


def test_job_order_factor_3_check_fails_on_a_reversed_order(monkeypatch) -> None:
    """The primal-dual job order's factor 3 [C] can fail: with the order reversed (its
    ``sum_k w (R_k + D_k)`` recomputed here from the port loads and keys ``T_j + rho_j``, and
    first checked against the library's value for the real order) the check fails."""
    import dataclasses

    import coflowopt.proofs_check.lp_checks as lp_checks
    from coflowopt.lp import primal_dual_job_order

    def bound_sum(inst: Instance, order: np.ndarray) -> float:
        m = inst.ports
        d = np.zeros((inst.n_jobs, 2 * m))
        job = inst.coflow_job[inst.flow_coflow]
        np.add.at(d, (job, inst.flow_src), inst.flow_volume)
        np.add.at(d, (job, m + inst.flow_dst), inst.flow_volume)
        key = np.asarray(inst.critical_path) + inst.job_release
        prefix_eff = np.cumsum(d[order], axis=0).max(axis=1)
        return float(np.dot(inst.job_weight[order],
                            np.maximum.accumulate(key[order]) + prefix_eff))

    def reversed_order(inst: Instance, kappa: float = 0.5):
        res = primal_dual_job_order(inst, kappa)
        assert bound_sum(inst, res.order) == pytest.approx(res.bound_sum)
        order = res.order[::-1].copy()
        return dataclasses.replace(res, order=order, bound_sum=bound_sum(inst, order))

    [good] = run_checks(["job-ordering-lp"], count=10)
    assert good.status == "passed"
    monkeypatch.setattr(lp_checks, "primal_dual_job_order", reversed_order)
    [bad] = run_checks(["job-ordering-lp"], count=10)
    assert bad.status == "failed" and "> 3 x dual" in bad.failures[0][1]
