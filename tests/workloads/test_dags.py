"""Tests of the seeded job-DAG generators in :mod:`coflowopt.workloads.dags`."""

from __future__ import annotations

import math

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coflowopt import CoflowSpec, JobSpec, build_instance
from coflowopt.workloads.dags import (
    DEFAULT_COFLOW_CLASSES,
    DEFAULT_COFLOW_SHARES,
    CoflowClassMix,
    critical_path_length,
    fb2010_jobs,
    ggen_fan_in_fan_out,
    is_rooted_tree,
    layered_dags,
    random_coflow_flows,
    rooted_trees,
    tpcds_like,
)
from coflowopt.workloads.trace import find_fb2010, read_trace

SEEDS = st.integers(min_value=0, max_value=2**32 - 1)
FAST = settings(max_examples=15, deadline=None)
SMALL_MIX = CoflowClassMix.single(1, 3, 1, 5)

GENERATORS = {
    "ggen": lambda seed, **kw: ggen_fan_in_fan_out(4, ports=8, nodes=(4, 24), seed=seed, **kw),
    "fan-in": lambda seed, **kw: rooted_trees(4, ports=8, kind="fan-in", seed=seed, **kw),
    "fan-out": lambda seed, **kw: rooted_trees(4, ports=8, kind="fan-out", seed=seed, **kw),
    "layered": lambda seed, **kw: layered_dags(4, ports=8, seed=seed, **kw),
    "tpcds": lambda seed, **kw: tpcds_like(4, ports=8, seed=seed, **kw),
}


def job_graph(inst, j: int) -> nx.DiGraph:
    """Starts-After subgraph of job ``j``, built independently of the module under test."""
    g = nx.DiGraph()
    g.add_nodes_from(np.flatnonzero(inst.coflow_job == j).tolist())
    g.add_edges_from((a, b) for a, b in inst.starts_after.tolist() if inst.coflow_job[a] == j)
    return g


def nx_critical_path(inst, j: int) -> int:
    return len(nx.dag_longest_path(job_graph(inst, j)))


def check_common(inst) -> None:
    """Structural invariants every generator promises."""
    assert nx.is_directed_acyclic_graph(inst.to_networkx())
    cj = inst.coflow_job
    assert np.all(np.diff(cj) >= 0), "coflows grouped by job in job order"
    assert np.array_equal(np.unique(cj), np.arange(inst.n_jobs)), "no empty job"
    if inst.starts_after.size:
        a, b = inst.starts_after.T
        assert np.all(a < b), "positions are a topological order"
        assert np.all(cj[a] == cj[b])
    assert np.all(np.diff(inst.flow_coflow) >= 0), "flows ordered by coflow"
    assert np.all(inst.coflow_width > 0)
    assert np.array_equal(inst.coflow_release, inst.job_release[cj])


# -- coflow sampler --------------------------------------------------------------------------


@FAST
@given(seed=SEEDS, ports=st.integers(1, 12), lo=st.integers(1, 6), extra=st.integers(0, 6))
def test_random_coflow_flows_rule(seed: int, ports: int, lo: int, extra: int) -> None:
    flows = random_coflow_flows(np.random.default_rng(seed), ports, min_width=lo,
                                max_width=lo + extra, min_length=2, max_length=7)
    assert flows == random_coflow_flows(seed, ports, min_width=lo, max_width=lo + extra,
                                        min_length=2, max_length=7)
    src = sorted({s for s, _, _ in flows})
    dst = sorted({d for _, d, _ in flows})
    hi = min(lo + extra, ports)
    assert min(lo, hi) <= len(src) <= hi and min(lo, hi) <= len(dst) <= hi
    assert all(0 <= p < ports for p in src + dst)
    # complete mapper x reducer pattern, one flow per pair
    assert len(flows) == len(src) * len(dst) == len({(s, d) for s, d, _ in flows})
    for r in dst:
        vols = {v for _, d, v in flows if d == r}
        assert len(vols) == 1, "a reducer's volume is split equally over the mappers"
        (v,) = vols
        assert v == int(v) and 2 <= v <= 7


