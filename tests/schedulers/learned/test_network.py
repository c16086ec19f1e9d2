"""DeepWeave's features and networks: E5, the masking of leaves, the torch twin's agreement
with the numpy forward pass, Plackett-Luce (spec single-stage-and-learning.md 9.3, E5)."""

from __future__ import annotations

import itertools
import math

import networkx as nx
import numpy as np
import pytest

from coflowopt.model import CoflowSpec, JobSpec, build_instance
from coflowopt.schedulers.learned.features import (
    N_FEATURES,
    DagBatch,
    DagState,
    job_batches,
)
from coflowopt.schedulers.learned.network import (
    DeepWeaveConfig,
    forward,
    forward_details,
    init_params,
    param_shapes,
)
from coflowopt.workloads.dags import ggen_fan_in_fan_out, tpcds_like

E5_EDGES = [(0, 1), (0, 2), (1, 3)]  # 1 -> {2, 3}, 2 -> 4 (0-based)


def _identity_params(config: DeepWeaveConfig) -> dict[str, np.ndarray]:
    """h_prep, f, g the identity on positive inputs (scalar features, widths 1)."""
    p = init_params(config, 0)
    for k in p:
        if k.split(".")[0] in ("prep", "f", "g") and ".w" in k:
            p[k] = np.eye(*p[k].shape)
        elif k.split(".")[0] in ("prep", "f", "g"):
            p[k] = np.zeros_like(p[k])
    return p


def test_e5_identity_aggregation():
    """E5: with identity f, g, e_i = x_i + sum over children e_u: e = (10, 6, 3, 4)."""
    cfg = DeepWeaveConfig(n_features=1, hidden_gnn=(1, 1), out_gnn=1, v_max=4)
    b = DagBatch.from_edges([[1.0], [2.0], [3.0], [4.0]], E5_EDGES)
    e = forward_details(_identity_params(cfg), cfg, b)["e"][:, 0]
    np.testing.assert_allclose(e, [10.0, 6.0, 3.0, 4.0])


def test_leaves_keep_lifted_features_and_passes_truncate():
    """Leaves get e = x' (the g term masked); with passes=1 only level 1 aggregates."""
    cfg = DeepWeaveConfig(n_features=1, hidden_gnn=(1, 1), out_gnn=1, v_max=4, passes=1)
    b = DagBatch.from_edges([[1.0], [2.0], [3.0], [4.0]], E5_EDGES)
    p = _identity_params(cfg)
    p["g.b1"] = np.array([100.0])  # g(.) >= 100: visible wherever g is applied
    e = forward_details(p, cfg, b)["e"][:, 0]
    # levels: 3, 2 leaves (0); 1 level 1; 0 level 2 (beyond passes=1: keeps x')
    np.testing.assert_allclose(e, [1.0, 2.0 + 104.0, 3.0, 4.0])


def test_levels_are_longest_path_to_a_leaf():
    inst = ggen_fan_in_fan_out(2, ports=6, nodes=(10, 20), seed=3)
    for b in job_batches(inst):
        g = nx.DiGraph()
        g.add_nodes_from(range(b.n_nodes))
        for i in range(b.n_nodes):
            for c in b.children[b.children_ptr[i]:b.children_ptr[i + 1]]:
                g.add_edge(i, int(c))
        depth = {}
        for v in reversed(list(nx.topological_sort(g))):
            depth[v] = 1 + max((depth[c] for c in g.successors(v)), default=-1)
        for lev, nodes in enumerate(b.levels):
            assert all(depth[int(v)] == lev for v in nodes)
        # the children listed per level are those of the level's nodes, in order
        for lev in range(b.n_levels):
            nodes = b.levels[lev]
            want = [int(c) for v in nodes
                    for c in b.children[b.children_ptr[v]:b.children_ptr[v + 1]]]
            got = b.edge_child[b.level_edge_ptr[lev]:b.level_edge_ptr[lev + 1]].tolist()
            assert got == want


def test_features_in_unit_range_and_one_status_flag():
    inst = tpcds_like(3, ports=6, seed=4)
    for b in job_batches(inst):
        assert b.x.shape == (b.n_nodes, N_FEATURES)
        assert (b.x >= 0).all() and (b.x <= 1).all()
        np.testing.assert_array_equal(b.x[:, 6:10].sum(axis=1), 1.0)
        # initial state: sources ready, others waiting, nothing running or done
        has_parent = np.zeros(b.n_nodes, dtype=bool)
        has_parent[b.children] = True
        np.testing.assert_array_equal(b.x[:, 7], ~has_parent)
        np.testing.assert_array_equal(b.x[:, 6], has_parent)


