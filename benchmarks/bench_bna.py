"""Benchmark BNA (dag-coflows spec 2) and DMA (spec 4) of ``coflowopt.schedulers.dag``.

1. **BNA speed** (default): dense ``m x m`` integer matrices with entries uniform on
   ``0..100`` (target: ``m = 150`` under 0.5 s); for each rule (``maxweight``: an LSA per
   matching; ``hk``: the compiled repair of the previous matching) the wall time of
   :func:`~coflowopt.schedulers.dag.bna.birkhoff_von_neumann`, the number of matchings
   (bound ``m^2 - 2m + 2``) and that the durations sum to ``eff``.  The first call of each
   rule is a warm-up (numba compile or cache load) and is not timed.
2. **DMA** (``--dma``): ``coflowopt.run(instance, "dma")`` (validated, streamed) on a
   generated ``ggen_fan_in_fan_out`` instance of ``--jobs`` jobs x ``--coflows`` coflows on
   ``--ports`` ports; the coflow mix is ``--mix narrow`` (CoflowSim's two narrow classes,
   widths 1-5, lengths 1-10 / 10-1000, shares 41:29) or ``default`` (all four classes; the
   wide ones have up to 150 x 150 flows, millions of flows in all).  Reports the makespan
   (slots), the lower bound ``max(Delta, max_j T_j)``, the wall time split into plan and
   validation, and the rate changes.  Peak memory: run it under ``/usr/bin/time -v``.

    python benchmarks/bench_bna.py [--sizes 50 150 300] [--seeds 3] [--json PATH]
    /usr/bin/time -v python benchmarks/bench_bna.py --dma [--jobs 500 --coflows 5 --ports 150]
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

import numpy as np

from coflowopt.schedulers.dag.bna import birkhoff_von_neumann, effective_size


def bench_bna(sizes: list[int], seeds: int, vmax: int = 100) -> list[dict[str, Any]]:
    rows = []
    warm = np.array([[1, 2], [2, 1]])
    for rule in ("maxweight", "hk"):
        birkhoff_von_neumann(warm, rule)
    for m in sizes:
        for seed in range(seeds):
            D = np.random.default_rng(seed).integers(0, vmax + 1, size=(m, m))
            for rule in ("maxweight", "hk"):
                t0 = time.perf_counter()
                _perms, durs = birkhoff_von_neumann(D, rule)
                dt = time.perf_counter() - t0
                ok = int(durs.sum()) == effective_size(D) and len(durs) <= m * m - 2 * m + 2
                rows.append({"m": m, "seed": seed, "rule": rule, "seconds": dt,
                             "matchings": len(durs), "bound": m * m - 2 * m + 2,
                             "eff": effective_size(D), "ok": ok})
                print(f"m={m:4d} seed={seed} {rule:9s} {dt:8.3f} s  {len(durs):6d} matchings "
                      f"(bound {m * m - 2 * m + 2}) eff={effective_size(D)} "
                      f"{'ok' if ok else 'WRONG'}", flush=True)
    return rows


def bench_dma(jobs: int, coflows: int, ports: int, mix: str, seed: int, rule: str
              ) -> dict[str, Any]:
    import coflowopt
    from coflowopt.bounds import makespan_bound
    from coflowopt.workloads.dags import (
        DEFAULT_COFLOW_CLASSES,
        CoflowClassMix,
        ggen_fan_in_fan_out,
    )

    cmix = None if mix == "default" else CoflowClassMix(DEFAULT_COFLOW_CLASSES[:2],
                                                        (0.41, 0.29))
    t0 = time.perf_counter()
    inst = ggen_fan_in_fan_out(jobs, ports=ports, nodes=coflows, seed=seed, mix=cmix)
    t1 = time.perf_counter()
    print(f"{inst} generated in {t1 - t0:.1f} s", flush=True)
    res = coflowopt.run(inst, "dma", seed=seed, params={"rule": rule})
    t2 = time.perf_counter()
    lb = makespan_bound(inst)
    row = {"jobs": jobs, "coflows": coflows, "ports": ports, "mix": mix, "flows": inst.n_flows,
           "rule": rule, "makespan": res.valid.end, "lower_bound": lb,
           "seconds": t2 - t1, "streamed": res.streamed, **res.counters}
    print(json.dumps(row), flush=True)
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[50, 150])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--dma", action="store_true", help="run the DMA benchmark instead")
    ap.add_argument("--jobs", type=int, default=500)
    ap.add_argument("--coflows", type=int, default=5)
    ap.add_argument("--ports", type=int, default=150)
    ap.add_argument("--mix", choices=("narrow", "default"), default="narrow")
    ap.add_argument("--rule", choices=("auto", "hk", "maxweight"), default="auto")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", help="write the rows here")
    a = ap.parse_args()
    if a.dma:
        rows: Any = bench_dma(a.jobs, a.coflows, a.ports, a.mix, a.seed, a.rule)
    else:
        rows = bench_bna(a.sizes, a.seeds)
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(rows, fh, indent=1)


if __name__ == "__main__":
    main()