def test_random_coflow_flows_continuous_and_errors() -> None:
    flows = random_coflow_flows(1, 20, min_width=3, max_width=6, min_length=0.5,
                                max_length=0.75, integer=False)
    assert all(0.5 <= v <= 0.75 for _, _, v in flows)
    assert any(v != int(v) for _, _, v in flows)
    with pytest.raises(ValueError):
        random_coflow_flows(1, 5, min_width=0)
    with pytest.raises(ValueError):
        random_coflow_flows(1, 5, min_width=3, max_width=2)
    with pytest.raises(ValueError):
        random_coflow_flows(1, 5, min_length=5, max_length=2)


def test_coflow_class_mix_defaults_and_shares() -> None:
    mix = CoflowClassMix()
    assert mix.classes == DEFAULT_COFLOW_CLASSES == (
        (1, 5, 1, 10), (1, 5, 10, 1000), (5, None, 1, 10), (5, None, 10, 1000))
    assert mix.shares == DEFAULT_COFLOW_SHARES == (0.41, 0.29, 0.09, 0.21)
    rng = np.random.default_rng(7)
    n = 3000
    long_ = wide = 0
    for _ in range(n):
        flows = mix.sample(rng, 40)
        long_ += max(v for _, _, v in flows) > 10
        wide += len({s for s, _, _ in flows}) > 5 or len({d for _, d, _ in flows}) > 5
    # classes 2 and 4 (lengths 10..1000) hold 50 %; P(a draw of exactly 10 only) is tiny
    assert abs(long_ / n - 0.50) < 0.04
    # a wide class (30 %) exceeds width 5 on either side unless both widths are 5 (~0.1 %)
    assert abs(wide / n - 0.30) < 0.04
    with pytest.raises(ValueError):
        CoflowClassMix(classes=((1, 2, 1, 2),), shares=(0.5, 0.5))
    with pytest.raises(ValueError):
        CoflowClassMix(classes=((0, 2, 1, 2),), shares=(1.0,))


def test_wide_classes_clip_to_small_fabrics() -> None:
    inst = tpcds_like(5, ports=3, seed=0)
    assert inst.ports == 3
    assert inst.flow_src.max() < 3 and inst.flow_dst.max() < 3


# -- every generator -------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(GENERATORS))
@FAST
@given(seed=SEEDS)
def test_generators_acyclic_and_deterministic(name: str, seed: int) -> None:
    gen = GENERATORS[name]
    a = gen(seed)
    assert a == gen(seed)
    assert a == gen(np.random.default_rng(seed))
    check_common(a)
    assert a.n_jobs == 4
    assert a.time_unit == "unit" and a.fabric.is_uniform and a.fabric.capacity_in[0] == 1.0
    assert np.all(a.job_weight == 1.0) and np.all(a.job_release == 0.0)


@pytest.mark.parametrize("name", list(GENERATORS))
def test_generators_seed_matters_and_options(name: str) -> None:
    gen = GENERATORS[name]
    assert gen(1) != gen(2)
    inst = gen(3, weight="uniform", arrival_rate=0.5, capacity=2.0, mix=SMALL_MIX)
    check_common(inst)
    assert np.all((inst.job_weight > 0) & (inst.job_weight <= 1)) and len(
        set(inst.job_weight.tolist())) == inst.n_jobs
    rho = inst.job_release
    assert np.all(rho > 0) and np.all(np.diff(rho) > 0)
    assert inst.fabric.capacity_in[0] == 2.0
    assert inst.flow_volume.max() <= 5 and inst.coflow_width.max() <= 9
    with pytest.raises(ValueError):
        gen(3, weight="heavy")
    with pytest.raises(ValueError):
        gen(3, arrival_rate=0.0)


def test_release_process_mean_gap() -> None:
    inst = rooted_trees(2000, ports=2, nodes=1, seed=5, arrival_rate=4.0, mix=SMALL_MIX)
    gaps = np.diff(np.r_[0.0, inst.job_release])
    assert abs(gaps.mean() - 0.25) < 0.02  # sd of the mean: 0.25 / sqrt(2000) = 0.0056


def test_zero_jobs() -> None:
    for gen in (ggen_fan_in_fan_out, rooted_trees, layered_dags, tpcds_like):
        inst = gen(0, ports=4, seed=0)
        assert inst.n_jobs == inst.n_coflows == inst.n_flows == 0


# -- GGen fan-in / fan-out -------------------------------------------------------------------


@FAST
@given(seed=SEEDS, lo=st.integers(1, 30), span=st.integers(0, 34),
       max_out=st.integers(1, 4), max_in=st.integers(1, 4))
