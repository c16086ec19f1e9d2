"""Benchmark DeepWeave's inference (``coflowopt.schedulers.learned``).

1. **Network forward** (numpy, the scheduler's path): the priorities of one job DAG of
   ``V`` coflows (GGen fan-in/fan-out, ``V = 4 .. 64``) with the shipped checkpoint's network;
   the features apart (:func:`job_batches`) and the forward pass (:func:`network.forward`).
   Target: a 64-node DAG's priorities in under 10 ms.  With torch installed the torch twin's
   forward (float64, no grad) is timed beside it.
2. **Whole scheduler** through the run service on a few DAG workloads: ``converter="greedy"``
   (compiled engine, streamed validation), ``"aligned"`` (the Policy Converter) and
   ``rerank="events"`` (reference engine, priorities recomputed at every epoch).

Each time is the median of ``--repeat`` runs after one warm-up run.

    python benchmarks/bench_deepweave_inference.py [--repeat 50] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from typing import Any

import coflowopt
from coflowopt.schedulers.learned.checkpoint import load_checkpoint
from coflowopt.schedulers.learned.features import job_batches
from coflowopt.schedulers.learned.network import forward
from coflowopt.workloads.dags import ggen_fan_in_fan_out, tpcds_like


def _median_ms(fn: Any, repeat: int) -> float:
    fn()
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return 1e3 * statistics.median(ts)


def bench_forward(repeat: int) -> list[dict[str, Any]]:
    params, cfg, _ = load_checkpoint()
    try:
        import torch

        from coflowopt.schedulers.learned.torch_net import DeepWeaveNet

        net = DeepWeaveNet(cfg).load_numpy(params)
    except ImportError:
        torch = net = None
    rows = []
    for v in (4, 8, 16, 32, 64):
        inst = ggen_fan_in_fan_out(1, ports=50, nodes=v, seed=v)
        b = job_batches(inst)[0]
        row = {"nodes": v, "levels": b.n_levels, "flows": inst.n_flows,
               "features_ms": _median_ms(lambda i=inst: job_batches(i), repeat),
               "forward_ms": _median_ms(lambda b=b: forward(params, cfg, b), repeat)}
        if net is not None:
            def tfw(b=b):
                with torch.no_grad():
                    net(b)
            row["torch_forward_ms"] = _median_ms(tfw, repeat)
        rows.append(row)
    return rows


def bench_scheduler(repeat: int) -> list[dict[str, Any]]:
    rows = []
    work = {"tpcds_like(5 jobs, 50 ports)": tpcds_like(5, ports=50, seed=1),
            "ggen(5 jobs, 4-64 nodes, 50 ports)": ggen_fan_in_fan_out(5, ports=50, seed=2)}
    for name, inst in work.items():
        for prm in ({}, {"converter": "aligned"}, {"rerank": "events"}):
            r = coflowopt.run(inst, "deepweave", params=prm)
            rows.append({
                "workload": name, "coflows": inst.n_coflows, "flows": inst.n_flows,
                "params": prm or {"converter": "greedy"},
                "wall_ms": _median_ms(lambda i=inst, p=prm: coflowopt.run(
                    i, "deepweave", params=p), max(3, repeat // 10)),
                "avg_jct": r.summary()["avg_jct"]})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=50)
    ap.add_argument("--json", default=None, help="also write the rows to this file")
    a = ap.parse_args()
    _, _, meta = load_checkpoint()
    print(f"checkpoint: trained={meta['trained']} seed={meta['seed']} "
          f"workload={meta['workload']!r}")
    fw = bench_forward(a.repeat)
    print("\nnetwork forward, one job DAG (median ms)")
    print(f"{'nodes':>5} {'levels':>6} {'features':>9} {'forward':>8} {'torch':>8}")
    for r in fw:
        tt = f"{r['torch_forward_ms']:8.3f}" if "torch_forward_ms" in r else f"{'-':>8}"
        print(f"{r['nodes']:5d} {r['levels']:6d} {r['features_ms']:9.3f} {r['forward_ms']:8.3f} "
              f"{tt}")
    big = next(r for r in fw if r["nodes"] == 64)
    total = big["features_ms"] + big["forward_ms"]
    print(f"64-node DAG: features + forward = {total:.3f} ms (target < 10 ms: "
          f"{'met' if total < 10 else 'MISSED'})")
    sc = bench_scheduler(a.repeat)
    print("\nwhole scheduler through coflowopt.run (median ms, validation included)")
    for r in sc:
        print(f"  {r['workload']:36s} {json.dumps(r['params']):28s} coflows={r['coflows']:4d} "
              f"flows={r['flows']:6d} {r['wall_ms']:9.1f} ms  avg_jct={r['avg_jct']:.1f}")
    if a.json:
        with open(a.json, "w") as fh:
            json.dump({"forward": fw, "scheduler": sc, "checkpoint": meta}, fh, indent=1)


if __name__ == "__main__":
    main()
