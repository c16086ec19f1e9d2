"""DeepWeave's feature set "v2" (the heuristics' scores, issue 30), the attribute head, the
instance-wide batch, checkpoint format 2 and the run parameters a checkpoint records."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import coflowopt
from coflowopt import CoflowSpec, JobSpec, build_instance
from coflowopt.schedulers.learned.checkpoint import (
    default_checkpoint_path,
    load_checkpoint,
    save_checkpoint,
)
from coflowopt.schedulers.learned.features import (
    N_FEATURES,
    _critical_path,
    gdm_positions,
    heuristic_features,
    instance_batch,
    job_batches,
    node_levels,
)
from coflowopt.schedulers.learned.network import DeepWeaveConfig, forward, init_params
from coflowopt.workloads.dags import ggen_fan_in_fan_out, tpcds_like


def _chain() -> coflowopt.Instance:
    """One job on 2 unit ports: A (10 on 0->0), B (1 on 0->0), C (5 on 1->1) after B."""
    return build_instance(2, jobs=[JobSpec(
        [CoflowSpec([(0, 0, 10.0)]), CoflowSpec([(0, 0, 1.0)]), CoflowSpec([(1, 1, 5.0)])],
        [(1, 2)])])


def test_heuristic_features_by_hand() -> None:
    """Hand-worked: A, B ready, C waits for B.  BSSI on port 0 (load 11) puts the largest,
    A, last: ranks B 0, A 1, C (not ready) 1.  Bottlenecks 10, 1, 5 (over 10); critical-path
    remainders A 10, B 1 + 5 = 6, C 5 (over 10)."""
    h = heuristic_features(_chain())
    np.testing.assert_allclose(h[:, 0], [1.0, 0.0, 1.0])
    np.testing.assert_allclose(h[:, 2], [1.0, 0.1, 0.5])
    np.testing.assert_allclose(h[:, 3], [1.0, 0.6, 0.5])


@pytest.mark.parametrize("seed", range(6))
def test_critical_path_is_the_level_by_level_recurrence(seed: int) -> None:
    """Feature 13's kernel (node by node, children first by a counting sort on the levels)
    against the recurrence run a level at a time over the edges with ``np.maximum.at``, on
    random fan-in / fan-out job DAGs with some bottlenecks 0: the same floats."""
    inst = ggen_fan_in_fan_out(3, ports=6, nodes=(4, 30), seed=seed)
    rng = np.random.default_rng(seed)
    c = inst.n_coflows
    bn = rng.random(c) * 10.0
    bn[rng.random(c) < 0.3] = 0.0
    e = inst.starts_after
    level = node_levels(c, e[:, 0].astype(np.int64), e[:, 1].astype(np.int64))
    assert level.max() >= 2
    want = bn.copy()
    lev_parent = level[e[:, 0]]
    for lv in range(1, int(level.max()) + 1):
        best = np.zeros(c)
        sel = lev_parent == lv
        np.maximum.at(best, e[sel, 0], want[e[sel, 1]])
        nodes = level == lv
        want[nodes] = bn[nodes] + best[nodes]
    sptr, succ = inst.successors_ptr
    assert np.array_equal(_critical_path(bn, level, sptr, succ), want)


def test_gdm_positions_match_gdm_bf_rank() -> None:
    """A second implementation: G-DM-BF's own backfilling rank (the DAG family's)."""
    from coflowopt.lp import primal_dual_job_order
    from coflowopt.schedulers.dag.gdm import coflow_priority

    inst = tpcds_like(4, ports=6, seed=7)
    want = coflow_priority(inst, primal_dual_job_order(inst).order)
    got = gdm_positions(inst) * (inst.n_coflows - 1)
    np.testing.assert_array_equal(np.rint(got).astype(int), want)


def test_instance_batch_equals_job_batches_for_attr_head() -> None:
    """No edge crosses a job, so one pass over the whole instance gives each job's values."""
    inst = tpcds_like(3, ports=6, seed=2)
    cfg = DeepWeaveConfig.heuristic()
    p = init_params(cfg, 4)
    whole = forward(p, cfg, instance_batch(inst, feature_set="v2"))
    for b in job_batches(inst, feature_set="v2"):
        np.testing.assert_allclose(whole[b.coflows], forward(p, cfg, b), rtol=1e-12)
    x = instance_batch(inst, feature_set="v2").x
    assert x.shape == (inst.n_coflows, N_FEATURES + 4) and x.min() >= 0 and x.max() <= 1


