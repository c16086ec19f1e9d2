"""Fine-tuning DeepWeave's pre-trained policy without collapse (issue 30): Algorithm 1's ``N``
agents per instance (DeepWeave: Sun, Guo, Wang, Li, Lan, Hu, IJCAI 2020), with PPO's clipped
surrogate (Schulman et al., arXiv 1707.06347, 2017, eq. (7)), Decima's input-dependent baseline
(Mao et al., SIGCOMM 2019, Sec. 5.3: the mean return of the agents on the *same* instance,
per decision epoch), an entropy bonus with a linearly decaying weight, a penalty on logits beyond
a bound, and a KL term toward the pre-trained policy with a decaying weight.  Needs the
``learn`` extra.

One iteration [C]:

1. draw a training instance (:func:`coflowopt.training.teachers.training_seeds`, stream 10);
   the ``agents`` sample orders from ``mu_theta`` (Plackett-Luce on the priorities, Gumbel-max)
   on the decision-epoch stepper, keeping ``record`` states each (uniform sample);
2. ``R_t^i`` reward-to-go, ``b_t`` the agents' mean (``baseline="agents"``, 0 past an
   agent's end) or 0 (``"none"``); ``A = (R - b) / std``;
3. ``update_epochs`` Adam steps on ``- mean min(rho A, clip(rho, 1 +- clip) A) - w_H H +
   w_KL KL(mu_0 || mu_theta) + w_B mean(relu(|p| - bound)^2)`` with ``rho = exp(log mu_theta -
   log mu_old)`` over the first ``top`` draws of each sampled order (the rest of a long order
   barely changes the schedule and makes ``rho`` explode), ``H`` and ``KL`` of the first draw's
   softmax over the ready coflows, ``w_H``, ``w_KL`` decaying linearly to 0 over
   ``entropy_decay`` / ``kl_decay`` iterations.

Setting ``clip=0`` disables clipping (plain policy gradient with one update per batch), ``kl=0``
the KL term, ``entropy=0`` the entropy bonus: the ablations of BENCHMARKS.md.
"""

from __future__ import annotations

import multiprocessing
import os
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from coflowopt.params import Params
from coflowopt.schedulers.learned.features import instance_batch
from coflowopt.schedulers.learned.network import DeepWeaveConfig
from coflowopt.training.episodes import rollout
from coflowopt.training.imitation import ImitationResult, close_row, torch_one_thread
from coflowopt.training.teachers import (
    WORKLOADS,
    check_workloads,
    make_instance,
    training_seeds,
)

__all__ = ["VARIANTS", "FineTuneConfig", "FineTuneResult", "finetune"]

#: The ablation variants [C] (one change at a time from ``ppo``): ``ppo`` -- clipped updates,
#: the agents' baseline, decaying entropy bonus and KL to the pre-trained policy, logit bound;
#: ``ppo-nokl`` -- without the KL term; ``pg`` -- one plain policy-gradient step per batch, no
#: clipping, no KL (closest to the REINFORCE trainer, from the imitation start).
VARIANTS: dict[str, dict[str, Any]] = {
    "ppo": {},
    "ppo-nokl": {"kl": 0.0},
    "pg": {"clip": 0.0, "kl": 0.0},
}