def test_ggen_shape(seed: int, lo: int, span: int, max_out: int, max_in: int) -> None:
    inst = ggen_fan_in_fan_out(3, ports=4, nodes=(lo, lo + span), max_out=max_out,
                               max_in=max_in, seed=seed, mix=SMALL_MIX)
    for j in range(inst.n_jobs):
        g = job_graph(inst, j)
        assert lo <= g.number_of_nodes() <= lo + span
        assert nx.is_weakly_connected(g)
        assert max(d for _, d in g.out_degree()) <= max_out
        assert max(d for _, d in g.in_degree()) <= max_in
        assert [v for v, d in g.in_degree() if d == 0] == [min(g.nodes)], "single source"


def test_ggen_default_sizes_and_exact_count() -> None:
    inst = ggen_fan_in_fan_out(30, ports=4, seed=11, mix=SMALL_MIX)
    sizes = np.bincount(inst.coflow_job)
    assert sizes.min() >= 4 and sizes.max() <= 64 and sizes.max() - sizes.min() > 20
    inst = ggen_fan_in_fan_out(5, ports=4, nodes=16, seed=11, mix=SMALL_MIX)
    assert np.all(np.bincount(inst.coflow_job) == 16)
    # both step kinds occur: some node has >= 2 children, some node >= 2 parents
    g = inst.to_networkx()
    assert max(d for _, d in g.out_degree()) >= 2 and max(d for _, d in g.in_degree()) >= 2


# -- rooted trees ----------------------------------------------------------------------------


@FAST
@given(seed=SEEDS, kind=st.sampled_from(["fan-in", "fan-out"]), lo=st.integers(1, 8),
       span=st.integers(0, 8))
def test_rooted_trees_detected(seed: int, kind: str, lo: int, span: int) -> None:
    inst = rooted_trees(5, ports=4, kind=kind, nodes=(lo, lo + span), seed=seed, mix=SMALL_MIX)
    for j in range(inst.n_jobs):
        g = job_graph(inst, j)
        n = g.number_of_nodes()
        assert lo <= n <= lo + span
        assert nx.is_tree(g.to_undirected())
        is_path = max((d for _, d in g.degree()), default=0) <= 2 and all(
            d <= 1 for _, d in g.out_degree()) and all(d <= 1 for _, d in g.in_degree())
        got = is_rooted_tree(inst, j)
        assert got == (kind if not is_path else "fan-in")
        root = [v for v, d in (g.out_degree() if kind == "fan-in" else g.in_degree()) if d == 0]
        assert root == [max(g.nodes) if kind == "fan-in" else min(g.nodes)]


def test_rooted_trees_default_range_and_not_only_paths() -> None:
    for kind in ("fan-in", "fan-out"):
        inst = rooted_trees(40, ports=4, kind=kind, seed=3, mix=SMALL_MIX)
        sizes = np.bincount(inst.coflow_job)
        assert sizes.min() >= 2 and sizes.max() <= 10
        kinds = [is_rooted_tree(inst, j) for j in range(inst.n_jobs)]
        assert kind in kinds and None not in kinds


def _hand_built(edges_per_job: list[tuple[int, list[tuple[int, int]]]]):
    jobs = [JobSpec([CoflowSpec([(0, 1, 1.0)]) for _ in range(n)], starts_after=e)
            for n, e in edges_per_job]
    return build_instance(2, jobs=jobs)


def test_is_rooted_tree_hand_built() -> None:
    inst = _hand_built([
        (4, [(0, 1), (0, 2), (1, 3), (2, 3)]),  # diamond: 4 edges
        (4, [(0, 1), (2, 3)]),  # forest: 2 components
        (4, [(0, 3), (1, 3), (2, 1)]),  # fan-in tree, root 3
        (4, [(3, 0), (3, 1), (1, 2)]),  # fan-out tree, root 3
        (3, [(0, 1), (2, 1)]),  # in-tree toward the middle coflow 1
        (3, [(1, 0), (1, 2)]),  # out-tree from 1
        (4, [(0, 1), (2, 1), (1, 3)]),  # fan-in: leaves 0, 2 -> 1 -> root 3
        (4, [(0, 1), (1, 2), (3, 2)]),  # fan-in toward 2: 0 -> 1 -> 2 <- 3
        (4, [(1, 0), (1, 2), (3, 2)]),  # undirected tree, but mixed directions
        (1, []),  # single coflow
        (3, [(0, 1), (1, 2)]),  # path
        (3, [(0, 1), (0, 2), (1, 2)]),  # triangle: mu edges
    ])
    got = [is_rooted_tree(inst, j) for j in range(inst.n_jobs)]
    assert got == [None, None, "fan-in", "fan-out", "fan-in", "fan-out", "fan-in", "fan-in",
                   None, "fan-in", "fan-in", None]
    with pytest.raises(IndexError):
        is_rooted_tree(inst, inst.n_jobs)