def test_features_follow_the_state():
    """Two coflows a -> b: a half sent is running with remaining 1/2 of the job's largest
    volume; once a is done, b is ready; once b is done, a has no unfinished child."""
    job = JobSpec([CoflowSpec([(0, 1, 2.0)]), CoflowSpec([(1, 0, 1.0)])], starts_after=[(0, 1)])
    inst = build_instance(2, jobs=[job])
    st = DagState(1.0, np.array([1.0, 1.0]), np.array([False, False]), np.array([True, False]))
    x = job_batches(inst, state=st)[0].x
    assert x[0, 4] == pytest.approx(0.5) and x[0, 8] == 1 and x[1, 6] == 1
    assert x[0, 5] == 1.0
    st = DagState(2.0, np.array([0.0, 1.0]), np.array([True, False]), np.array([False, True]))
    x = job_batches(inst, state=st)[0].x
    assert x[0, 9] == 1 and x[0, 5] == 1 and x[1, 7] == 1
    st = DagState(3.0, np.array([0.0, 0.0]), np.array([True, True]), np.array([False, False]))
    x = job_batches(inst, state=st)[0].x
    assert x[0, 5] == 0 and x[:, 9].tolist() == [1, 1] and x[:, 4].tolist() == [0, 0]


def test_forward_maps_priorities_back_through_the_order():
    """The policy's k-th output goes to the node with the k-th largest attribute."""
    cfg = DeepWeaveConfig()
    p = init_params(cfg, 5)
    b = job_batches(tpcds_like(1, ports=6, seed=5))[0]
    d = forward_details(p, cfg, b)
    assert np.all(np.diff(d["attr"][d["order"]]) <= 0)
    # rebuild P from the documented policy input, independently of forward's mapping
    inp = np.concatenate([np.pad(d["attr"][d["order"]], (0, cfg.v_max - b.n_nodes)), d["y"]])
    h = inp @ p["policy.w0"] + p["policy.b0"]
    h = np.where(h > 0, h, cfg.leaky * h)
    out = h @ p["policy.w1"] + p["policy.b1"]
    np.testing.assert_allclose(d["priorities"][d["order"]], out[:b.n_nodes], rtol=1e-12)


def test_too_large_dag_is_refused_by_name():
    cfg = DeepWeaveConfig(v_max=3)
    b = DagBatch.from_edges(np.zeros((4, N_FEATURES)), E5_EDGES, job=7)
    with pytest.raises(ValueError, match=r"job 7 has 4 coflows.*v_max = 3"):
        forward(init_params(cfg, 0), cfg, b)


def test_attribute_head_takes_more_nodes_than_v_max():
    """v_max is the policy head's input width: the attribute head scores a batch of any size,
    each node as in its own job's batch (two copies of the 5-node DAG, 10 nodes > v_max)."""
    cfg = DeepWeaveConfig(head="attr", summary=False, v_max=3)
    rng = np.random.default_rng(4)
    x = rng.uniform(size=(10, N_FEATURES))
    e = np.asarray(E5_EDGES, dtype=np.int64).reshape(-1, 2)
    both = DagBatch.from_edges(x, np.concatenate([e, e + 5]))
    p = init_params(cfg, 0)
    got = forward(p, cfg, both)
    for k in range(2):
        alone = forward(p, cfg, DagBatch.from_edges(x[5 * k:5 * k + 5], e))
        np.testing.assert_allclose(got[5 * k:5 * k + 5], alone, rtol=1e-12, atol=1e-15)


def test_param_shapes_of_the_ablations():
    base = param_shapes(DeepWeaveConfig())
    assert base["policy.w0"] == (64 + 8, 32) and "policy.w2" not in base
    assert "job.w0" not in param_shapes(DeepWeaveConfig(summary=False))
    assert param_shapes(DeepWeaveConfig(summary=False))["policy.w0"] == (64, 32)
    assert "f.w3" in param_shapes(DeepWeaveConfig(hidden_gnn=(16, 8, 8)))
    assert "policy.w2" in param_shapes(DeepWeaveConfig(hidden_policy=(32, 32)))
    with pytest.raises(ValueError, match="v_max"):
        DeepWeaveConfig(v_max=0)


# -- the torch twin -------------------------------------------------------------------------

CONFIGS = [
    DeepWeaveConfig(),
    DeepWeaveConfig(summary=False, hidden_policy=(32, 16)),
    DeepWeaveConfig(hidden_gnn=(16,), passes=2, v_max=70),
    DeepWeaveConfig(hidden_gnn=(16, 8, 8), hidden_policy=(32, 32, 32), leaky=0.2),
]


