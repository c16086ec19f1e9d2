"""Throughput of DeepWeave's issue-30 rollouts (DeepWeave: Sun, Guo, Wang, Li, Lan, Hu, IJCAI
2020, Algorithm 1's agents): one process, the instance-wide attribute network (feature set
"v2") sampling orders on the compiled decision-epoch stepper, per protocol workload; and what
the paper's 60,000 iterations of ``N`` agents would take at that rate.

    python benchmarks/bench_deepweave_rollouts.py [--checkpoint P] [--instances 3] [--agents 8]
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--checkpoint", default=None, help="a head='attr' checkpoint (default: "
                    "untrained weights, the same cost)")
    ap.add_argument("--instances", type=int, default=3)
    ap.add_argument("--agents", type=int, default=8)
    args = ap.parse_args(argv)
    from coflowopt.schedulers.learned.checkpoint import load_checkpoint
    from coflowopt.schedulers.learned.network import DeepWeaveConfig, init_params
    from coflowopt.training.episodes import rollout
    from coflowopt.training.teachers import WORKLOADS, make_instance, training_seeds

    if args.checkpoint:
        params, cfg, _ = load_checkpoint(args.checkpoint)
    else:
        cfg = DeepWeaveConfig.heuristic()
        params = init_params(cfg, 0)
    rollout(make_instance("tpcds-10", 123_456), params, cfg, steps=None, seed=0)  # compile
    per: dict[str, float] = {}
    for w in WORKLOADS:
        secs, steps = [], 0
        for _, g in training_seeds(5, args.instances, (w,), stream=11):
            inst = make_instance(w, g)
            t0 = time.perf_counter()
            r = rollout(inst, params, cfg, steps=None, seed=1, record=32)
            secs.append(time.perf_counter() - t0)
            steps += len(r["rewards"])
        per[w] = float(np.mean(secs))
        print(f"{w:>18}: {1 / per[w]:7.2f} episodes/s ({per[w]:.2f} s each, "
              f"{steps / sum(secs):.0f} decision epochs/s), one process")
    mean = float(np.mean(list(per.values())))
    it_s = mean * args.agents
    print(f"workloads in turn: {1 / mean:.2f} episodes/s; one iteration of {args.agents} agents "
          f"{it_s:.1f} s of one core; 60,000 iterations: {60_000 * it_s / 3600:.0f} core-hours "
          f"({60_000 * it_s / 3600 / 16:.0f} h on 16 cores, rollouts only)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