# -- layered DAGs ----------------------------------------------------------------------------


@FAST
@given(seed=SEEDS, layers=st.integers(1, 6), wlo=st.integers(1, 3), wspan=st.integers(0, 3),
       p=st.sampled_from([0.0, 0.3, 1.0]))
def test_layered_dags_rule(seed: int, layers: int, wlo: int, wspan: int, p: float) -> None:
    inst = layered_dags(3, ports=4, layers=layers, width=(wlo, wlo + wspan), edge_prob=p,
                        seed=seed, mix=SMALL_MIX)
    for j in range(inst.n_jobs):
        g = job_graph(inst, j)
        n = g.number_of_nodes()
        assert layers * wlo <= n <= layers * (wlo + wspan)
        assert nx_critical_path(inst, j) == critical_path_length(inst, j) == layers
        sources = [v for v, d in g.in_degree() if d == 0]
        assert wlo <= len(sources) <= wlo + wspan, "only layer 0 has no parent"
        if p == 1.0:  # every earlier node is a parent: edges = sum over layers
            assert nx.transitive_closure_dag(g).number_of_edges() == g.number_of_edges()


def test_layered_default_ranges() -> None:
    inst = layered_dags(30, ports=4, seed=2, mix=SMALL_MIX)
    depth = [critical_path_length(inst, j) for j in range(inst.n_jobs)]
    assert min(depth) >= 2 and max(depth) <= 6 and len(set(depth)) >= 3


# -- TPC-DS-like -----------------------------------------------------------------------------


@FAST
@given(seed=SEEDS, lo=st.integers(3, 8), span=st.integers(0, 3), slo=st.integers(1, 8),
       sspan=st.integers(0, 8))
def test_tpcds_critical_path_in_range(seed: int, lo: int, span: int, slo: int,
                                      sspan: int) -> None:
    inst = tpcds_like(4, ports=4, critical_path=(lo, lo + span), scans=(slo, slo + sspan),
                      seed=seed, mix=SMALL_MIX)
    for j in range(inst.n_jobs):
        g = job_graph(inst, j)
        length = nx_critical_path(inst, j)
        assert lo <= length <= lo + span
        assert critical_path_length(inst, j) == length
        assert nx.is_weakly_connected(g)
        n_scans = sum(1 for _, d in g.in_degree() if d == 0)
        assert n_scans <= min(slo + sspan, 2 ** (length - 2))
        assert n_scans >= min(slo, 2 ** (lo - 2))
        # joins have two inputs, everything else at most one; a single sink
        assert all(d in (0, 1, 2) for _, d in g.in_degree())
        assert sum(1 for _, d in g.out_degree() if d == 0) == 1
        assert sum(1 for _, d in g.in_degree() if d == 2) == n_scans - 1


def test_tpcds_default_covers_4_to_7() -> None:
    inst = tpcds_like(60, ports=4, seed=9, mix=SMALL_MIX)
    lengths = [nx_critical_path(inst, j) for j in range(inst.n_jobs)]
    assert set(lengths) == {4, 5, 6, 7}
    exact = tpcds_like(10, ports=4, critical_path=5, seed=9, mix=SMALL_MIX)
    assert {nx_critical_path(exact, j) for j in range(exact.n_jobs)} == {5}
    with pytest.raises(ValueError):
        tpcds_like(1, ports=4, critical_path=2)


# -- critical_path_length --------------------------------------------------------------------


@pytest.mark.parametrize("name", list(GENERATORS))
def test_critical_path_length_matches_networkx(name: str) -> None:
    inst = GENERATORS[name](21, mix=SMALL_MIX)
    for j in range(inst.n_jobs):
        assert critical_path_length(inst, j) == nx_critical_path(inst, j)


# -- jobs from a trace -----------------------------------------------------------------------


