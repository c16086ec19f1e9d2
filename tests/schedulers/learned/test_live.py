"""LiveFeatures (DeepWeave's features along a run, per-coflow sums kept between states) gives
the same floats as the features built from scratch at every state, in any order of the
states, and recomputes only the coflows that may have changed."""

from __future__ import annotations

import numpy as np

import coflowopt
from coflowopt.model import CoflowSpec, Fabric, JobSpec, build_instance
from coflowopt.orders import bssi, port_loads
from coflowopt.schedulers.learned.features import (
    N_FEATURES,
    DagState,
    gdm_positions,
    heuristic_features,
    instance_batch,
    job_batches,
)
from coflowopt.schedulers.learned.live import LiveFeatures
from coflowopt.sim.drive import order_schedule
from coflowopt.workloads.dags import ggen_fan_in_fan_out, tpcds_like


def _states(inst, every_event: bool) -> list[DagState]:
    """The states a rerank policy sees over one run (each copied), served in position order."""
    seen: list[DagState] = []

    def rerank(view):
        seen.append(DagState.from_view(view))
        return np.sort(np.asarray(view.coflows, dtype=np.int64))

    order_schedule(inst, rerank=rerank, every_event=every_event)
    return seen


def _same(a, b) -> None:
    assert a.x.shape == b.x.shape
    assert np.array_equal(a.x, b.x)  # bit for bit (NaN-free features)
    assert np.array_equal(a.coflows, b.coflows)
    assert np.array_equal(a.level_nodes, b.level_nodes)
    assert np.array_equal(a.edge_child, b.edge_child)


def test_same_features_as_from_scratch_along_runs():
    for inst in (tpcds_like(3, ports=6, seed=1),
                 ggen_fan_in_fan_out(2, ports=6, nodes=(4, 16), seed=2, arrival_rate=1e-3)):
        gdm = gdm_positions(inst)
        for fs, every in (("v2", False), ("v1", True)):
            states = _states(inst, every)
            assert len(states) > 3
            live = LiveFeatures(inst, fs, gdm if fs == "v2" else None)
            for st in states:
                ref = instance_batch(inst, state=st, feature_set=fs, gdm=gdm)
                _same(live.instance_batch(st), ref)
                for a, b in zip(live.job_batches(st),
                                job_batches(inst, state=st, feature_set=fs, gdm=gdm),
                                strict=True):
                    _same(a, b)


def test_states_in_any_order_and_only_changed_coflows_recomputed():
    inst = ggen_fan_in_fan_out(3, ports=6, nodes=(4, 16), seed=5, arrival_rate=1e-3)
    states = _states(inst, False)
    gdm = gdm_positions(inst)
    live = LiveFeatures(inst, "v2", gdm)
    counts = []
    for st in states:
        live.totals(st)
        counts.append(live.recomputed)
    # first state: every coflow; later: the ready ones now and before, and status changes
    assert counts[0] == inst.n_coflows
    for k in range(1, len(states)):
        a, b = states[k - 1], states[k]
        expect = np.count_nonzero(a.ready | b.ready | (a.done != b.done))
        assert counts[k] == expect < inst.n_coflows
    rng = np.random.default_rng(0)
    for k in rng.permutation(len(states)):
        ref = instance_batch(inst, state=states[k], feature_set="v2", gdm=gdm)
        _same(live.instance_batch(states[k]), ref)


