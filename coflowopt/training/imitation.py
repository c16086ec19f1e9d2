"""Imitation pre-training of DeepWeave's policy (issue 30; DeepWeave: Sun, Guo, Wang, Li, Lan,
Hu, IJCAI 2020, the network of Sec. 3.3): maximise the Plackett-Luce likelihood of the better
heuristic's order of the ready coflows at every decision epoch.  Needs the ``learn`` extra.

The data (:func:`collect`): training instances of the protocol's workloads
(:func:`coflowopt.training.teachers.training_seeds`, never a held-out seed), on each the
better of Sincronia's and G-DM-BF's orders (:func:`coflowopt.training.teachers.demonstration`)
at up to ``record`` sampled decision epochs.  The loss [C]: for a state with ready coflows
``o_1, ..., o_n`` in the teacher's order and the network's priorities ``p``,
``-sum_k (p_{o_k} - log sum_{j >= k} exp p_{o_j})`` (the Plackett-Luce negative
log-likelihood), averaged over the draws of an instance's kept states, one Adam step per
instance.  The network: :meth:`DeepWeaveConfig.heuristic` (features ``"v2"`` with the
heuristics' scores, per-node ``head="attr"``, so one law orders the ready coflows of every
job).  Validation: the greedy policy's average JCT over the better teacher's on
validation instances of the same distribution (another seed stream).
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from coflowopt.model import Instance
from coflowopt.params import Params
from coflowopt.schedulers.learned.features import instance_batch
from coflowopt.schedulers.learned.network import DeepWeaveConfig, init_params
from coflowopt.training.episodes import rollout
from coflowopt.training.teachers import (
    WORKLOADS,
    check_workloads,
    demonstration,
    make_instance,
    training_seeds,
)

__all__ = [
    "RUN_PARAMS",
    "ImitationConfig",
    "ImitationResult",
    "collect",
    "format_row",
    "imitate",
    "pl_loss",
    "save_result",
    "summarize",
    "validate_policy",
]

#: The run parameters an instance-wide policy is trained for (checkpoint ``meta.run``).
# (engine "fast": the same schedule as the stepper, tested, and much faster on many flows)
RUN_PARAMS = {"rerank": "events", "across": "global", "engine": "fast"}


@dataclass(frozen=True)
class ImitationConfig(Params):
    """``instances``: training instances (workloads in turn); ``validation``: validation
    instances (seed stream 8); ``epochs``: passes over the data; ``record``: decision epochs
    kept per instance; ``lr``: Adam's step size; ``seed``: weights, instances, sampling;
    ``workers``: processes for the demonstrations and the validation; ``workloads``: names of
    :data:`coflowopt.training.teachers.WORKLOADS`; ``hidden_gnn``, ``out_gnn``: the network's
    widths; ``validate_every``: epochs between validations (0: only at the end);
    ``max_seconds``: stop after the epoch that passes this wall time (0: no limit)."""

    instances: int = 60
    validation: int = 6
    epochs: int = 20
    record: int = 32
    lr: float = 3e-3
    seed: int = 0
    workers: int = 1
    workloads: tuple[str, ...] = tuple(WORKLOADS)
    hidden_gnn: tuple[int, ...] = (16, 8)
    out_gnn: int = 8
    validate_every: int = 0
    max_seconds: float = 0.0

    def check(self) -> None:
        for name in ("instances", "epochs", "record", "workers"):
            if getattr(self, name) < 1:
                raise ValueError(f"ImitationConfig.{name}: must be >= 1, got "
                                 f"{getattr(self, name)}")
        if self.validation < 0 or self.validate_every < 0:
            raise ValueError("ImitationConfig.validation / validate_every: must be >= 0")
        if not self.lr > 0:
            raise ValueError(f"ImitationConfig.lr: must be > 0, got {self.lr}")
        check_workloads("ImitationConfig.workloads", self.workloads)

    def net_config(self) -> DeepWeaveConfig:
        return DeepWeaveConfig.heuristic(hidden_gnn=self.hidden_gnn, out_gnn=self.out_gnn)


@dataclass
class ImitationResult:
    """What a training method leaves (imitation here, fine-tuning in :mod:`.ppo`): the
    weights, the network's config, the curve (one row per epoch or iteration), the last
    validation rows, the demonstrations' teachers (imitation) and the wall time."""

    params: dict[str, np.ndarray]
    config: DeepWeaveConfig
    curve: list[dict[str, Any]] = field(default_factory=list)
    validation: list[dict[str, Any]] = field(default_factory=list)
    teachers: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0


def _demo_job(args: tuple[str, int, dict[str, Any], int, int]) -> dict[str, Any]:
    workload, gen_seed, cfg_d, record, seed = args
    inst = make_instance(workload, gen_seed)
    d = demonstration(inst, DeepWeaveConfig.from_dict(cfg_d), record=record, seed=seed)
    return {"workload": workload, "seed": gen_seed, **d}


