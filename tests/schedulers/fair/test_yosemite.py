"""Yosemite's offline order (the Yosemite draft's Alg. 1, Zhang et al. 2017, Sec. 4.1) with
priority water-filling: the spec's worked examples E1 and E4 (iaoa spec section 5: Alg. 1
trace, its realisation, the exact optimum), the assertions T1-T3 of its section 4 against a
brute-force OPT_COS and the exact fluid optimum on seeded random instances, refusals, every
schedule validated."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import coflowopt
from coflowopt import CoflowSpec, Fabric, Instance, JobSpec, build_instance, validate
from coflowopt.proofs_check.reference import exact_optimum
from coflowopt.schedulers import UnsupportedInstance, get
from coflowopt.schedulers.fair.yosemite import (
    YosemiteParams,
    YosemitePolicy,
    run_yosemite,
    yosemite_order,
)
from coflowopt.sim.sink import RateSink

STORE = RateSink.store()


def e1(fabric: int | Fabric = 2) -> Instance:
    """E1: A (id 0, w 1) = 0->1 vol 2, 1->1 vol 3; B (w 2) = 0->0 vol 4; C (w 2) = 1->0 vol 3."""
    return build_instance(fabric, coflows=[
        CoflowSpec([(0, 1, 2.0), (1, 1, 3.0)], id="A", weight=1.0),
        CoflowSpec([(0, 0, 4.0)], id="B", weight=2.0),
        CoflowSpec([(1, 0, 3.0)], id="C", weight=2.0)])


def e4() -> Instance:
    """E4: m = 3; X = 0->2 vol 1, 1->1 vol 1; Y = 0->0 vol 1, 1->0 vol 2; w 1, r 0."""
    return build_instance(3, coflows=[
        CoflowSpec([(0, 2, 1.0), (1, 1, 1.0)], id="X"),
        CoflowSpec([(0, 0, 1.0), (1, 0, 2.0)], id="Y")])


def cos_by_order(inst: Instance) -> dict[tuple[int, ...], float]:
    """COS of every order, by brute force (loads summed from the flows, in time units)."""
    m = inst.ports
    cap = np.concatenate([inst.fabric.capacity_in, inst.fabric.capacity_out])
    out = {}
    for perm in itertools.permutations(range(inst.n_coflows)):
        load = np.zeros(2 * m)
        cost = 0.0
        for c in perm:
            for f in inst.flows_of(c):
                load[inst.flow_src[f]] += inst.flow_volume[f] / cap[inst.flow_src[f]]
                load[m + inst.flow_dst[f]] += inst.flow_volume[f] / cap[m + inst.flow_dst[f]]
            cost += inst.coflow_weight[c] * load.max()
        out[perm] = float(cost)
    return out


def _run(inst: Instance, **params):
    return coflowopt.run(inst, "yosemite", params=params).valid


def _wcct(v) -> float:
    return float(np.dot(v.instance.coflow_weight, v.coflow_completion))


def test_e1_alg1_trace() -> None:
    """E1: gamma = [A, C, B], COS 31, LB_dual 25.5; OPT_COS 26 by [C, A, B]; all six orders
    ABC 31, ACB 31, BAC 28, BCA 29, CAB 26, CBA 27."""
    res = yosemite_order(e1())
    assert res.order.tolist() == [0, 2, 1]
    assert res.cos == pytest.approx(31.0) and res.lb_dual == pytest.approx(25.5)
    assert res.prefix_load.tolist() == pytest.approx([5.0, 6.0, 7.0])
    cos = cos_by_order(e1())
    assert cos == pytest.approx({(0, 1, 2): 31, (0, 2, 1): 31, (1, 0, 2): 28, (1, 2, 0): 29,
                                 (2, 0, 1): 26, (2, 1, 0): 27})
    assert res.cos <= 2 * res.lb_dual and res.lb_dual <= min(cos.values())


def test_e1_realisation_and_optimum() -> None:
    """E1 realised by priority water-filling: A 5, C 6, B 7, WCCT 31 (= COS here); the exact
    fluid optimum is 26 (C 3, A 6, B 7)."""
    v = _run(e1())
    assert v.coflow_completion.tolist() == pytest.approx([5.0, 7.0, 6.0])
    assert _wcct(v) == pytest.approx(31.0)
    assert v.meta["lb_dual"] == pytest.approx(25.5) and v.meta["order"] == [0, 2, 1]
    assert exact_optimum(e1(), "weighted_completion")[0] == pytest.approx(26.0)


def test_e4_the_relaxation_sits_below_every_schedule() -> None:
    """E4: Alg. 1 gives [X, Y] with COS = OPT_COS = 4; the prefix deadlines (X by 1, Y by 3)
    cannot be met: realised X 1, Y 4, WCCT 5 = the exact optimum > 4."""
    res = yosemite_order(e4())
    assert res.order.tolist() == [0, 1] and res.cos == pytest.approx(4.0)
    assert min(cos_by_order(e4()).values()) == pytest.approx(4.0)
    v = _run(e4())
    assert v.coflow_completion.tolist() == pytest.approx([1.0, 4.0])
    opt = exact_optimum(e4(), "weighted_completion")[0]
    assert opt == pytest.approx(5.0) and res.cos < opt


def _random(rng: np.random.Generator, fabric: Fabric | None = None) -> Instance:
    """The spec's generator: m in 1..3, n in 2..5, 1-3 flows per coflow (duplicates merged),
    integer sizes 1-5, weights 1-5, r = 0."""
    m = int(rng.integers(1, 4)) if fabric is None else fabric.ports
    specs = []
    for _ in range(int(rng.integers(2, 6))):
        flows: dict[tuple[int, int], float] = {}
        for _ in range(int(rng.integers(1, 4))):
            key = (int(rng.integers(m)), int(rng.integers(m)))
            flows[key] = flows.get(key, 0.0) + float(rng.integers(1, 6))
        specs.append(CoflowSpec([(i, j, v) for (i, j), v in flows.items()],
                                weight=float(rng.integers(1, 6))))
    return build_instance(m if fabric is None else fabric, coflows=specs)


@pytest.mark.parametrize("seed", range(25))
def test_t1_t2_factor_two_on_the_relaxation_and_realised_prefix_bound(seed: int) -> None:
    """T1: LB_dual <= OPT_COS and COS(gamma) <= 2 LB_dual.  T2: every gamma(k) completes by
    2 L(prefix_k) under priority water-filling (and Sincronia's greedy), so WCCT <= 2 COS."""
    inst = _random(np.random.default_rng(seed))
    res = yosemite_order(inst)
    opt_cos = min(cos_by_order(inst).values())
    assert res.lb_dual <= opt_cos + 1e-9
    assert res.cos <= 2 * res.lb_dual + 1e-9
    for allocator in ("waterfill", "greedy"):
        v = _run(inst, allocator=allocator)
        done = v.coflow_completion[res.order]
        assert np.all(done <= 2 * res.prefix_load + 1e-9)
        assert opt_cos - 1e-9 <= _wcct(v) <= 2 * res.cos + 1e-9


@pytest.mark.parametrize("seed", range(4))
def test_t3_relaxation_below_the_exact_optimum(seed: int) -> None:
    """T3: OPT_COS <= OPT (exact fluid) <= Yosemite's realised WCCT <= 4 OPT_COS."""
    inst = _random(np.random.default_rng(1000 + seed))
    opt_cos = min(cos_by_order(inst).values())
    opt = exact_optimum(inst, "weighted_completion")[0]
    wcct = _wcct(_run(inst))
    assert opt_cos <= opt + 1e-6 <= wcct + 2e-6
    assert wcct <= 4 * opt_cos + 1e-9


def test_port_capacities_are_time_normalised() -> None:
    """Ports of different capacities: loads in time units, the prefix bound still holds; the
    order and LB match the brute force on time loads."""
    fab = Fabric(2, capacity_in=[2.0, 1.0], capacity_out=[1.0, 0.5])
    inst = e1(fab)
    res = yosemite_order(inst)
    cos = cos_by_order(inst)
    assert res.cos == pytest.approx(cos[tuple(res.order.tolist())])
    assert res.lb_dual <= min(cos.values()) + 1e-9 and res.cos <= 2 * res.lb_dual + 1e-9
    v = validate(inst, run_yosemite(inst, YosemiteParams(), STORE).schedule)
    assert np.all(v.coflow_completion[res.order] <= 2 * res.prefix_load + 1e-9)


def test_registry_refusals_and_options() -> None:
    """Factor 2 on the relaxed cost only (no metric it bounds); releases and DAGs refused
    before any work in one line; MADD + backfill runs (no bound); deterministic."""
    info = get("yosemite")
    assert info.factor == "2" and info.factor_metric is None and info.kind == "offline"
    assert info.factor_for("weighted_completion", e1()) is None
    late = build_instance(2, coflows=[CoflowSpec([(0, 0, 1.0)], id="a"),
                                      CoflowSpec([(1, 1, 1.0)], id="b", release=2.0)])
    with pytest.raises(UnsupportedInstance, match="'b' is released at 2") as exc:
        coflowopt.run(late, "yosemite")
    assert "\n" not in str(exc.value)
    with pytest.raises(ValueError, match="released"):
        yosemite_order(late)
    dag = build_instance(1, jobs=[JobSpec([CoflowSpec([(0, 0, 1.0)]),
                                           CoflowSpec([(0, 0, 1.0)])], [(0, 1)])])
    with pytest.raises(UnsupportedInstance, match="single-stage"):
        coflowopt.run(dag, "yosemite")
    with pytest.raises(ValueError, match="allocator"):
        YosemitePolicy(np.zeros(1), "fifo")
    assert _wcct(_run(e1(), allocator="madd_backfill")) >= 26.0 - 1e-9
    a = coflowopt.run(e1(), "yosemite", seed=0).valid
    b = coflowopt.run(e1(), "yosemite", seed=7).valid
    np.testing.assert_array_equal(a.coflow_completion, b.coflow_completion)


def test_verify_checks_pass_and_catch_a_broken_order() -> None:
    """``coflowopt verify``'s yosemite, yosemite-realised and iaoa checks pass on a few
    instances (iaoa: reported, its instance 0 the no-factor family at ratio 406 / 109); a
    scheduler that serves the worst order instead fails the yosemite check."""
    from coflowopt.proofs_check.runner import run_checks

    reps = {r.name: r for r in run_checks(["yosemite", "yosemite-realised", "iaoa"], count=4)}
    assert reps["yosemite"].status == "passed" and reps["yosemite"].n == 4
    assert reps["yosemite-realised"].status == "passed"
    assert reps["iaoa"].status == "reported"
    assert reps["iaoa"].worst == pytest.approx(406 / 109)

    def worst_order(instance, *, seed=None):
        """Alg. 1's metadata but the order reversed and served by priority water-filling."""
        out = run_yosemite(instance, YosemiteParams(), STORE)
        rev = out.schedule.meta["order"][::-1]
        rank = np.empty(len(rev))
        rank[rev] = np.arange(len(rev))
        from coflowopt.sim.engine import simulate

        s = simulate(instance, YosemitePolicy(rank))
        res = yosemite_order(instance)
        s.meta.update(lb_dual=res.lb_dual / 3, cos=res.cos, order=rev)  # a wrong certificate
        return s

    bad = run_checks(["yosemite"], count=3, algorithms={"yosemite": worst_order})[0]
    assert bad.status == "failed" and "2 LB_dual" in bad.failures[0][1]


def test_greedy_allocator_is_sincronia_offline() -> None:
    """Alg. 1 is the primal-dual step of Sincronia's BSSI: with Sincronia's greedy allocation
    Yosemite gives Sincronia's offline schedule (a second implementation of the order:
    coflowopt.orders.bssi on dense loads)."""
    inst = _random(np.random.default_rng(7))
    a = coflowopt.run(inst, "yosemite", params={"allocator": "greedy"}).valid
    b = coflowopt.run(inst, "sincronia", params={"mode": "offline"}).valid
    np.testing.assert_array_equal(a.coflow_completion, b.coflow_completion)
