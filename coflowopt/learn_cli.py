"""``coflowopt train deepweave``: train DeepWeave's policy with REINFORCE (Sun, Guo, Wang, Li,
Lan, Hu, IJCAI 2020, Algorithm 1; :mod:`coflowopt.training.reinforce`), or (issue 30) pre-train
it by imitation of the better heuristic (``--imitate``, :mod:`coflowopt.training.imitation`) and
fine-tune a checkpoint (``--finetune``, :mod:`coflowopt.training.ppo`).  Needs the ``learn``
extra (torch)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

__all__ = ["add_commands"]


def _ranges(text: str) -> tuple[tuple[int, int], ...]:
    out = []
    for part in text.split(","):
        lo, sep, hi = part.strip().partition("-")
        try:
            out.append((int(lo), int(hi if sep else lo)))
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"expected node ranges like 4-16,4-32,4-64, got {text!r}") from None
    return tuple(out)


def add_commands(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("train", help="train a learned scheduler (needs the learn extra)")
    tsub = p.add_subparsers(dest="learner", required=True, metavar="LEARNER")
    d = tsub.add_parser("deepweave", help="DeepWeave: REINFORCE with N agents (Algorithm 1)",
                        description="Train DeepWeave's GNN policy (IJCAI 2020, Algorithm 1) "
                        "on seeded DAG instances; checkpoints, a learning-curve CSV and a plot go "
                        "to --out. The shipped checkpoint is never overwritten.")
    d.add_argument("--out", required=True, help="output folder (weights deepweave.npz, "
                   "train_state.pt, curve.csv, curve.png)")
    d.add_argument("--iterations", type=int, default=None,
                   help="training iterations in all (a resumed run goes on to this count; "
                   "REINFORCE and --finetune)")
    d.add_argument("--imitate", action="store_true",
                   help="pre-train by imitation of the better of Sincronia's and G-DM-BF's "
                   "orders on the protocol's workloads (docs/deepweave-protocol.md); writes "
                   "--out/deepweave.npz")
    d.add_argument("--finetune", metavar="CHECKPOINT", default=None,
                   help="fine-tune this (imitation) checkpoint with --variant; writes "
                   "--out/deepweave.npz")
    d.add_argument("--variant", choices=("ppo", "ppo-nokl", "pg"), default="ppo",
                   help="fine-tuning variant (default ppo: clipped, KL to the start, entropy)")
    d.add_argument("--instances", type=int, default=60, help="--imitate: training instances")
    d.add_argument("--epochs", type=int, default=20, help="--imitate: passes over the data")
    d.add_argument("--validation", type=int, default=6,
                   help="--imitate / --finetune: validation instances (0: none)")
    d.add_argument("--max-seconds", type=float, default=0.0,
                   help="--imitate / --finetune: stop after this wall time (0: no limit)")
    d.add_argument("--workers", type=int, default=1, help="agent processes (default 1)")
    d.add_argument("--resume", action="store_true",
                   help="continue the training state in --out (its settings are kept)")
    d.add_argument("--agents", type=int, default=16, help="parallel agents N (default 16)")
    d.add_argument("--seed", type=int, default=0, help="weights, instances and agents")
    d.add_argument("--workload", choices=("ggen", "tpcds", "mixed"), default="mixed",
                   help="GGen fan-in/fan-out, TPC-DS-like, or both (default)")
    d.add_argument("--ports", type=int, default=50, help="fabric size (default 50 x 50)")
    d.add_argument("--curriculum", type=_ranges, default=((4, 16), (4, 32), (4, 64)),
                   help="GGen node ranges by stage (default 4-16,4-32,4-64)")
    d.add_argument("--stage-iterations", type=int, default=200,
                   help="iterations per curriculum stage (default 200)")
    d.add_argument("--l-init", type=float, default=10.0, help="initial episode length")
    d.add_argument("--epsilon", type=float, default=0.01, help="episode length growth")
    d.add_argument("--lr", type=float, default=1e-3, help="Adam step size (default 1e-3)")
    d.add_argument("--checkpoint-every", type=int, default=10,
                   help="iterations between checkpoints (default 10)")
    d.add_argument("--eval-every", type=int, default=10,
                   help="iterations between evaluations of the greedy policy (default 10)")
    d.add_argument("--eval-instances", type=int, default=8,
                   help="size of the fixed evaluation set (default 8)")
    d.add_argument("--no-progress", action="store_true", help="no progress bar")
    d.set_defaults(func=cmd_train_deepweave)


def cmd_train_deepweave(args: argparse.Namespace) -> int:
    from coflowopt.params import ParamsError

    try:
        import torch  # noqa: F401
    except ImportError:
        print("coflowopt train: error: training needs torch: pip install 'coflowopt[learn]'",
              file=sys.stderr)
        return 2
    from coflowopt.schedulers.learned.checkpoint import default_checkpoint_path
    from coflowopt.training.reinforce import TrainConfig, train

    shipped = default_checkpoint_path().resolve().parent
    from pathlib import Path

    if Path(args.out).resolve() == shipped:
        print(f"coflowopt train: error: --out {args.out} is the shipped checkpoint's folder; "
              "train elsewhere and copy the weights in by hand", file=sys.stderr)
        return 2
    if args.imitate or args.finetune:
        return _issue30(args)
    if args.iterations is None:
        print("coflowopt train: error: --iterations is required (REINFORCE)", file=sys.stderr)
        return 2
    fields: dict[str, Any] = {
        "iterations": args.iterations, "workers": args.workers, "agents": args.agents,
        "seed": args.seed, "workload": args.workload, "ports": args.ports,
        "curriculum": args.curriculum, "stage_iterations": args.stage_iterations,
        "l_init": args.l_init, "epsilon": args.epsilon, "lr": args.lr,
        "checkpoint_every": args.checkpoint_every, "eval_every": args.eval_every,
        "eval_instances": args.eval_instances, "out": args.out}
    try:
        cfg = TrainConfig(**fields)
    except (ParamsError, ValueError) as exc:
        print(f"coflowopt train: error: {exc}", file=sys.stderr)
        return 2
    try:
        res = train(cfg, resume=args.resume, progress=not args.no_progress)
    except FileExistsError as exc:
        print(f"coflowopt train: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"coflowopt train: interrupted; checkpoint saved in {args.out} (continue with "
              "--resume)", file=sys.stderr)
        return 130
    ev = [r for r in res.curve if r.get("eval_mean_jct") not in (None, "")]
    print(f"deepweave: {res.iteration} iterations in {res.seconds:.1f} s -> {res.out}")
    if ev:
        print(f"  greedy policy, mean JCT on the evaluation set: {ev[0]['eval_mean_jct']:.6g} "
              f"(iteration {ev[0]['iteration']}) -> {ev[-1]['eval_mean_jct']:.6g} (iteration "
              f"{ev[-1]['iteration']}); Sincronia {res.sincronia_mean_jct:.6g}")
    return 0


def _issue30(args: argparse.Namespace) -> int:
    """``--imitate`` / ``--finetune``: the issue-30 methods, weights to ``--out``."""
    import dataclasses
    import json
    from pathlib import Path

    from coflowopt.params import ParamsError
    from coflowopt.schedulers.learned.checkpoint import load_checkpoint, save_checkpoint
    from coflowopt.training.imitation import (
        RUN_PARAMS,
        ImitationConfig,
        imitate,
        save_result,
        summarize,
    )
    from coflowopt.training.ppo import VARIANTS, FineTuneConfig, finetune

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    try:
        if args.imitate:
            icfg = ImitationConfig(instances=args.instances, epochs=args.epochs,
                                   seed=args.seed, workers=args.workers,
                                   validation=args.validation,
                                   max_seconds=args.max_seconds)
        else:
            fcfg = FineTuneConfig(iterations=args.iterations or 40, agents=args.agents,
                                  seed=args.seed, workers=args.workers,
                                  validation=args.validation,
                                  max_seconds=args.max_seconds, **VARIANTS[args.variant])
    except (ParamsError, ValueError) as exc:
        print(f"coflowopt train: error: {exc}", file=sys.stderr)
        return 2
    log = None if args.no_progress else print
    if args.imitate:
        res = imitate(icfg, log=log)
        save_result(res, out / "deepweave.npz", icfg)
        curve, val = res.curve, res.validation
    else:
        params, net_cfg, meta = load_checkpoint(args.finetune)
        if net_cfg.head != "attr":
            print(f"coflowopt train: error: --finetune needs a head='attr' checkpoint (from "
                  f"--imitate); {args.finetune} has head={net_cfg.head!r}", file=sys.stderr)
            return 2
        fres = finetune(fcfg, params, net_cfg, log=log)
        save_checkpoint(out / "deepweave.npz", fres.params, net_cfg, {
            "trained": True, "seed": args.seed, "workload": meta.get("workload", ""),
            "method": f"fine-tuning ({args.variant}) of {args.finetune}",
            "iterations": len(fres.curve), "run": dict(RUN_PARAMS),
            "finetune": dataclasses.asdict(fcfg),
            "validation": summarize(fres.validation) if fres.validation else {}})
        curve, val = fres.curve, fres.validation
    (out / "curve.json").write_text(json.dumps({"curve": curve, "validation": val}))
    if val:
        print("validation, greedy policy / better heuristic (avg JCT): "
              + ", ".join(f"{w} {r:.3f}" for w, r in summarize(val).items()))
    print(f"deepweave: weights -> {out / 'deepweave.npz'}")
    return 0