def test_coflow_totals_are_the_dense_sums():
    """coflow_totals (a compiled pass over the asked coflows' flows) against the dense
    whole-instance forms: np.bincount of the remaining volumes and the (C, 2m) port-load
    matrix over capacity, maximised per row; bit for bit, for all coflows and for subsets."""
    from coflowopt.orders import port_loads
    from coflowopt.schedulers.learned.features import coflow_totals

    inst = ggen_fan_in_fan_out(3, ports=6, nodes=(4, 16), seed=5, arrival_rate=1e-3)
    rng = np.random.default_rng(1)
    cap = np.concatenate([inst.fabric.capacity_in, inst.fabric.capacity_out])
    for _ in range(5):
        rem = inst.flow_volume * rng.uniform(size=inst.n_flows)
        rem[rng.uniform(size=inst.n_flows) < 0.3] = 0.0
        tot = np.bincount(inst.flow_coflow, weights=rem, minlength=inst.n_coflows)
        bn = (port_loads(inst, np.arange(inst.n_coflows), rem) / cap[None, :]).max(axis=1)
        got = coflow_totals(inst, rem)
        assert np.array_equal(got.remaining, tot) and np.array_equal(got.bottleneck, bn)
        sub = np.sort(rng.choice(inst.n_coflows, size=inst.n_coflows // 3, replace=False))
        part = coflow_totals(inst, rem, sub)
        assert np.array_equal(part.remaining, tot[sub])
        assert np.array_equal(part.bottleneck, bn[sub])


def test_episode_batches_are_the_from_scratch_features():
    """DagEpisode (the training environment) keeps a LiveFeatures across epochs and resets:
    its batches at every stepper epoch of two episodes (random priorities) are the features
    built from scratch at that state."""
    from coflowopt.schedulers.learned.env import DagEpisode
    from coflowopt.schedulers.learned.features import as_state

    inst = tpcds_like(3, ports=6, seed=1)
    gdm = gdm_positions(inst)
    rng = np.random.default_rng(4)
    for whole in (False, True):
        ep = DagEpisode(inst, "v2", whole=whole)
        for _ in range(2):
            ep.reset()
            n = 0
            while not ep.done:
                st = as_state(ep.state)
                ref = ([instance_batch(inst, state=st, feature_set="v2", gdm=gdm)] if whole
                       else job_batches(inst, state=st, feature_set="v2", gdm=gdm))
                for a, b in zip(ep.batches(), ref, strict=True):
                    _same(a, b)
                ep.step(rng.random(inst.n_coflows))
                n += 1
            assert n > 3


def _wide_jobs(seed: int, m: int) -> coflowopt.Instance:
    """Jobs of two to four coflows in a chain, each coflow on up to ``m`` random ports (many
    shared), on ports of mixed rates (0.125 is a power of two, 0.3 and 0.7 are not)."""
    rng = np.random.default_rng(seed)
    caps = rng.choice([0.125, 0.3, 0.7, 1.0, 2.0], size=(2, m))
    jobs = []
    for j in range(int(rng.integers(4, 8))):
        cfs = []
        for _ in range(int(rng.integers(2, 5))):
            nf = int(rng.integers(1, 2 * m))
            cfs.append(CoflowSpec([(int(rng.integers(m)), int(rng.integers(m)),
                                    float(rng.integers(1, 20))) for _ in range(nf)]))
        jobs.append(JobSpec(cfs, [(k, k + 1) for k in range(len(cfs) - 1)],
                            release=float(rng.integers(0, 30)) * j,
                            weight=float(rng.integers(1, 4))))
    return build_instance(Fabric(m, caps[0], caps[1]), jobs=jobs)


def test_bssi_rank_feature_is_the_dense_bssi():
    """Feature 10 (BSSI rank among the ready coflows) comes from sparse loads read off the
    per-coflow pass; along runs on wide coflows over mixed port rates it is the rank of the
    dense BSSI (``orders.bssi`` on ``orders.port_loads``, an independent implementation),
    from scratch and in the live features alike."""
    checked = 0
    for seed in range(6):
        inst = _wide_jobs(seed, m=12 + 6 * seed)
        cap = np.concatenate([inst.fabric.capacity_in, inst.fabric.capacity_out])
        w = np.asarray(inst.coflow_weight, dtype=np.float64)
        live = LiveFeatures(inst, "v2")
        for st in _states(inst, True):
            ready = np.flatnonzero(st.ready & ~st.done)
            want = np.ones(inst.n_coflows)  # 1: not ready
            if ready.size:
                sigma = bssi(port_loads(inst, ready, st.remaining), w[ready], cap)
                want[ready[sigma]] = np.arange(ready.size) / max(ready.size - 1, 1)
                checked += ready.size > 2
            assert np.array_equal(heuristic_features(inst, st)[:, 0], want)
            assert np.array_equal(live.instance_batch(st).x[:, N_FEATURES], want)
    assert checked > 50
