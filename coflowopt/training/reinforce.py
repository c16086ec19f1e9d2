"""DeepWeave training: REINFORCE with ``N`` parallel agents (Sun, Guo, Wang, Li, Lan, Hu,
"DeepWeave", IJCAI 2020, Algorithm 1), on the decision-epoch environment of
:mod:`coflowopt.schedulers.learned.env`.  Needs the ``learn`` extra (torch).

Algorithm 1 as implemented (our [C] reading of the paper's listing)::

    theta <- init_params(seed);  l <- l_init                     # l persists [C]
    for iteration = 1 .. K:
        draw one instance (curriculum stage of the iteration)
        run agents i = 1..N with mu_theta for floor(l) epochs (or to the episode's end)
            -> (s_t^i, a_t^i, r_t^i)
        R_t^i = sum_{t' >= t} r_{t'}^i                           # reward-to-go
        b_t   = (1/N) sum_j R_t^j                                # per-step baseline
        Delta = (1/N) sum_i sum_t grad log mu_theta(s_t^i, a_t^i) (R_t^i - b_t)
        l <- min(l + epsilon, full episode);  theta <- Adam(theta, Delta, alpha = 1e-3)

- ``mu_theta`` [C]: Plackett-Luce over the ready coflows on the network's priorities
  (:mod:`coflowopt.schedulers.learned.torch_net`), drawn by the Gumbel-max construction
  (:func:`coflowopt.training.episodes.rollout`); greedy (sorted) at evaluation.  The agents
  sample with the numpy forward pass (:func:`coflowopt.schedulers.learned.network.forward`,
  equal to the torch twin to rounding); the log-probabilities are then recomputed in torch
  for all the iteration's states at once (every state of one iteration is the same DAG, so
  the forward pass batches over states) and differentiated.
- Reward [C]: ``r_t = -(t_{k+1} - t_k) * unfinished jobs`` (Decima's average-JCT reward, Mao
  et al., SIGCOMM 2019, so that ``sum_t r_t = -sum_j JCT_j``); with ``normalize`` (default)
  divided by the instance's total critical path ``sum_j T_j``
  (:attr:`~coflowopt.Instance.critical_path`, a lower bound on ``sum_j JCT_j`` with
  releases at 0), so returns are comparable across DAG sizes [C].
- Agents shorter than the longest episode [C]: past its end an agent's ``R_t`` is 0 in
  the baseline and it adds no gradient term.
- ``Delta`` is the mean over agents (the listing's sum divided by ``N``; Adam is invariant to
  that scale).
- Curriculum over DAG sizes [C]: stage ``s`` (GGen node range ``curriculum[s]``) for
  iterations ``s * stage_iterations .. (s + 1) * stage_iterations - 1``, the last stage
  after that; TPC-DS-like draws keep their own shapes (critical path 4-7).
- Agents run in ``workers`` processes (spawned once); the rollouts depend only on the
  weights and each agent's seed, and the gradient is summed in agent order in the main
  process, so the weights do not depend on ``workers``.

Output folder (``out``): ``deepweave.npz`` (the weights, through
:func:`coflowopt.schedulers.learned.checkpoint.save_checkpoint`, atomic), ``train_state.pt``
(iteration, ``l``, the network and Adam state, the generator state and the curve so far,
written atomically beside the weights every ``checkpoint_every`` iterations and on Ctrl-C),
``curve.csv`` (one row per iteration) and ``curve.png`` (the greedy policy's mean JCT on a
fixed evaluation set with Sincronia's level on the same instances, by :func:`coflowopt.run`;
:mod:`coflowopt.training.evaluate`). ``resume=True`` continues from ``train_state.pt`` with
nothing lost: the same weights as an uninterrupted run.
"""

from __future__ import annotations

import copy
import csv
import dataclasses
import io
import math
import os
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

