"""The worst-case finder (``coflowopt verify --worst``): factor texts, the class it searches,
the verdict rule, determinism, a known bad toy found fast, and the written files."""

from __future__ import annotations

import numpy as np
import pytest

import coflowopt as co
from coflowopt.cli import main
from coflowopt.lp import fluid_optimum
from coflowopt.proofs_check.worst import (
    Job,
    Judged,
    Shape,
    WorstParams,
    check_written,
    chen_lb,
    find_worst,
    instance_class,
    judge,
    parse_factor,
    perturb,
    random_shape,
    shape_of,
    write_worst,
)
from coflowopt.schedulers import get, register
from coflowopt.schedulers.registry import unregister
from coflowopt.sim import order_schedule

TOY, EXACT_TOY = "worst-test-lightest-first", "worst-test-exact"


def _lightest_first(instance, *, seed=None):
    """Serves coflows lightest first (the reverse of Smith's rule on equal sizes)."""
    return order_schedule(instance, priority=instance.coflow_weight)


def _exact(instance, *, seed=None):
    """The fluid optimum itself (release 0, at most 5 coflows)."""
    return fluid_optimum(instance, "weighted_completion").schedule


@pytest.fixture
def toy():
    """The lightest-first toy with a (false) proven factor 1.5, stated for release 0 and
    single-stage coflows."""
    register(TOY, kind="offline", clairvoyant=True, factor="1.5",
             factor_assumes=("release 0", "single-stage"), starts_after=False)(_lightest_first)
    yield get(TOY)
    unregister(TOY)


@pytest.fixture
def exact_toy():
    register(EXACT_TOY, kind="exact", clairvoyant=True, factor="1",
             factor_assumes=("release 0", "single-stage"), starts_after=False)(_exact)
    yield get(EXACT_TOY)
    unregister(EXACT_TOY)


def _two_on_one_port(w: int) -> Shape:
    # coflows of one unit flow each on ingress 0 -> egress 0, weights 1 and w
    one = (((0, 0, 1),),)
    return Shape(2, (Job(one, weight=1), Job(one, weight=w)))


def test_factor_texts() -> None:
    inst = co.build_instance(3, coflows=[co.CoflowSpec([(0, 0, 2.0)], release=1.0),
                                         co.CoflowSpec([(1, 2, 3.0), (1, 1, 1.0)])])
    assert parse_factor("4").value(inst) == 4.0
    assert parse_factor("1 (exact, one coflow)").value(inst) == 1.0
    assert parse_factor("2m+1").value(inst) == 7.0            # m = 3 ports
    assert parse_factor("140/41").value(inst) == pytest.approx(140 / 41)
    assert parse_factor("O(mu g(m))").value(inst) is None      # no constant
    # "A / B": A with every release 0, B with releases (inst has a release 1)
    f = parse_factor("4 / 5")
    assert (f.expr, f.with_releases, f.value(inst)) == ("4", "5", 5.0)
    # LB = min_k (r_k + rho_k): coflow 0: 1 + 2, coflow 1: 0 + 4 (ingress 1 carries 3 + 1)
    assert chen_lb(inst) == 3.0
    assert parse_factor("2 + 1/LB", "claimed").value(inst) == pytest.approx(2 + 1 / 3)
    # registry prose (the LP-rounding entries' texts): 4 with every release 0, 5 with releases
    f = parse_factor("proven (our reconstruction) 4 x LP without releases, 5 x LP with them, "
                     "(2+eps) x LP asymptotically", "proven", "C")
    assert (f.expr, f.with_releases, f.value(inst)) == ("4", "5", 5.0)
    # the counterexamples' LB by hand: Ex 4's c0 puts 3 + 2 on egress 0; every coflow of the
    # found one has a port carrying 10
    from coflowopt.proofs_check.instances import flow_order_ex4, flow_order_found

    assert (chen_lb(flow_order_ex4()), chen_lb(flow_order_found())) == (5.0, 10.0)
    assert parse_factor(None) is None
    with pytest.raises(ValueError, match="no arithmetic expression"):
        parse_factor("__import__('os')")


def test_the_search_stays_in_the_class() -> None:
    P = WorstParams()
    rng = np.random.default_rng(1)
    for cls in (instance_class(get("sincronia")), instance_class(get("om-lp"))):
        s = random_shape(rng, P, cls)
        for _ in range(300):
            s = perturb(rng, s, P, cls)
            inst = s.instance(cls.dag)
            assert P.ports[0] <= inst.ports <= P.ports[1]
            assert P.coflows[0] <= inst.n_coflows <= P.coflows[1]
            assert np.all(inst.flow_volume == np.round(inst.flow_volume))
            if not cls.releases:
                assert not np.any(inst.release)
            if not cls.dag:
                assert inst.starts_after.shape[0] == 0
        assert shape_of(inst, cls.dag) == s   # a known instance can start a search
    # sincronia's 4 is for release 0, single-stage; om-lp's 2m+1 for job DAGs with releases
    assert instance_class(get("sincronia")).releases is False
    assert instance_class(get("om-lp")).dag and instance_class(get("om-lp")).releases
    assert instance_class(get("om-lp"), ("release 0",)).releases is False


def test_verdict_rule_never_calls_an_upper_estimate_a_violation() -> None:
    assert judge(Judged(ratio=5.0, estimate="exact", factor=4.0)) == "violation"
    # against OPT_slot >= OPT the true ratio is at least this: still a violation
    assert judge(Judged(ratio=5.0, estimate="lower estimate", factor=4.0)) == "violation"
    # against a lower bound on OPT the true ratio is at most this: never a violation
    assert judge(Judged(ratio=5.0, estimate="upper estimate", factor=4.0)) == "inconclusive"
    assert judge(Judged(ratio=3.5, estimate="exact", factor=4.0, claim=3.0)) == "finding"
    assert judge(Judged(ratio=3.5, estimate="upper estimate", factor=4.0,
                        claim=3.0)) == "inconclusive"
    assert judge(Judged(ratio=2.0, estimate="exact", factor=4.0, claim=3.0)) == "within"
    assert judge(Judged(ratio=9.0, estimate="exact")) == "reported"      # nothing to compare


