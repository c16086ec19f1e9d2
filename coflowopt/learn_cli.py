"""``coflowopt train deepweave``: train DeepWeave's policy with REINFORCE (Sun, Guo, Wang, Li,
Lan, Hu, IJCAI 2020, Algorithm 1; :mod:`coflowopt.training.reinforce`).  Needs the ``learn``
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
    d.add_argument("--iterations", type=int, required=True,
                   help="training iterations in all (a resumed run goes on to this count)")
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
