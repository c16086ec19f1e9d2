"""Issue 30's training run in one script: demonstrations, imitation pre-training (Plackett-Luce
likelihood of the better of Sincronia's and G-DM-BF's orders), then the fine-tuning variants
side by side (DeepWeave: Sun, Guo, Wang, Li, Lan, Hu, IJCAI 2020; the methods in
:mod:`coflowopt.training.imitation` and :mod:`coflowopt.training.ppo`).  Everything goes to
``--out``: ``imitation.npz``, ``ft-<variant>.npz``, ``curves.json`` (every curve and validation
row), ``log.txt``.  Held-out seeds are never touched here (``benchmarks/deepweave_protocol.py``
evaluates the checkpoints on them).

    python benchmarks/deepweave_issue30_train.py --out DIR [--workers 16] [--instances 150]
        [--epochs 40] [--imitation-seconds 170] [--ft-seconds 200] [--variants ppo,pg,...]
        [--quick]

Fine-tuning variants: :data:`coflowopt.training.ppo.VARIANTS`.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import multiprocessing
import os
import sys
import time
from pathlib import Path


def _variant(name: str, args: argparse.Namespace, out: Path, workers: int) -> None:
    import torch

    from coflowopt.schedulers.learned.checkpoint import load_checkpoint, save_checkpoint
    from coflowopt.training.imitation import RUN_PARAMS, summarize
    from coflowopt.training.ppo import VARIANTS, FineTuneConfig, finetune

    torch.set_num_threads(1)  # the agents' processes are the parallelism
    params, net_cfg, meta = load_checkpoint(out / "imitation.npz")
    cfg = FineTuneConfig(iterations=args.ft_iterations, agents=args.agents, workers=workers,
                         seed=args.seed, max_seconds=args.ft_seconds,
                         validation=args.validation, validate_every=args.ft_validate_every,
                         **VARIANTS[name])
    with open(out / f"log-{name}.txt", "w") as fh:
        res = finetune(cfg, params, net_cfg, log=lambda s: (fh.write(s + "\n"), fh.flush()))
    save_checkpoint(out / f"ft-{name}.npz", res.params, net_cfg, {
        "trained": True, "seed": args.seed, "method": f"imitation + fine-tuning ({name})",
        "workload": meta["workload"], "iterations": len(res.curve), "run": dict(RUN_PARAMS),
        "finetune": dataclasses.asdict(cfg),
        "validation": summarize(res.validation) if res.validation else {}})
    (out / f"curve-{name}.json").write_text(json.dumps(
        {"curve": res.curve, "validation": res.validation, "seconds": res.seconds}))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--instances", type=int, default=150)
    ap.add_argument("--record", type=int, default=32)
    ap.add_argument("--epochs", type=int, default=40)
    ap.add_argument("--lr", type=float, default=1e-2)
    ap.add_argument("--imitation-seconds", type=float, default=170.0)
    ap.add_argument("--validation", type=int, default=9)
    ap.add_argument("--imitation-validate-every", type=int, default=4)
    ap.add_argument("--torch-threads", type=int, default=4)
    ap.add_argument("--variants", default="ppo,ppo-nokl,pg")
    ap.add_argument("--agents", type=int, default=8)
    ap.add_argument("--ft-iterations", type=int, default=200)
    ap.add_argument("--ft-seconds", type=float, default=200.0)
    ap.add_argument("--ft-validate-every", type=int, default=10)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--quick", action="store_true", help="a tiny run (smoke test)")
    args = ap.parse_args(argv)
    if args.quick:
        args.instances, args.epochs, args.validation = 3, 2, 3
        args.ft_iterations, args.agents, args.ft_validate_every = 2, 2, 2
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    logf = open(out / "log.txt", "a")

    def log(s: str) -> None:
        print(s, flush=True)
        logf.write(s + "\n")
        logf.flush()

    from coflowopt.training.imitation import ImitationConfig, collect, imitate, save_result
    from coflowopt.training.teachers import demonstration, make_instance

    t0 = time.perf_counter()
    cfg = ImitationConfig(instances=args.instances, validation=args.validation,
                          epochs=args.epochs, record=args.record, lr=args.lr, seed=args.seed,
                          workers=args.workers, max_seconds=args.imitation_seconds,
                          validate_every=args.imitation_validate_every)
    import torch

    torch.set_num_threads(args.torch_threads)
    # compile the kernels once here, before the workers fork (they inherit them)
    demonstration(make_instance("tpcds-10", 123_456), cfg.net_config(), record=1)
    log(f"warm-up {time.perf_counter() - t0:.1f} s")
    demos = collect(cfg)
    teach = {}
    for d in demos:
        key = f"{d['workload']}:{d['teacher']}"
        teach[key] = teach.get(key, 0) + 1
    log(f"demonstrations: {len(demos)} in {time.perf_counter() - t0:.1f} s; teachers {teach}")
    res = imitate(cfg, demos=demos, log=log)
    save_result(res, out / "imitation.npz", cfg)
    (out / "curve-imitation.json").write_text(json.dumps(
        {"curve": res.curve, "validation": res.validation, "teachers": teach,
         "seconds": res.seconds}))
    log(f"imitation done at {time.perf_counter() - t0:.1f} s")
    names = [v for v in args.variants.split(",") if v]
    from coflowopt.training.ppo import VARIANTS

    bad = [v for v in names if v not in VARIANTS]
    if bad:
        raise SystemExit(f"unknown variant {bad[0]!r}; known: {', '.join(VARIANTS)}")
    per = max(args.workers // max(len(names), 1), 1)
    # spawn: the parent ran autograd (imitation), after which torch refuses it in a forked child
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_variant, args=(n, args, out, per)) for n in names]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    log(f"fine-tuning done at {time.perf_counter() - t0:.1f} s; exit codes "
        f"{[p.exitcode for p in procs]}")
    return 0 if all(p.exitcode == 0 for p in procs) else 1


if __name__ == "__main__":
    sys.exit(main())