def test_numpy_and_torch_give_the_same_logits_v2() -> None:
    torch = pytest.importorskip("torch")
    from coflowopt.schedulers.learned.torch_net import DeepWeaveNet
    from coflowopt.training.reinforce import batched_priorities

    inst = _chain()
    cfg = DeepWeaveConfig.heuristic()
    p = init_params(cfg, 1)
    b = instance_batch(inst, feature_set="v2")
    net = DeepWeaveNet(cfg).load_numpy(p)
    want = forward(p, cfg, b)
    np.testing.assert_allclose(net(b).detach().numpy(), want, rtol=1e-12)
    got = batched_priorities(net, b, np.stack([b.x, b.x]))
    assert isinstance(got, torch.Tensor)
    np.testing.assert_allclose(got.detach().numpy()[1], want, rtol=1e-12)


def test_config_checks() -> None:
    with pytest.raises(ValueError, match="n_features"):
        DeepWeaveConfig(feature_set="v2")
    with pytest.raises(ValueError, match="summary"):
        DeepWeaveConfig(head="attr")
    with pytest.raises(ValueError, match="feature_set"):
        DeepWeaveConfig(feature_set="v9")


def test_format_1_still_loads(tmp_path) -> None:
    """A version-1 file (the first shipped checkpoint's format: no feature_set / head in the
    config, no meta.run) loads as feature set v1 with the policy head."""
    import json

    cfg = DeepWeaveConfig()
    path = tmp_path / "v1.npz"
    save_checkpoint(path, init_params(cfg, 0), cfg, {"trained": False})
    with np.load(path) as z:
        arrays = {k: z[k] for k in z.files}
    meta = json.loads(arrays["meta"].tobytes())
    meta["format"] = "coflowopt-deepweave/1"
    conf = {k: v for k, v in json.loads(arrays["config"].tobytes()).items()
            if k not in ("feature_set", "head")}
    arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    arrays["config"] = np.frombuffer(json.dumps(conf).encode(), dtype=np.uint8)
    np.savez(path, **arrays)
    _, got, m = load_checkpoint(path)
    assert got == cfg and m["format"] == "coflowopt-deepweave/1"
    _, shipped, _ = load_checkpoint(default_checkpoint_path())  # and the shipped one loads
    assert shipped.n_features in (N_FEATURES, N_FEATURES + 4)


def test_run_parameters_come_from_the_checkpoint(tmp_path) -> None:
    """A v2 checkpoint with meta.run = events/global runs so; explicit parameters win."""
    cfg = DeepWeaveConfig.heuristic()
    path = tmp_path / "dw.npz"
    save_checkpoint(path, init_params(cfg, 0), cfg, {
        "trained": False, "run": {"rerank": "events", "across": "global"}})
    from coflowopt.schedulers.learned.deepweave import DeepWeaveParams, run_deepweave
    from coflowopt.sim.sink import RateSink

    inst = tpcds_like(2, ports=6, seed=1)
    r = run_deepweave(inst, DeepWeaveParams(checkpoint=str(path)), RateSink())
    s = run_deepweave(inst, DeepWeaveParams(checkpoint=str(path), rerank="static"),
                      RateSink())
    assert r.meta["params"]["rerank"] == "events" and r.meta["params"]["across"] == "global"
    assert r.meta["engine"] == "stepper"
    assert s.meta["params"]["rerank"] == "static"
    # the greedy rollout of the trainer is this schedule (same stepper, same order rule)
    from coflowopt.training.episodes import rollout

    pytest.importorskip("torch")
    ro = rollout(inst, init_params(cfg, 0), cfg, steps=None, greedy=True, validate=True)
    got = coflowopt.run(inst, "deepweave", params={"checkpoint": str(path)}).valid
    np.testing.assert_allclose(got.job_completion - inst.job_release, ro["jct"], rtol=1e-12)
    # meta.run may name the engine: the compiled engine's callback, the same schedule
    fast = tmp_path / "fast.npz"
    save_checkpoint(fast, init_params(cfg, 0), cfg, {"trained": False, "run": {
        "rerank": "events", "across": "global", "engine": "fast"}})
    f = run_deepweave(inst, DeepWeaveParams(checkpoint=str(fast)), RateSink())
    assert f.meta["params"]["engine"] == "fast"
    g = coflowopt.run(inst, "deepweave", params={"checkpoint": str(fast)}).valid
    np.testing.assert_allclose(g.coflow_completion, got.coflow_completion, rtol=1e-12)
    bad = tmp_path / "bad.npz"
    save_checkpoint(bad, init_params(cfg, 0), cfg, {"trained": False, "run": {"x": 1}})
    with pytest.raises(ValueError, match=r"meta\.run"):
        load_checkpoint(bad)


def test_check_env_passes_with_v2_features() -> None:
    pytest.importorskip("gymnasium")
    from gymnasium.utils.env_checker import check_env

    from coflowopt.schedulers.learned.env import DeepWeaveEnv

    env = DeepWeaveEnv(nodes=(4, 10), ports=6, v_max=16, feature_set="v2")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env, skip_render_check=True)
    obs, _ = env.reset(seed=1)
    assert obs["x"].shape == (16, N_FEATURES + 4)
