"""How big an instance the time-indexed LPs of ``iterated-rounding`` (the edge LP,
:mod:`coflowopt.lp.edge`) and ``lp-flow-order`` (LP-T, :mod:`coflowopt.lp.flow_order`) solve
in about a minute, and how big FB2010's would be.

Instances: ``n`` coflows on ``m = 10`` unit ports, 1-4 flows each, integer volumes 1-10
(seeded), releases 0; the LP is built and solved by HiGHS (defaults of the schedulers: the
edge LP by interior point with crossover, LP-T by dual simplex), one thread.  ``n`` doubles until a
solve passes ``--seconds`` (default 60).  Prints one row per size: merged flows ``F``, slots
``T``, columns, nonzeros, seconds.  Then the size of FB2010's edge LP at the automatic
quantum (never built).

    python benchmarks/bench_approx_lp.py [--seconds 60] [--which edge|flow|both]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from coflowopt.lp import SolveParams
from coflowopt.lp.edge import auto_quantum, edge_lp_size, solve_edge_lp, unit_edges
from coflowopt.lp.flow_order import flow_order_lp_size, solve_flow_order_lp
from coflowopt.model import CoflowSpec, build_instance


def instance(n: int, seed: int = 0, m: int = 10):
    rng = np.random.default_rng([seed, n])
    specs = []
    for j in range(n):
        k = int(rng.integers(1, 5))
        flows = [(int(rng.integers(m)), int(rng.integers(m)), float(rng.integers(1, 11)))
                 for _ in range(k)]
        specs.append(CoflowSpec(flows, id=f"c{j}", weight=float(rng.integers(1, 4))))
    return build_instance(m, coflows=specs)


def sweep(which: str, seconds: float) -> None:
    size = edge_lp_size if which == "edge" else flow_order_lp_size
    n = 5
    while True:
        e = unit_edges(instance(n))
        cols, nnz = size(e)
        t0 = time.perf_counter()
        if which == "edge":
            lp = solve_edge_lp(e, SolveParams(time_limit=4 * seconds, threads=1,
                                              options={"solver": "ipm"}))
        else:
            lp = solve_flow_order_lp(e, SolveParams(time_limit=4 * seconds, threads=1,
                                                    options={"solver": "simplex"}))
        dt = time.perf_counter() - t0
        print(f"{which:5s} n={n:4d} F={e.n_flows:5d} T={e.units:6d} columns={cols:10,d} "
              f"nonzeros={nnz:11,d} seconds={dt:7.1f} value={lp.value:.6g}", flush=True)
        if dt > seconds:
            break
        n = int(n * 1.5) + 1


def fb2010() -> None:
    from coflowopt.workloads.trace import find_fb2010, read_trace

    path = find_fb2010()
    if path is None:
        return
    inst = read_trace(path)
    q = auto_quantum(inst)
    e = unit_edges(inst, q)
    cols, nnz = edge_lp_size(e)
    print(f"FB2010 edge LP at quantum {q:g}: F={e.n_flows:,} T={e.units:,} columns={cols:,} "
          f"nonzeros={nnz:,}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--which", choices=("edge", "flow", "both"), default="both")
    a = ap.parse_args()
    for w in (("edge", "flow") if a.which == "both" else (a.which,)):
        sweep(w, a.seconds)
    fb2010()


if __name__ == "__main__":
    main()
