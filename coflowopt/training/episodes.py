"""One agent's episode with DeepWeave's stochastic policy ``mu_theta`` (Sun, Guo, Wang, Li,
Lan, Hu, IJCAI 2020, Algorithm 1, the agents' step) on the decision-epoch environment of
:mod:`coflowopt.schedulers.learned.env`.

numpy only (the forward pass of :mod:`coflowopt.schedulers.learned.network`): the agents run
in worker processes that never import torch.  ``mu_theta`` [C]: Plackett-Luce over the
ready coflows on the network's priorities, drawn by the Gumbel-max construction; greedy
(sorted) at evaluation.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from coflowopt.model import Instance
from coflowopt.schedulers.learned import network
from coflowopt.schedulers.learned.env import DagEpisode, order_to_priority
from coflowopt.schedulers.learned.features import DagBatch
from coflowopt.schedulers.learned.network import DeepWeaveConfig

__all__ = ["rollout", "rollouts"]


def _priorities(params: dict[str, np.ndarray], cfg: DeepWeaveConfig,
                batches: Sequence[DagBatch], n: int) -> np.ndarray:
    p = np.empty(n)
    for b in batches:
        p[b.coflows] = network.forward(params, cfg, b)
    return p


def rollout(instance: Instance, params: dict[str, np.ndarray], cfg: DeepWeaveConfig, *,
            steps: int | None, seed: Any = None, greedy: bool = False, scale: float = 1.0,
            validate: bool = False) -> dict[str, Any]:
    """One agent's episode on ``instance`` for at most ``steps`` decision epochs (``None``:
    to the end) with the policy ``params``: Plackett-Luce draws (Gumbel-max, numpy generator
    ``seed``) or, with ``greedy``, the ready coflows by decreasing priority (ties: lower
    position).  Returns ``rewards`` ``(S,)`` (divided by ``scale``), ``orders`` (the ready
    coflows in the order drawn, per step), ``x`` (per job, ``(S, V_j, F)`` features),
    ``episode_return`` (unscaled), ``done`` and, with ``validate`` on a finished episode,
    ``jct`` (per job, from the validated schedule)."""
    rng = np.random.default_rng(seed)
    ep = DagEpisode(instance)
    ep.reset()
    n = instance.n_coflows
    rewards: list[float] = []
    orders: list[np.ndarray] = []
    xs: list[list[np.ndarray]] = []
    while not ep.done and (steps is None or len(rewards) < steps):
        bs = ep.batches()
        p = _priorities(params, cfg, bs, n)
        idx = np.flatnonzero(ep.ready)
        if greedy:
            order = idx[np.argsort(-p[idx], kind="stable")]
        else:
            order = idx[np.argsort(-(p[idx] + rng.gumbel(size=idx.size)), kind="stable")]
        r, _ = ep.step(order_to_priority(order, n))
        rewards.append(r / scale)
        orders.append(order)
        xs.append([b.x for b in bs])
    n_jobs = instance.n_jobs
    out: dict[str, Any] = {
        "rewards": np.asarray(rewards, dtype=np.float64),
        "orders": orders,
        "x": [np.stack([s[j] for s in xs]) if xs else np.zeros((0, 0, 0))
              for j in range(n_jobs)],
        "episode_return": ep.episode_return,
        "done": ep.done,
    }
    if validate and ep.done:
        v = ep.stepper.validate()
        out["jct"] = v.job_completion - instance.job_release
    return out


def rollouts(instance: Instance, params: dict[str, np.ndarray], cfg: dict[str, Any],
             steps: int | None, seeds: Sequence[Any], greedy: bool, scale: float,
             validate: bool, keep: bool) -> list[dict[str, Any]]:
    """:func:`rollout` for each of ``seeds`` (the network's settings as a plain dict, so that
    the call pickles to a worker process); without ``keep`` the per-step features and orders
    are dropped (an evaluation needs only the returns and JCTs)."""
    c = DeepWeaveConfig.from_dict(cfg)
    out = []
    for s in seeds:
        r = rollout(instance, params, c, steps=steps, seed=s, greedy=greedy, scale=scale,
                    validate=validate)
        if not keep:
            r = {k: v for k, v in r.items() if k not in ("x", "orders")}
        out.append(r)
    return out