@pytest.mark.parametrize("k", range(len(CONFIGS)))
def test_torch_and_numpy_agree(k):
    """Same parameters, same DAGs: the torch forward equals the numpy one to 1e-6 (random
    GGen and TPC-DS-like DAGs at random states)."""
    torch = pytest.importorskip("torch")
    from coflowopt.schedulers.learned.torch_net import DeepWeaveNet

    cfg = CONFIGS[k]
    rng = np.random.default_rng(k)
    p = init_params(cfg, rng)
    p["norm.shift"] = rng.uniform(-0.1, 0.1, cfg.n_features)
    p["norm.scale"] = rng.uniform(0.5, 2.0, cfg.n_features)
    net = DeepWeaveNet(cfg).load_numpy(p)
    insts = [ggen_fan_in_fan_out(2, ports=8, nodes=(2, 64), seed=10 + k),
             tpcds_like(2, ports=8, seed=20 + k)]
    for inst in insts:
        states = [None, DagState(1.0, inst.flow_volume * rng.uniform(0, 1, inst.n_flows),
                                 rng.uniform(size=inst.n_coflows) < 0.3,
                                 rng.uniform(size=inst.n_coflows) < 0.3)]
        for st in states:
            for b in job_batches(inst, state=st):
                a = forward(p, cfg, b)
                with torch.no_grad():
                    t = net(b).numpy()
                np.testing.assert_allclose(t, a, atol=1e-6, rtol=0)


def test_torch_round_trip_is_exact_and_differentiable():
    torch = pytest.importorskip("torch")
    from coflowopt.schedulers.learned.torch_net import DeepWeaveNet

    cfg = DeepWeaveConfig()
    p = init_params(cfg, 9)
    net = DeepWeaveNet(cfg).load_numpy(p)
    back = net.to_numpy()
    assert back.keys() == p.keys()
    assert all(np.array_equal(back[k], p[k]) for k in p)
    b = job_batches(tpcds_like(1, ports=6, seed=9))[0]
    net(b).sum().backward()
    grads = [q.grad for q in net.parameters()]
    assert all(g is not None for g in grads) and any(float(g.abs().sum()) > 0 for g in grads)
    with pytest.raises(ValueError, match=r"policy\.w0"):
        bad = dict(p)
        bad["policy.w0"] = np.zeros((3, 3))
        DeepWeaveNet(cfg).load_numpy(bad)
    del torch


def test_plackett_luce_law():
    """Independent oracle: the probabilities of all orders of 3 ready nodes (the product of
    successive softmax draws, by hand) sum to 1 and match exp(log_prob); sampling draws only
    ready nodes and is seeded."""
    torch = pytest.importorskip("torch")
    from coflowopt.schedulers.learned.torch_net import (
        greedy_order,
        plackett_luce_log_prob,
        plackett_luce_sample,
    )

    pri = torch.tensor([0.3, -1.0, 2.0, 0.5], dtype=torch.float64)
    ready = [0, 2, 3]
    total = 0.0
    for perm in itertools.permutations(ready):
        w = {i: math.exp(float(pri[i])) for i in ready}
        prob, left = 1.0, list(perm)
        for i in perm:
            prob *= w[i] / sum(w[j] for j in left)
            left.remove(i)
        lp = float(plackett_luce_log_prob(pri, torch.tensor(perm)))
        assert lp == pytest.approx(math.log(prob), abs=1e-12)
        total += prob
    assert total == pytest.approx(1.0)
    mask = np.array([True, False, True, True])
    o1, lp1 = plackett_luce_sample(pri, mask, torch.Generator().manual_seed(3))
    o2, _ = plackett_luce_sample(pri, mask, torch.Generator().manual_seed(3))
    assert sorted(o1.tolist()) == ready and o1.tolist() == o2.tolist()
    assert float(lp1) == pytest.approx(float(plackett_luce_log_prob(pri, o1)))
    assert greedy_order(pri, mask).tolist() == [2, 3, 0]
    # empirical frequency of drawing node 2 first ~ its softmax share among the ready nodes
    gen = torch.Generator().manual_seed(0)
    firsts = [int(plackett_luce_sample(pri, mask, gen)[0][0]) for _ in range(400)]
    share = math.exp(2.0) / sum(math.exp(float(pri[i])) for i in ready)
    assert abs(firsts.count(2) / 400 - share) < 0.08