def _map(fn: Callable[[Any], Any], jobs: Sequence[Any], workers: int,
         pool: Any = None) -> list[Any]:
    """``fn`` over ``jobs``, in worker processes when ``workers > 1`` (``pool``: an open
    executor to use)."""
    if workers <= 1 or len(jobs) <= 1:
        return [fn(j) for j in jobs]
    if pool is not None:
        return list(pool.map(fn, jobs))
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    with ProcessPoolExecutor(max_workers=min(workers, len(jobs))) as pool:
        return list(pool.map(fn, jobs))


def collect(cfg: ImitationConfig, cfg_net: DeepWeaveConfig | None = None
            ) -> list[dict[str, Any]]:
    """One demonstration per training instance (module docstring), in seed order."""
    net = cfg.net_config() if cfg_net is None else cfg_net
    jobs = [(w, s, net.to_dict(), cfg.record, cfg.seed + k)
            for k, (w, s) in enumerate(training_seeds(cfg.seed, cfg.instances, cfg.workloads))]
    return _map(_demo_job, jobs, cfg.workers)


@contextlib.contextmanager
def torch_one_thread() -> Iterator[None]:
    """torch on one thread inside the block (restored after): the tensors are tiny, and on a
    shared machine more threads cost more than they give (measured: a fine-tuning iteration's
    update 3x slower with torch's default threads on 2 loaded cores)."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def pl_loss(net: Any, inst: Instance, x: np.ndarray, orders: Sequence[np.ndarray]) -> Any:
    """The Plackett-Luce negative log-likelihood of ``orders`` (one per state) under ``net``
    (a :class:`~coflowopt.schedulers.learned.torch_net.DeepWeaveNet` with ``head="attr"``) on
    the states ``x`` ``(S, C, F)`` of ``inst``, per draw; and the share of states whose
    teacher's first coflow is the network's top one."""
    import torch

    from coflowopt.training.reinforce import batched_log_prob, batched_priorities

    template = instance_batch(inst, feature_set=net.config.feature_set)
    pri = batched_priorities(net, template, x)
    logp = batched_log_prob(pri, orders)
    draws = max(sum(len(o) for o in orders), 1)
    with torch.no_grad():
        top = [int(torch.argmax(pri[s, torch.as_tensor(o)])) == 0
               for s, o in enumerate(orders) if len(o)]
    return -logp.sum() / draws, float(np.mean(top)) if top else 1.0


def _policy_job(args: tuple[str, int, dict[str, np.ndarray], dict[str, Any]]) -> float:
    workload, gen_seed, params, cfg_d = args
    cfg = DeepWeaveConfig.from_dict(cfg_d)
    inst = make_instance(workload, gen_seed)
    return float(rollout(inst, params, cfg, steps=None, greedy=True, validate=True)["jct"]
                 .mean())


def _teacher_job(args: tuple[str, int, dict[str, Any]]) -> dict[str, float]:
    workload, gen_seed, cfg_d = args
    inst = make_instance(workload, gen_seed)
    return demonstration(inst, DeepWeaveConfig.from_dict(cfg_d), record=0)["avg_jct"]


def validate_policy(params: dict[str, np.ndarray], cfg: DeepWeaveConfig,
                    seeds: Sequence[tuple[str, int]], workers: int = 1, pool: Any = None,
                    teachers: dict[tuple[str, int], dict[str, float]] | None = None
                    ) -> list[dict[str, Any]]:
    """Per validation instance: the greedy policy's average JCT, each teacher's, and the ratio
    to the better teacher (all on the decision-epoch stepper, validated).  ``teachers``: the
    caller's record of the teachers' figures by ``(workload, seed)`` (they do not change
    during a run), filled in here where missing."""
    known: dict[tuple[str, int], dict[str, float]] = {} if teachers is None else teachers
    todo = [s for s in dict.fromkeys(seeds) if s not in known]
    for s, r in zip(todo, _map(_teacher_job, [(w, g, cfg.to_dict()) for w, g in todo],
                               workers, pool), strict=True):
        known[s] = r
    pols = _map(_policy_job, [(w, s, params, cfg.to_dict()) for w, s in seeds], workers, pool)
    out = []
    for (w, s), pol in zip(seeds, pols, strict=True):
        best = known[(w, s)]
        out.append({"workload": w, "seed": s, "policy": pol, **best,
                    "ratio": pol / min(best.values())})
    return out


def format_row(row: dict[str, Any]) -> str:
    """One curve row as ``key=value`` pairs (floats to 4 digits), for the logs."""
    return " ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                    for k, v in row.items())


def close_row(res: ImitationResult, row: dict[str, Any], validate: bool,
              params: dict[str, np.ndarray], seeds: Sequence[tuple[str, int]], workers: int,
              teachers: dict[tuple[str, int], dict[str, float]],
              log: Callable[[str], None] | None, pool: Any = None) -> None:
    """End of an epoch or iteration: with ``validate``, the policy ``params`` validated on
    ``seeds`` (:func:`validate_policy`), its ratios per workload added to ``row`` as
    ``val_<workload>`` and the rows kept in ``res.validation``; then ``row`` appended to
    ``res.curve`` and logged."""
    if validate:
        rows = validate_policy(params, res.config, seeds, workers, pool, teachers)
        for w, v in summarize(rows).items():
            row[f"val_{w}"] = v
        res.validation = rows
    res.curve.append(row)
    if log is not None:
        log(format_row(row))


def summarize(rows: Sequence[dict[str, Any]]) -> dict[str, float]:
    """Mean ratio to the better teacher per workload."""
    out: dict[str, float] = {}
    for w in sorted({r["workload"] for r in rows}):
        out[w] = float(np.mean([r["ratio"] for r in rows if r["workload"] == w]))
    return out


def imitate(cfg: ImitationConfig, *, demos: list[dict[str, Any]] | None = None,
            init: dict[str, np.ndarray] | None = None, progress: bool = False,
            log: Callable[[str], None] | None = None) -> ImitationResult:
    """Pre-train by imitation (module docstring); ``demos`` from :func:`collect` (collected
    here when ``None``); ``init``: starting weights (default ``init_params(net, seed)``)."""
    import torch

    from coflowopt.schedulers.learned.torch_net import DeepWeaveNet

    t0 = time.perf_counter()
    net_cfg = cfg.net_config()
    if demos is None:
        demos = collect(cfg, net_cfg)
    insts = [make_instance(d["workload"], d["seed"]) for d in demos]
    torch.manual_seed(cfg.seed)
    net = DeepWeaveNet(net_cfg).load_numpy(init if init is not None
                                           else init_params(net_cfg, cfg.seed))
    opt = torch.optim.Adam(net.parameters(), lr=cfg.lr)
    rng = np.random.default_rng([cfg.seed, 9])
    val_seeds = training_seeds(cfg.seed, cfg.validation, cfg.workloads, stream=8)
    teachers: dict[tuple[str, int], dict[str, float]] = {}
    res = ImitationResult(params={}, config=net_cfg)
    for d in demos:
        res.teachers[d["teacher"]] = res.teachers.get(d["teacher"], 0) + 1
    with torch_one_thread():
        _epochs(cfg, net, opt, demos, insts, rng, val_seeds, teachers, res, t0, log)
    res.params = net.to_numpy()
    res.seconds = time.perf_counter() - t0
    return res


def _epochs(cfg: ImitationConfig, net: Any, opt: Any, demos: list[dict[str, Any]],
            insts: list[Instance], rng: np.random.Generator,
            val_seeds: list[tuple[str, int]], teachers: dict[tuple[str, int], dict[str, float]],
            res: ImitationResult, t0: float, log: Callable[[str], None] | None) -> None:
    """The epochs of :func:`imitate` (one Adam step per instance)."""
    for epoch in range(1, cfg.epochs + 1):
        losses, tops = [], []
        for k in rng.permutation(len(demos)):
            d = demos[k]
            if not len(d["orders"]):
                continue
            loss, top = pl_loss(net, insts[k], d["x"][0], d["orders"])
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(float(loss.detach()))
            tops.append(top)
        row: dict[str, Any] = {"epoch": epoch, "nll_per_draw": float(np.mean(losses)),
                               "top1": float(np.mean(tops)),
                               "seconds": time.perf_counter() - t0}
        last = epoch == cfg.epochs or 0 < cfg.max_seconds < time.perf_counter() - t0
        due = bool(cfg.validation) and (last or (cfg.validate_every > 0
                                                 and epoch % cfg.validate_every == 0))
        close_row(res, row, due, net.to_numpy(), val_seeds, cfg.workers, teachers, log)
        if last:
            break


def save_result(res: ImitationResult, path: str | os.PathLike[str], cfg: ImitationConfig,
                extra: dict[str, Any] | None = None) -> Path:
    """The weights as a checkpoint (``meta.run`` = :data:`RUN_PARAMS`)."""
    from coflowopt.schedulers.learned.checkpoint import save_checkpoint

    p = Path(path)
    meta = {"trained": True, "seed": cfg.seed, "method": "imitation",
            "workload": ", ".join(cfg.workloads) + " (training seeds, docs/deepweave-protocol.md)",
            "iterations": cfg.epochs, "run": dict(RUN_PARAMS), "teachers": res.teachers,
            "validation": summarize(res.validation) if res.validation else {}}
    meta.update(extra or {})
    save_checkpoint(p, res.params, res.config, meta)
    return p