@dataclass(frozen=True)
class FineTuneConfig(Params):
    """The module docstring's settings; ``validation`` instances (stream 8, as imitation's)
    every ``validate_every`` iterations and at the end; ``workers``: agent processes;
    ``max_seconds``: stop after the iteration that passes this wall time (0: no limit)."""

    iterations: int = 40
    agents: int = 8
    lr: float = 3e-4
    clip: float = 0.2
    update_epochs: int = 4
    top: int = 8
    entropy: float = 0.01
    entropy_decay: int = 40
    kl: float = 0.5
    kl_decay: int = 40
    logit_bound: float = 20.0
    bound_weight: float = 1e-3
    baseline: Literal["agents", "none"] = "agents"
    record: int = 32
    seed: int = 0
    workers: int = 1
    workloads: tuple[str, ...] = tuple(WORKLOADS)
    validation: int = 6
    validate_every: int = 10
    max_seconds: float = 0.0

    def check(self) -> None:
        for name in ("iterations", "agents", "update_epochs", "top", "record", "workers"):
            if getattr(self, name) < 1:
                raise ValueError(f"FineTuneConfig.{name}: must be >= 1, got "
                                 f"{getattr(self, name)}")
        for name in ("clip", "entropy", "kl", "bound_weight", "validation", "validate_every",
                     "entropy_decay", "kl_decay"):
            if getattr(self, name) < 0:
                raise ValueError(f"FineTuneConfig.{name}: must be >= 0, got "
                                 f"{getattr(self, name)}")
        if not self.lr > 0 or not self.logit_bound > 0:
            raise ValueError("FineTuneConfig.lr / logit_bound: must be > 0")
        check_workloads("FineTuneConfig.workloads", self.workloads)


#: Fine-tuning leaves the same record as imitation (``teachers`` stays empty).
FineTuneResult = ImitationResult


def _agent_job(args: tuple[str, int, dict[str, np.ndarray], dict[str, Any], int, int, float]
               ) -> dict[str, Any]:
    workload, gen_seed, params, cfg_d, seed, record, scale = args
    inst = make_instance(workload, gen_seed)
    return rollout(inst, params, DeepWeaveConfig.from_dict(cfg_d), steps=None, seed=seed,
                   scale=scale, record=record)


def _decay(w: float, it: int, horizon: int) -> float:
    return w * max(0.0, 1.0 - it / horizon) if horizon else 0.0


def _first_draw(pri: Any, orders: list[np.ndarray]) -> tuple[Any, Any]:
    """Per state: log-softmax of the priorities over the ready coflows (about ``-1e9``
    elsewhere) and the ready mask."""
    import torch

    mask = torch.zeros(pri.shape, dtype=torch.bool)
    for s, o in enumerate(orders):
        mask[s, torch.as_tensor(o, dtype=torch.long)] = True
    # a large finite value, not -inf: exp() is 0 there and 0 * value stays finite, so the
    # masked terms carry no NaN into the gradients
    logits = torch.where(mask, pri, torch.full_like(pri, -1e9))
    return torch.log_softmax(logits, dim=1), mask


def _advantages(ro: list[dict[str, Any]], baseline: str) -> np.ndarray:
    T = max(len(r["rewards"]) for r in ro)
    R = np.zeros((len(ro), T))
    for i, r in enumerate(ro):
        rw = r["rewards"]
        R[i, : rw.size] = np.cumsum(rw[::-1])[::-1]
    b = R.mean(axis=0) if baseline == "agents" else np.zeros(T)
    adv = np.concatenate([R[i, r["steps"]] - b[r["steps"]] for i, r in enumerate(ro)])
    return adv / (adv.std() + 1e-8)


def finetune(cfg: FineTuneConfig, init: dict[str, np.ndarray], net_cfg: DeepWeaveConfig, *,
             log: Callable[[str], None] | None = None) -> ImitationResult:
    """Fine-tune the weights ``init`` (a ``head="attr"`` network, e.g. from imitation) by the
    module docstring's iteration; the curve has per iteration the agents' mean average JCT
    and the loss terms, and every ``validate_every`` iterations the validation ratios.  torch
    runs on one thread (:func:`~coflowopt.training.imitation.torch_one_thread`)."""
    with torch_one_thread():
        return _finetune(cfg, init, net_cfg, log)