def test_toy_ratio_in_closed_form(toy) -> None:
    """Two unit coflows on one port, weights 1 and W, lightest first: ALG = 1 + 2W, OPT = W + 2
    (heavy first), so ALG / OPT = (2W + 1) / (W + 2) (by hand)."""
    for w in (2, 8, 64):
        res = find_worst(toy, evaluations=1, start=_two_on_one_port(w))
        j = res.worst
        assert (j.alg, j.opt) == (1 + 2 * w, w + 2)
        assert j.ratio == pytest.approx((2 * w + 1) / (w + 2))
        assert (j.estimate, j.reference) == ("exact", "OPT (fluid, exact)")


def _half_served(instance, *, seed=None):
    """Serves only half of every flow: an invalid schedule."""
    half = instance.replace_flows(instance.flow_src, instance.flow_dst,
                                  instance.flow_volume / 2, instance.flow_coflow)
    return order_schedule(half, priority=half.coflow_weight)


def test_an_invalid_schedule_is_a_defect(tmp_path, capsys) -> None:
    register("worst-test-half", kind="offline", clairvoyant=True,
             starts_after=False)(_half_served)
    try:
        res = find_worst("worst-test-half", evaluations=3, seed=0)
        code = main(["verify", "--worst", "worst-test-half", "--evaluations", "3",
                     "--out", str(tmp_path / "bad.json")])
    finally:
        unregister("worst-test-half")
    assert res.verdict == "defect" and "infeasible schedule" in res.first_defect[0].defect
    out = capsys.readouterr().out
    assert code == 1 and "!!! DEFECT" in out and "infeasible schedule" in out
    # the offending instance is written, without schedules (there is no valid one)
    inst, info, opt = check_written(tmp_path / "bad.json")
    assert info["verdict"] == "defect" and opt is None and inst.n_coflows >= 2


def test_start_from_a_file(toy, tmp_path, capsys) -> None:
    path = tmp_path / "two.json"
    co.interchange.save_instance(_two_on_one_port(100).instance(False), path)  # above wmax
    assert main(["verify", "--worst", TOY, "--evaluations", "1", "--start", str(path)]) == 1
    assert "201 / 102" in capsys.readouterr().out      # ALG = 1 + 2W, OPT = W + 2 at W = 100


def test_finder_finds_the_toy_violation_fast(toy, capsys) -> None:
    res = find_worst(toy, evaluations=40, seed=0)
    assert res.verdict == "violation"
    assert res.worst.ratio > 1.5 and res.worst.estimate == "exact"
    # the same through the command: loud, exit 1
    assert main(["verify", "--worst", TOY, "--evaluations", "40"]) == 1
    assert "!!! DEFECT" in capsys.readouterr().out


def test_a_claim_exceeded_is_a_finding_not_a_defect(capsys) -> None:
    register(TOY, kind="offline", clairvoyant=True, starts_after=False)(_lightest_first)
    try:
        code = main(["verify", "--worst", TOY, "--evaluations", "40", "--claim", "1.5",
                     "--assume", "release 0"])
    finally:
        unregister(TOY)
    out = capsys.readouterr().out
    assert code == 0 and "FINDING" in out and "claimed, unproven" in out


def test_same_seed_same_search(toy) -> None:
    small = WorstParams(coflows=(2, 4), patience=2)   # restarts and kicks within the budget
    a = find_worst(toy, evaluations=20, seed=7, search=small)
    b = find_worst(toy, evaluations=20, seed=7, search=small)
    assert a.restarts >= 2, a.restarts
    assert a.shape == b.shape and a.history == b.history and a.worst.ratio == b.worst.ratio
    c = find_worst(toy, evaluations=20, seed=8, search=small)
    assert c.history != a.history


def test_written_instance_reloads_and_revalidates(toy, tmp_path) -> None:
    res = find_worst(toy, evaluations=15, seed=3)
    path = tmp_path / "worst.json"
    paths = write_worst(res, path)
    inst, info, opt = check_written(path)
    assert inst == res.instance
    assert opt == pytest.approx(info["opt"]) and info["verdict"] == res.verdict
    assert info["ratio"] == pytest.approx(res.worst.ratio)
    alg = co.validate(inst, co.interchange.load_schedule(paths["alg_schedule"]))
    assert co.metrics.weighted_completion(alg) == pytest.approx(info["alg"])
    # the file is an instance for ``coflowopt run``: the toy's run gives the same ALG
    assert co.run(inst, toy).summary()["weighted_completion"] == pytest.approx(info["alg"])


def test_lower_bound_search_is_confirmed_against_the_optimum(exact_toy) -> None:
    """An exact algorithm with factor 1: against LP lower bounds its ratios exceed 1 (upper
    estimates); the worst instance, re-evaluated against the fluid optimum, has ratio 1."""
    res = find_worst(exact_toy, evaluations=12, seed=0, reference="lb")
    assert res.worst.estimate == "upper estimate"
    assert res.worst.ratio > 1 + 1e-6          # LB < OPT on the worst instance found
    assert judge(res.worst) == "inconclusive"
    assert res.confirmed.estimate == "exact"
    assert res.confirmed.ratio == pytest.approx(1.0)
    assert res.verdict == "within"
