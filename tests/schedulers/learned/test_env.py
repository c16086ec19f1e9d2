"""DeepWeave's environment (:mod:`coflowopt.schedulers.learned.env`): the gymnasium API on the
decision-epoch stepper (spec 9.2)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from coflowopt import CoflowSpec, JobSpec, build_instance
from coflowopt.schedulers.learned.env import DagEpisode, draw_instance, order_to_priority
from coflowopt.sim import order_schedule
from coflowopt.validate import Tolerance

gym = pytest.importorskip("gymnasium")


def _env(**kw):
    from coflowopt.schedulers.learned.env import DeepWeaveEnv

    return DeepWeaveEnv(**{"nodes": (4, 10), "ports": 6, "v_max": 16, **kw})


def test_check_env_passes() -> None:
    from gymnasium.utils.env_checker import check_env

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning from the checker either
        check_env(_env(), skip_render_check=True)


def test_return_is_minus_total_jct_and_matches_order_schedule() -> None:
    """A fixed action held for the episode gives order_schedule's schedule with the same
    priorities (negated: the environment serves higher first), and the return is -sum JCT."""
    env = _env(workload="ggen", n_jobs=2)
    obs, info = env.reset(seed=3)
    inst = env.episode.instance
    c = inst.n_coflows
    assert obs["valid"].sum() == c and obs["x"].shape == (16, 10)
    assert obs["ready"][:c].tolist() == env.episode.ready.astype(int).tolist()
    e = inst.starts_after
    assert obs["children"][e[:, 0], e[:, 1]].all() and obs["children"].sum() == len(e)
    a = np.random.default_rng(0).uniform(-1, 1, 16)
    ret, done, n = 0.0, False, 0
    while not done:
        obs, r, done, trunc, info = env.step(a)
        assert not trunc and env.observation_space.contains(obs)
        ret += r
        n += 1
    ref = order_schedule(inst, priority=-a[:c], check=Tolerance())
    assert ret == pytest.approx(-(ref.job_completion - inst.job_release).sum(), rel=1e-12)
    assert info["steps"] == n and info["unfinished_jobs"] == 0


def test_seeded_draws_and_truncation() -> None:
    env = _env(max_steps=2)
    o1, _ = env.reset(seed=11)
    i1 = env.episode.instance
    o2, _ = env.reset(seed=11)
    assert env.episode.instance == i1 and np.array_equal(o1["x"], o2["x"])
    env.reset(seed=12)
    assert env.episode.instance != i1
    _, _, term, trunc, _ = env.step(np.zeros(16))
    _, _, term, trunc, _ = env.step(np.zeros(16))
    assert trunc and not term


def test_order_matters_on_a_hand_instance() -> None:
    # A (10 on in0->out0) and B (1 on in0->out0) share a port; C (5 on in1->out1) starts after B
    inst = build_instance(2, jobs=[JobSpec(
        [CoflowSpec([(0, 0, 10.0)]), CoflowSpec([(0, 0, 1.0)]), CoflowSpec([(1, 1, 5.0)])],
        [(1, 2)])])
    ep = DagEpisode(inst)
    for order, jct in (([0, 1], 16.0), ([1, 0], 11.0)):  # A first: 10, 11, 16; B first: 1, 6, 11
        ep.reset()
        while not ep.done:
            ep.step(order_to_priority([*order, 2], 3))
        assert ep.episode_return == -jct
    assert len(ep.batches()) == 1 and ep.features().shape == (3, 10)


def test_bad_input_is_refused() -> None:
    with pytest.raises(ValueError, match="workload"):
        _env(workload="tpch")
    with pytest.raises(ValueError, match="nodes"):
        draw_instance(np.random.default_rng(0), nodes=(4, 100), v_max=64)
    env = _env()
    with pytest.raises(RuntimeError, match="reset"):
        env.step(np.zeros(16))
    env.reset(seed=0)
    with pytest.raises(ValueError, match="16 priorities"):
        env.step(np.zeros(3))