def _finetune(cfg: FineTuneConfig, init: dict[str, np.ndarray], net_cfg: DeepWeaveConfig,
              log: Callable[[str], None] | None) -> ImitationResult:
    import torch

    from coflowopt.schedulers.learned.torch_net import DeepWeaveNet
    from coflowopt.training.reinforce import batched_log_prob, batched_priorities

    t0 = time.perf_counter()
    torch.manual_seed(cfg.seed)
    net = DeepWeaveNet(net_cfg).load_numpy(init)
    ref = DeepWeaveNet(net_cfg).load_numpy(init)
    opt = torch.optim.Adam(net.parameters(), lr=cfg.lr)
    draws = training_seeds(cfg.seed, cfg.iterations, cfg.workloads, stream=10)
    val_seeds = training_seeds(cfg.seed, cfg.validation, cfg.workloads, stream=8)
    res = ImitationResult(params={}, config=net_cfg)
    teachers: dict[tuple[str, int], dict[str, float]] = {}
    pool = None
    if cfg.workers > 1:
        os.environ.setdefault("OMP_NUM_THREADS", "1")
        # spawn, not fork: torch refuses autograd in a child forked after a backward pass
        # (measured on torch 2.11), and the pool may start workers after the first update
        ctx = multiprocessing.get_context("spawn")
        pool = ProcessPoolExecutor(max_workers=cfg.workers, mp_context=ctx)
    cd = net_cfg.to_dict()
    try:
        for it in range(cfg.iterations):
            w, s = draws[it]
            inst = make_instance(w, s)
            params = net.to_numpy()
            jobs = [(w, s, params, cd, cfg.seed * 1_000_003 + it * cfg.agents + a, cfg.record,
                     1.0) for a in range(cfg.agents)]
            ro = (list(pool.map(_agent_job, jobs)) if pool is not None
                  else [_agent_job(j) for j in jobs])
            avg_jct = float(np.mean([-r["episode_return"] / inst.n_jobs for r in ro]))
            adv = torch.as_tensor(_advantages(ro, cfg.baseline), dtype=net.dtype)
            template = instance_batch(inst, feature_set=net_cfg.feature_set)
            X = np.concatenate([r["x"][0] for r in ro if len(r["orders"])])
            orders = [o for r in ro for o in r["orders"]]
            with torch.no_grad():
                old = batched_log_prob(batched_priorities(net, template, X), orders, cfg.top)
                ref_lsm, mask = _first_draw(batched_priorities(ref, template, X), orders)
            w_h = _decay(cfg.entropy, it, cfg.entropy_decay)
            w_kl = _decay(cfg.kl, it, cfg.kl_decay)
            for _ in range(cfg.update_epochs if cfg.clip > 0 else 1):
                pri = batched_priorities(net, template, X)
                logp = batched_log_prob(pri, orders, cfg.top)
                rho = torch.exp(logp - old)
                surr = (torch.minimum(rho * adv, torch.clamp(rho, 1 - cfg.clip, 1 + cfg.clip)
                                      * adv) if cfg.clip > 0 else logp * adv)
                lsm, _ = _first_draw(pri, orders)
                pz = torch.where(mask, lsm.exp() * lsm, torch.zeros_like(lsm))
                ent = -pz.sum(dim=1).mean()
                kl = torch.where(mask, ref_lsm.exp() * (ref_lsm - lsm),
                                 torch.zeros_like(lsm)).sum(dim=1).mean()
                over = torch.relu(pri[mask].abs() - cfg.logit_bound)
                loss = (-surr.mean() - w_h * ent + w_kl * kl
                        + cfg.bound_weight * (over ** 2).mean())
                opt.zero_grad()
                loss.backward()
                opt.step()
            row: dict[str, Any] = {
                "iteration": it + 1, "workload": w, "agents_avg_jct": avg_jct,
                "entropy": float(ent.detach()), "kl": float(kl.detach()),
                "logit_spread": float((pri[mask].max() - pri[mask].min()).detach()),
                "seconds": time.perf_counter() - t0}
            last = (it + 1 == cfg.iterations
                    or 0 < cfg.max_seconds < time.perf_counter() - t0)
            due = bool(cfg.validation) and (last or (cfg.validate_every > 0
                                                     and (it + 1) % cfg.validate_every == 0))
            close_row(res, row, due, net.to_numpy(), val_seeds, cfg.workers, teachers, log,
                      pool)
            if last:
                break
    finally:
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
    res.params = net.to_numpy()
    res.seconds = time.perf_counter() - t0
    return res