from coflowopt.model import Instance
from coflowopt.params import Params
from coflowopt.schedulers.learned import network
from coflowopt.schedulers.learned.env import draw_instance
from coflowopt.schedulers.learned.features import DagBatch
from coflowopt.schedulers.learned.network import DeepWeaveConfig
from coflowopt.training.episodes import rollouts
from coflowopt.training.evaluate import evaluate_each, sincronia_level

__all__ = ["CURVE_COLUMNS", "STATE_FILE", "WEIGHTS_FILE", "TrainConfig", "TrainResult",
           "batched_log_prob", "batched_priorities", "plot_curve", "train"]

WEIGHTS_FILE = "deepweave.npz"
STATE_FILE = "train_state.pt"
CURVE_FILE = "curve.csv"
PLOT_FILE = "curve.png"
CURVE_COLUMNS = ("iteration", "stage", "nodes_low", "nodes_high", "episode_steps",
                 "coflows", "mean_return", "mean_return_normalized", "eval_mean_jct",
                 "sincronia_mean_jct", "seconds")


@dataclass(frozen=True)
class TrainConfig(Params):
    """Algorithm 1's settings (DeepWeave, IJCAI 2020: ``lr`` and Adam from the paper, [C]
    the rest).

    ``iterations``: training iterations ``K`` in all (a resumed run goes on to this count);
    ``agents``: ``N`` parallel agents per iteration, all on the same instance; ``l_init``,
    ``epsilon``: the episode length in decision epochs, ``l_init`` at first and growing by
    ``epsilon`` per iteration; ``lr``: Adam's step size; ``curriculum``: GGen node ranges by
    stage, ``stage_iterations`` iterations each; ``workload``: ``ggen``, ``tpcds`` or
    ``mixed`` (:func:`coflowopt.schedulers.learned.env.draw_instance`); ``ports``: fabric
    size; ``n_jobs``: jobs per instance; ``seed``: everything random (initial weights,
    instances, agents);
    ``checkpoint_every``: iterations between checkpoints; ``out``: the output folder;
    ``workers``: agent processes; ``eval_instances``, ``eval_every``: the learning curve's
    fixed evaluation set (drawn from the last stage) and how often the greedy policy is run
    on it; ``normalize``: rewards divided by the instance's total critical path; ``v_max``:
    the network's largest DAG.
    """

    iterations: int = 1000
    agents: int = 16
    l_init: float = 10.0
    epsilon: float = 0.01
    lr: float = 1e-3
    curriculum: tuple[tuple[int, int], ...] = ((4, 16), (4, 32), (4, 64))
    stage_iterations: int = 200
    workload: Literal["ggen", "tpcds", "mixed"] = "mixed"
    ports: int = 50
    n_jobs: int = 1
    seed: int = 0
    checkpoint_every: int = 10
    out: str | None = None
    workers: int = 1
    eval_instances: int = 8
    eval_every: int = 10
    normalize: bool = True
    v_max: int = 64

    def check(self) -> None:
        for name in ("agents", "stage_iterations", "ports", "n_jobs", "checkpoint_every",
                     "workers", "eval_every", "v_max"):
            if getattr(self, name) < 1:
                raise ValueError(f"TrainConfig.{name}: must be >= 1, got {getattr(self, name)}")
        for name in ("iterations", "eval_instances"):
            if getattr(self, name) < 0:
                raise ValueError(f"TrainConfig.{name}: must be >= 0, got {getattr(self, name)}")
        if not self.l_init >= 1:
            raise ValueError(f"TrainConfig.l_init: must be >= 1, got {self.l_init}")
        if not self.epsilon >= 0:
            raise ValueError(f"TrainConfig.epsilon: must be >= 0, got {self.epsilon}")
        if not self.lr > 0:
            raise ValueError(f"TrainConfig.lr: must be > 0, got {self.lr}")
        if not self.curriculum:
            raise ValueError("TrainConfig.curriculum: needs at least one node range")
        for k, (lo, hi) in enumerate(self.curriculum):
            if not 1 <= lo <= hi <= self.v_max:
                raise ValueError(f"TrainConfig.curriculum[{k}]: need 1 <= low <= high <= "
                                 f"v_max ({self.v_max}), got ({lo}, {hi})")

    def stage(self, iteration: int) -> int:
        """The curriculum stage of (0-based) ``iteration``."""
        return min(iteration // self.stage_iterations, len(self.curriculum) - 1)

    def net_config(self) -> DeepWeaveConfig:
        return DeepWeaveConfig(v_max=self.v_max)


@dataclass
class TrainResult:
    """What :func:`train` leaves: the weights, the curve rows, the files written."""

    params: dict[str, np.ndarray]
    config: TrainConfig
    iteration: int
    curve: list[dict[str, Any]]
    sincronia_mean_jct: float
    out: Path | None
    seconds: float


def _init_worker() -> None:
    # one thread per worker process: the agents are the parallelism
    os.environ.setdefault("OMP_NUM_THREADS", "1")


# -- batched torch forward and Plackett-Luce log-probabilities -----------------------------


def batched_priorities(net: Any, template: DagBatch, x: Any) -> Any:
    """The priorities of ``S`` states of one job DAG at once: ``x`` ``(S, V, F)`` features
    (torch or numpy) on ``template``'s graph -> ``(S, V)`` torch tensor; row ``s`` equals
    ``net(batch with x[s])`` (:class:`coflowopt.schedulers.learned.torch_net.DeepWeaveNet`,
    same parameters and stages: lift, leaves-first message passing, attribute, sort,
    summary, policy)."""
    import torch

    c = net.config
    nets = net.nets
    v = template.n_nodes
    dev = net.norm_shift.device
    x = torch.as_tensor(x, dtype=net.dtype, device=dev)
    if x.ndim != 3 or x.shape[1:] != (v, c.n_features):
        raise ValueError(f"batched_priorities: features of shape {tuple(x.shape)}, job "
                         f"{template.job} needs (S, {v}, {c.n_features})")
    if v > c.v_max:
        raise ValueError(f"DeepWeave: job {template.job} has {v} coflows, more than the "
                         f"network's v_max = {c.v_max}")
    S = x.shape[0]
    x = (x - net.norm_shift) / net.norm_scale
    lifted = nets["prep"](x)
    e = lifted
    lp, ln, ep = template.level_ptr, template.level_nodes, template.level_edge_ptr
    nch = template.n_children
    for lev in range(1, min(template.n_levels, c.passes + 1)):
        nodes_np = ln[lp[lev]:lp[lev + 1]]
        nodes = torch.as_tensor(nodes_np, device=dev)
        child = torch.as_tensor(template.edge_child[ep[lev]:ep[lev + 1]], device=dev)
        msg = nets["f"](e[:, child])
        seg = torch.as_tensor(np.repeat(np.arange(nodes_np.size), nch[nodes_np]), device=dev)
        agg = torch.zeros(S, nodes_np.size, c.out_gnn, dtype=net.dtype, device=dev)
        agg = agg.index_add(1, seg, msg)
        e = e.index_copy(1, nodes, nets["g"](agg) + lifted[:, nodes])
    attr = nets["attr"](torch.cat([e, x], dim=2))[..., 0]
    if c.head == "attr":
        return attr
    order = torch.argsort(-attr, dim=1, stable=True)
    sorted_attr = torch.cat([torch.gather(attr, 1, order),
                             torch.zeros(S, c.v_max - v, dtype=net.dtype, device=dev)], dim=1)
    if c.summary:
        y = nets["job"](torch.cat([x, attr[..., None]], dim=2)).sum(dim=1)
        inp = torch.cat([sorted_attr, y], dim=1)
    else:
        inp = sorted_attr
    p = nets["policy"](inp)
    return torch.zeros(S, v, dtype=net.dtype, device=dev).scatter(1, order, p[:, :v])


def batched_log_prob(priorities: Any, orders: Sequence[np.ndarray],
                     top: int | None = None) -> Any:
    """Plackett-Luce ``log mu`` of each row's order: ``priorities`` ``(S, C)`` torch, ``orders``
    ``S`` arrays of coflow positions (first drawn first; may be empty) -> ``(S,)``: per row,
    the sum over draws ``k`` of ``p_{o_k} - log sum_{j >= k} exp(p_{o_j})`` (as
    :func:`coflowopt.schedulers.learned.torch_net.plackett_luce_log_prob`); with ``top``, the
    sum over the first ``top`` draws only (the log-probability of the list's first ``top``
    entries, the tails still over every listed coflow)."""
    import torch

    S = priorities.shape[0]
    L = max((len(o) for o in orders), default=0)
    if L == 0:
        return priorities.sum(dim=1) * 0.0
    idx = np.zeros((S, L), dtype=np.int64)
    mask = np.zeros((S, L), dtype=bool)
    for s, o in enumerate(orders):
        idx[s, : len(o)] = o
        mask[s, : len(o)] = True
    m = torch.as_tensor(mask, device=priorities.device)
    p = torch.gather(priorities, 1, torch.as_tensor(idx, device=priorities.device))
    # padding draws as -1e300: exp() is 0 in the tails, and the terms are masked out
    p = torch.where(m, p, torch.full_like(p, -1e300))
    tail = torch.logcumsumexp(p.flip(1), dim=1).flip(1)
    if top is not None:
        m = m & (torch.arange(L, device=priorities.device) < top)[None, :]
    return torch.where(m, p - tail, torch.zeros_like(p)).sum(dim=1)


# -- files ----------------------------------------------------------------------------------


def _atomic_bytes(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _write_curve(out: Path, rows: list[dict[str, Any]]) -> None:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=CURVE_COLUMNS, lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({k: r.get(k, "") for k in CURVE_COLUMNS})
    _atomic_bytes(out / CURVE_FILE, buf.getvalue().encode())


def plot_curve(rows: list[dict[str, Any]], sincronia: float, path: Path) -> None:
    """The learning curve: the greedy policy's mean JCT on the evaluation set by iteration,
    Sincronia's level on the same instances, and the training return (normalised)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    ev = [(r["iteration"], r["eval_mean_jct"]) for r in rows
          if r.get("eval_mean_jct") not in (None, "")]
    if ev:
        ax.plot(*zip(*ev, strict=True), "o-", label="DeepWeave (greedy), evaluation set")
    if math.isfinite(sincronia):
        ax.axhline(sincronia, color="tab:red", ls="--", label="Sincronia (same instances)")
    ax.set_xlabel("iteration")
    ax.set_ylabel("mean JCT")
    ax2 = ax.twinx()
    tr = [(r["iteration"], r["mean_return_normalized"]) for r in rows if r["iteration"] > 0]
    if tr:
        it, ret = (np.asarray(a, dtype=float) for a in zip(*tr, strict=True))
        k = max(1, min(20, it.size // 5))
        smooth = np.convolve(ret, np.ones(k) / k, mode="valid")
        ax2.plot(it[k - 1:], smooth, color="tab:gray", alpha=0.6,
                 label=f"training return / critical path ({k}-iteration mean)")
        ax2.set_ylabel("training return (normalised)")
    h1, l1 = ax.get_legend_handles_labels()
    h2, l2 = ax2.get_legend_handles_labels()
    ax.legend(h1 + h2, l1 + l2, fontsize=8, loc="best")
    ax.set_title("DeepWeave training (REINFORCE, Algorithm 1)")
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    plt.close(fig)
    _atomic_bytes(path, buf.getvalue())


# -- the loop -------------------------------------------------------------------------------


def _load_state(path: Path) -> dict[str, Any]:
    import torch

    try:
        return torch.load(path, weights_only=False)
    except Exception as exc:  # a torn or foreign file: say which
        raise ValueError(f"{path}: not a readable training state ({exc})") from None


def train(config: TrainConfig, *, resume: bool = False, instance: Instance | None = None,
          progress: bool = False, callback: Callable[[int, dict[str, Any]], Any] | None = None
          ) -> TrainResult:
    """Run Algorithm 1 (module docstring) for ``config.iterations`` iterations in all.

    ``resume``: continue from ``config.out``'s training state (its settings, except
    ``iterations`` and ``workers`` from ``config``); without it an existing state there is
    refused.  ``instance``: train and evaluate on this one instance only (tests).
    ``progress``: a progress bar on stderr.  ``callback(iteration, row)`` after each
    iteration (an exception there stops the run as a kill would: nothing is saved past the
    last checkpoint).  Ctrl-C saves a checkpoint of the iterations done, then raises
    ``KeyboardInterrupt``.
    """
    import torch

    from coflowopt.schedulers.learned.checkpoint import save_checkpoint
    from coflowopt.schedulers.learned.torch_net import DeepWeaveNet

    cfg = config
    out = Path(cfg.out) if cfg.out else None
    state: dict[str, Any] | None = None
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        sp = out / STATE_FILE
        if sp.exists() and not resume:
            raise FileExistsError(f"{sp}: a training state exists; pass resume (--resume) "
                                  "to continue it, or choose another folder")
        if resume and sp.exists():
            state = _load_state(sp)
            saved = TrainConfig.from_dict(state["config"])
            cfg = saved.replace(iterations=cfg.iterations, workers=cfg.workers,
                                out=cfg.out)
    elif resume:
        raise ValueError("train: resume needs an output folder (TrainConfig.out)")
    ncfg = cfg.net_config()
    torch_threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny tensors: threads cost more than they give
    net = DeepWeaveNet(ncfg)
    net.load_numpy(network.init_params(ncfg, np.random.default_rng([cfg.seed, 0])))
    opt = torch.optim.Adam(net.parameters(), lr=cfg.lr)
    rng = np.random.default_rng([cfg.seed, 1])
    it, ell = 0, float(cfg.l_init)
    rows: list[dict[str, Any]] = []
    seconds0 = 0.0
    if state is not None:
        net.load_state_dict(state["net"])
        opt.load_state_dict(state["optim"])
        rng.bit_generator.state = state["rng"]
        it, ell, rows = int(state["iteration"]), float(state["l"]), list(state["curve"])
        seconds0 = float(state["seconds"])
    if instance is not None:
        eval_set = [instance]
    else:
        erng = np.random.default_rng([cfg.seed, 2])
        eval_set = [draw_instance(erng, workload=cfg.workload, nodes=cfg.curriculum[-1],
                                  ports=cfg.ports, n_jobs=cfg.n_jobs, v_max=cfg.v_max)
                    for _ in range(cfg.eval_instances)]
    sinc = float(state["sincronia"]) if state is not None else sincronia_level(eval_set)
    pool: Executor | None = None
    if cfg.workers > 1:
        import multiprocessing

        # fork where there is one (workers start in milliseconds; they run numpy and the
        # compiled stepper only, never torch, so torch's threads in this process are no
        # hazard there), else spawn
        methods = multiprocessing.get_all_start_methods()
        ctx = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
        pool = ProcessPoolExecutor(max_workers=cfg.workers, initializer=_init_worker,
                                   mp_context=ctx)
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=cfg.iterations, initial=min(it, cfg.iterations), desc="deepweave",
                   unit="it", dynamic_ncols=True)
    t_start = time.perf_counter()
    done_it = it
    snap: dict[str, Any] | None = None

    def params_np() -> dict[str, np.ndarray]:
        return net.to_numpy()

    def run_agents(inst: Instance, params: dict[str, np.ndarray], steps: int | None,
                   seeds: list[Any], scale: float) -> list[dict[str, Any]]:
        cd = ncfg.to_dict()
        if pool is None or len(seeds) < 2:
            return rollouts(inst, params, cd, steps, seeds, False, scale, False, True)
        chunks = [list(c) for c in np.array_split(np.arange(len(seeds)), cfg.workers)
                  if len(c)]
        futs = [pool.submit(rollouts, inst, params, cd, steps, [seeds[i] for i in c], False,
                            scale, False, True) for c in chunks]
        res: list[dict[str, Any]] = []
        for f in futs:
            res.extend(f.result())
        return res

    def run_eval(params: dict[str, np.ndarray]) -> float:
        if pool is None or len(eval_set) < 2:
            js = evaluate_each(eval_set, params, ncfg.to_dict())
        else:
            parts = [list(c) for c in np.array_split(np.arange(len(eval_set)), cfg.workers)
                     if len(c)]
            futs = [pool.submit(evaluate_each, [eval_set[i] for i in c], params,
                                ncfg.to_dict()) for c in parts]
            js = [j for f in futs for j in f.result()]
        return float(np.mean(js))

    def snapshot() -> dict[str, Any]:
        # everything a resume needs, as of the last completed iteration: Ctrl-C may land
        # anywhere inside the next one (between the Adam step and the counter, say)
        return {"version": 1, "config": dataclasses.asdict(cfg), "iteration": it, "l": ell,
                "net": copy.deepcopy(net.state_dict()),
                "optim": copy.deepcopy(opt.state_dict()),
                "rng": copy.deepcopy(rng.bit_generator.state), "curve": list(rows),
                "sincronia": sinc, "seconds": seconds0 + time.perf_counter() - t_start}

    def save(snap: dict[str, Any]) -> None:
        if out is None:
            return
        buf = io.BytesIO()
        torch.save(snap, buf)
        _atomic_bytes(out / STATE_FILE, buf.getvalue())
        k, curve = int(snap["iteration"]), snap["curve"]
        shadow = DeepWeaveNet(ncfg)
        shadow.load_state_dict(snap["net"])
        save_checkpoint(out / WEIGHTS_FILE, shadow.to_numpy(), ncfg, {
            "trained": k > 0, "seed": cfg.seed, "workload": _workload_label(cfg, instance),
            "iterations": k, "trainer": "coflowopt.training.reinforce (REINFORCE)",
            "train_config": {f: v for f, v in dataclasses.asdict(cfg).items() if f != "out"},
            "eval_mean_jct": next((r["eval_mean_jct"] for r in reversed(curve)
                                   if r.get("eval_mean_jct") not in (None, "")), None),
            "sincronia_mean_jct": sinc})
        _write_curve(out, curve)
        plot_curve(curve, sinc, out / PLOT_FILE)

    try:
        if it == 0 and not rows:
            rows.append({"iteration": 0, "stage": 0, "nodes_low": cfg.curriculum[0][0],
                         "nodes_high": cfg.curriculum[0][1], "episode_steps": 0,
                         "coflows": 0, "mean_return": "", "mean_return_normalized": "",
                         "eval_mean_jct": run_eval(params_np()), "sincronia_mean_jct": sinc,
                         "seconds": 0.0})
        snap = snapshot()
        while it < cfg.iterations:
            stage = cfg.stage(it)
            nodes = cfg.curriculum[stage]
            inst = instance if instance is not None else draw_instance(
                rng, workload=cfg.workload, nodes=nodes, ports=cfg.ports, n_jobs=cfg.n_jobs,
                v_max=cfg.v_max)
            seeds = [int(s) for s in rng.integers(2**63 - 1, size=cfg.agents)]
            scale = float(np.sum(inst.critical_path)) if cfg.normalize else 1.0
            scale = scale if scale > 0 else 1.0
            steps = math.floor(ell)
            params = params_np()
            ro = run_agents(inst, params, steps, seeds, scale)
            loss = _reinforce_loss(net, inst, ro)
            opt.zero_grad()
            loss.backward()
            opt.step()
            # cap: the longest possible episode (each coflow is ready once and completes
            # once; each job is released once)
            ell = min(ell + cfg.epsilon, float(2 * cfg.v_max * cfg.n_jobs + cfg.n_jobs))
            it += 1
            row = {"iteration": it, "stage": stage, "nodes_low": nodes[0],
                   "nodes_high": nodes[1], "episode_steps": steps, "coflows": inst.n_coflows,
                   "mean_return": float(np.mean([r["rewards"].sum() * scale for r in ro])),
                   "mean_return_normalized": float(np.mean([r["rewards"].sum() for r in ro])),
                   "eval_mean_jct": "", "sincronia_mean_jct": sinc,
                   "seconds": round(seconds0 + time.perf_counter() - t_start, 3)}
            if it % cfg.eval_every == 0 or it == cfg.iterations:
                row["eval_mean_jct"] = run_eval(net.to_numpy())
            rows.append(row)
            snap = snapshot()
            if out is not None:
                _write_curve(out, rows)
            if it % cfg.checkpoint_every == 0 or it == cfg.iterations:
                save(snap)
                done_it = it
            if bar is not None:
                bar.update(1)
                post = {"return": f"{row['mean_return_normalized']:.3f}", "l": steps}
                if row["eval_mean_jct"] != "":
                    post["eval_jct"] = f"{row['eval_mean_jct']:.4g}"
                    post["sincronia"] = f"{sinc:.4g}"
                bar.set_postfix(post)
            if callback is not None:
                callback(it, row)
        if snap is not None and (done_it != it or (out is not None
                                                   and not (out / STATE_FILE).exists())):
            save(snap)
    except KeyboardInterrupt:
        if snap is not None:
            save(snap)
        raise
    finally:
        if bar is not None:
            bar.close()
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
        torch.set_num_threads(torch_threads)
    return TrainResult(params=net.to_numpy(), config=cfg, iteration=it, curve=rows,
                       sincronia_mean_jct=sinc, out=out,
                       seconds=seconds0 + time.perf_counter() - t_start)


def _workload_label(cfg: TrainConfig, instance: Instance | None) -> str:
    if instance is not None:
        return f"one fixed instance ({instance.n_coflows} coflows)"
    stages = ", ".join(f"{lo}-{hi}" for lo, hi in cfg.curriculum)
    return (f"{cfg.workload}: GGen fan-in/fan-out (nodes by stage {stages}) / TPC-DS-like, "
            f"{cfg.ports}x{cfg.ports} ports, {cfg.n_jobs} job(s) per instance")


def _reinforce_loss(net: Any, inst: Instance, ro: list[dict[str, Any]]) -> Any:
    """``-(1/N) sum_i sum_t log mu(s_t^i, a_t^i) (R_t^i - b_t)`` for the rollouts ``ro``."""
    import torch

    from coflowopt.schedulers.learned.features import job_batches

    N = len(ro)
    T = max(len(r["rewards"]) for r in ro)
    R = np.zeros((N, T))
    for i, r in enumerate(ro):
        rw = r["rewards"]
        R[i, : rw.size] = np.cumsum(rw[::-1])[::-1]  # reward-to-go
    b = R.mean(axis=0)  # per-step baseline over the N agents (0 past an agent's end)
    adv = np.concatenate([R[i, : len(r["rewards"])] - b[: len(r["rewards"])]
                          for i, r in enumerate(ro)])
    if adv.size == 0:
        return sum(p.sum() for p in net.parameters()) * 0.0
    templates = job_batches(inst)
    S = adv.size
    pri = torch.zeros(S, inst.n_coflows, dtype=net.dtype)
    for j, tb in enumerate(templates):
        if tb.n_nodes == 0:
            continue
        x = np.concatenate([r["x"][j] for r in ro if len(r["rewards"])])
        pj = batched_priorities(net, tb, x)
        cols = torch.as_tensor(tb.coflows)
        pri = pri.index_copy(1, cols, pj)
    orders = [o for r in ro for o in r["orders"]]
    logp = batched_log_prob(pri, orders)
    return -(logp * torch.as_tensor(adv, dtype=net.dtype)).sum() / N