def _toy_trace(n: int = 40, ports: int = 6, seed: int = 0):
    rng = np.random.default_rng(seed)
    coflows = [
        CoflowSpec(random_coflow_flows(rng, ports, max_width=3, max_length=4, integer=False),
                   id=100 + k, release=float(rng.integers(0, 1000)))
        for k in range(n)
    ]
    return build_instance(ports, coflows=coflows, time_unit="ms")


def _check_trace_jobs(jobs, trace, *, down_scaled: bool = False) -> None:
    check_common(jobs)
    # every trace coflow exactly once
    assert sorted(jobs.coflow_id.tolist()) == sorted(trace.coflow_id.tolist())
    pos = {cid: k for k, cid in enumerate(trace.coflow_id.tolist())}
    orig = np.array([pos[c] for c in jobs.coflow_id.tolist()])
    # volume preserved, per coflow and in total
    assert np.allclose(jobs.coflow_size, trace.coflow_size[orig])
    assert math.isclose(jobs.flow_volume.sum(), trace.flow_volume.sum(), rel_tol=1e-12)
    # job release = min arrival of its coflows
    rho = np.full(jobs.n_jobs, np.inf)
    np.minimum.at(rho, jobs.coflow_job, trace.release[orig])
    assert np.array_equal(jobs.job_release, rho)
    assert np.all((jobs.job_weight > 0) & (jobs.job_weight <= 1))
    if not down_scaled:
        assert np.array_equal(jobs.coflow_width, trace.coflow_width[orig])
    else:
        key = (jobs.flow_coflow.astype(np.int64) * jobs.ports + jobs.flow_src) * jobs.ports \
            + jobs.flow_dst
        assert np.unique(key).size == key.size, "same-pair flows merged"


@FAST
@given(seed=SEEDS, mean=st.integers(1, 6), shape=st.sampled_from(["dag", "fan-in"]),
       ports=st.sampled_from([None, 1, 4]))
def test_trace_jobs_on_toy_trace(seed: int, mean: int, shape: str, ports: int | None) -> None:
    trace = _toy_trace()
    jobs = fb2010_jobs(trace, mean_coflows=mean, shape=shape, seed=seed, ports=ports)
    assert jobs == fb2010_jobs(trace, mean_coflows=mean, shape=shape, seed=seed, ports=ports)
    _check_trace_jobs(jobs, trace, down_scaled=ports is not None)
    sizes = np.bincount(jobs.coflow_job)
    assert sizes.max() <= 2 * mean - 1
    assert jobs.ports == (trace.ports if ports is None else ports)
    assert jobs.time_unit == "ms"
    if shape == "fan-in":
        assert all(is_rooted_tree(jobs, j) == "fan-in" for j in range(jobs.n_jobs))


def test_trace_jobs_options_on_toy_trace(tmp_path, monkeypatch) -> None:
    trace = _toy_trace()
    off = fb2010_jobs(trace, seed=1, offline=True)
    assert np.all(off.job_release == 0)
    sl = fb2010_jobs(trace, seed=1, slots=True)
    assert sl.time_unit == "unit" and sl.fabric.capacity_in[0] == 1.0
    base = fb2010_jobs(trace, seed=1)
    assert np.array_equal(sl.flow_volume, np.ceil(base.flow_volume))
    assert np.array_equal(sl.job_release, np.ceil(base.job_release * trace.fabric.capacity_in[0]))
    assert fb2010_jobs(trace, seed=1, edge_prob=0.0).starts_after.size == 0
    single = fb2010_jobs(trace, seed=1, mean_coflows=1)
    assert single.n_jobs == trace.n_coflows and single.starts_after.size == 0
    with pytest.raises(ValueError):
        fb2010_jobs(base, seed=1)  # not single-stage
    with pytest.raises(ValueError):
        fb2010_jobs(trace, seed=1, mean_coflows=0)
    with pytest.raises(ValueError):
        fb2010_jobs(trace, seed=1, shape="tree")
    monkeypatch.setenv("COFLOWOPT_FB2010", str(tmp_path / "missing.txt"))
    with pytest.raises(FileNotFoundError, match="FB2010"):
        fb2010_jobs(seed=1)


# -- jobs from FB2010 (skipped without the trace) --------------------------------------------


@pytest.fixture(scope="module")
def fb2010():
    path = find_fb2010()
    if path is None:
        pytest.skip("FB2010 trace not available (set COFLOWOPT_FB2010)")
    return read_trace(path)


