"""Benchmark: DeepWeave training throughput, episodes per second (spec 9.4, Algorithm 1).

For a GGen fan-in/fan-out job of exactly 16 and of 64 coflows (``--ports`` x ``--ports``
fabric, CoflowSim's default coflow mix), REINFORCE iterations of ``--agents`` full episodes
each (``l_init`` above the longest episode) through :func:`coflowopt.training.reinforce.train`
with 1 and with 2 agent processes: episodes per second of training (rollouts on
the stepper with Plackett-Luce sampling, the batched replay and the Adam step), measured
between the end of the first iteration (warm-up: kernels loaded, workers started) and the
end of the last.  Also the single-process rollout alone (no gradient): episodes per second
and microseconds per decision epoch.

    python benchmarks/bench_deepweave_train.py [--ports 50] [--agents 16] [--iterations 6]
"""

from __future__ import annotations

import argparse
import json
import time


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ports", type=int, default=50)
    ap.add_argument("--agents", type=int, default=16)
    ap.add_argument("--iterations", type=int, default=6)
    ap.add_argument("--nodes", default="16,64")
    ap.add_argument("--workers", default="1,2")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    from coflowopt.schedulers.learned import network
    from coflowopt.training.episodes import rollout
    from coflowopt.training.reinforce import TrainConfig, train
    from coflowopt.workloads.dags import ggen_fan_in_fan_out

    cfg = network.DeepWeaveConfig()
    params = network.init_params(cfg, args.seed)
    rows = []
    for n in (int(x) for x in args.nodes.split(",")):
        inst = ggen_fan_in_fan_out(1, ports=args.ports, nodes=n, seed=args.seed)
        rollout(inst, params, cfg, steps=None, seed=0)  # warm-up
        t, k, steps = time.perf_counter(), 0, 0
        while time.perf_counter() - t < 3.0 or k < 3:
            steps += len(rollout(inst, params, cfg, steps=None, seed=k)["rewards"])
            k += 1
        dt = time.perf_counter() - t
        row = {"nodes": n, "ports": args.ports, "flows": inst.n_flows,
               "epochs_per_episode": steps / k, "rollout_episodes_per_s": k / dt,
               "rollout_us_per_epoch": 1e6 * dt / steps}
        for w in (int(x) for x in args.workers.split(",")):
            tc = TrainConfig(iterations=args.iterations, agents=args.agents, seed=args.seed,
                             l_init=1000.0, eval_every=10**6, workers=w, ports=args.ports)
            res = train(tc, instance=inst)
            sec = [r["seconds"] for r in res.curve if r["iteration"] >= 1]
            per_it = (sec[-1] - sec[0]) / (len(sec) - 1)
            row[f"train_episodes_per_s_w{w}"] = args.agents / per_it
            row[f"train_seconds_per_iteration_w{w}"] = per_it
        rows.append(row)
        print(json.dumps({k: (round(v, 4) if isinstance(v, float) else v)
                          for k, v in row.items()}), flush=True)
    print(f"\n{'nodes':>5} {'flows':>6} {'epochs':>6} {'rollout ep/s':>12} {'us/epoch':>9} "
          + " ".join(f"{'train ep/s w' + w:>14}" for w in args.workers.split(",")))
    for r in rows:
        print(f"{r['nodes']:>5} {r['flows']:>6} {r['epochs_per_episode']:>6.0f} "
              f"{r['rollout_episodes_per_s']:>12.2f} {r['rollout_us_per_epoch']:>9.0f} "
              + " ".join(f"{r[f'train_episodes_per_s_w{w}']:>14.2f}"
                         for w in args.workers.split(",")))


if __name__ == "__main__":
    main()