@pytest.mark.parametrize("shape", ["dag", "fan-in"])
def test_fb2010_jobs_rule(fb2010, shape: str) -> None:
    jobs = fb2010_jobs(fb2010, shape=shape, seed=4)
    assert jobs.n_coflows == 526 and jobs.n_flows == fb2010.n_flows == 706_397
    assert jobs.time_unit == "ms" and jobs.fabric == fb2010.fabric
    _check_trace_jobs(jobs, fb2010)
    assert jobs == fb2010_jobs(fb2010, shape=shape, seed=4)
    assert jobs != fb2010_jobs(fb2010, shape=shape, seed=5)
    if shape == "fan-in":
        assert all(is_rooted_tree(jobs, j) == "fan-in" for j in range(jobs.n_jobs))
    else:
        sizes = np.bincount(jobs.coflow_job)
        pairs = int((sizes * (sizes - 1) // 2).sum())
        assert abs(len(jobs.starts_after) / pairs - 0.5) < 0.08


def test_fb2010_jobs_default_path_and_downscaling(fb2010) -> None:
    jobs = fb2010_jobs(seed=8)  # finds the trace itself
    assert jobs == fb2010_jobs(fb2010, seed=8)
    assert jobs == fb2010_jobs(find_fb2010(), seed=8)
    small = fb2010_jobs(fb2010, seed=8, ports=10)
    assert small.ports == 10 and small.flow_src.max() < 10 and small.flow_dst.max() < 10
    assert small.n_flows < jobs.n_flows
    _check_trace_jobs(small, fb2010, down_scaled=True)
    assert np.array_equal(small.starts_after, jobs.starts_after)
    # per coflow, the down-scaled demand is the folded original demand
    c = int(np.argmax(jobs.coflow_width))
    d = jobs.demand_matrix(c)
    folded = np.zeros((10, 10))
    idx = np.arange(fb2010.ports) % 10
    np.add.at(folded, (idx[:, None], idx[None, :]), d)
    assert np.allclose(small.demand_matrix(c), folded)
    slot = fb2010_jobs(fb2010, seed=8, ports=10, slots=True)
    assert slot.fabric.capacity_in[0] == 1.0 and np.all(slot.flow_volume == np.round(
        slot.flow_volume))
    assert slot.flow_volume.sum() >= fb2010.flow_volume.sum()


@pytest.mark.parametrize("mean", [2, 5, 10])
def test_fb2010_mean_coflows_per_job(fb2010, mean: int) -> None:
    # mu_j uniform on {1..2*mean-1}: mean `mean`, sd sqrt(((2*mean-1)^2 - 1) / 12).  Pooled over
    # 10 seeds (about 10 * 526 / mean jobs) a tolerance of 4.5 standard errors rejects the
    # off-by-one range {1..2*mean} (mean + 0.5) for mean 2 and 5 and {1..2*mean+1} for all.
    seeds = range(10)
    insts = [fb2010_jobs(fb2010, mean_coflows=mean, seed=s) for s in seeds]
    n_jobs = sum(i.n_jobs for i in insts)
    observed = len(seeds) * 526 / n_jobs
    sd = math.sqrt(((2 * mean - 1) ** 2 - 1) / 12)
    tol = 4.5 * sd / math.sqrt(len(seeds) * 526 / mean)
    assert abs(observed - mean) < tol
    # every job but the last (truncated) one has a size in {1..2*mean-1}, and all sizes occur
    sizes = np.concatenate([np.bincount(i.coflow_job)[:-1] for i in insts])
    assert set(sizes.tolist()) == set(range(1, 2 * mean))


def test_fb2010_jobs_keeps_the_first_coflows_by_arrival() -> None:
    from coflowopt.workloads.synthetic import synthetic_trace

    trace = synthetic_trace(30, ports=12, seed=3)
    first = trace.coflow_id[np.lexsort((np.arange(30), trace.release))[:11]]
    inst = fb2010_jobs(trace, coflows=11, seed=0, mean_coflows=3)
    assert sorted(inst.coflow_id.tolist()) == sorted(first.tolist())
    kept = np.isin(trace.coflow_id[trace.flow_coflow], first)
    assert inst.n_flows == int(kept.sum())
    assert inst.flow_volume.sum() == pytest.approx(trace.flow_volume[kept].sum())
    assert fb2010_jobs(trace, coflows=30, seed=0) == fb2010_jobs(trace, seed=0)
    with pytest.raises(ValueError, match="coflows"):
        fb2010_jobs(trace, coflows=0)
