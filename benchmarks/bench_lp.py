"""Benchmark the exact formulations (``coflowopt.lp``).

1. **Model build**: the time-indexed LP (the LP relaxation of the slotted weighted-CCT MILP,
   single stage) at about 1e5 and 1e6 nonzeros, built three ways:

   - *highspy arrays*: the numpy formulation (:func:`coflowopt.lp.time_indexed_model`) plus one
     ``Highs.passModel`` call;
   - *pulp expressions, native*: the same rows written as a PuLP user would, one ``lpSum`` per
     constraint over a dict of variables (this file, :func:`pulp_native`);
   - *pulp from arrays*: our PuLP back-end turning the array model into expressions
     (:func:`coflowopt.lp.pulp_problem`).

   It reports the build times, their ratio, the nonzero count (the same for both), and the solve
   times: HiGHS on the arrays, and the PuLP model through PuLP's HiGHS interface (``--cbc`` adds
   CBC, slow at this size).
2. **E\\* bisection** on 50 coflows x 20 ports (uniform random demands and FB2010-like
   synthetic coflows): a batch started at ``E_MPS``, the same batch bisected from 1, and the
   coflows with random releases; wall time and number of LP solves.
3. **verify --quick** (``--verify``): instance count and wall time with ``--jobs 1`` and ``2``.

    python benchmarks/bench_lp.py [--sizes small large] [--cbc] [--verify] [--json PATH]
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import subprocess
import sys
import time
from typing import Any

import numpy as np

from coflowopt import CoflowSpec, Instance, build_instance
from coflowopt.lp import SolveParams, min_slowdown, mps, pulp_problem, solve, time_indexed_model
from coflowopt.lp.highs import highs_model

SIZES = {  # coflows, ports, flows per coflow (max), volume max: ~1e5 and ~1e6 nonzeros
    "small": (40, 10, 6, 4),
    "large": (90, 16, 6, 5),
}


def random_instance(n: int, m: int, fmax: int, vmax: int, seed: int = 0) -> Instance:
    rng = np.random.default_rng(seed)
    specs = []
    for _ in range(n):
        k = int(rng.integers(1, fmax + 1))
        specs.append(CoflowSpec([(int(rng.integers(m)), int(rng.integers(m)),
                                  float(rng.integers(1, vmax + 1))) for _ in range(k)],
                                weight=float(rng.integers(1, 4))))
    return build_instance(m, coflows=specs)


def pulp_native(inst: Instance, T: int) -> Any:
    """The LP relaxation of the time-indexed model (cuts off, single stage, no releases), written
    with PuLP expressions the way a PuLP user would: same rows as
    ``time_indexed_model(inst, horizon=T, cuts=False).relaxation()``."""
    import pulp

    prob = pulp.LpProblem("time_indexed", pulp.LpMinimize)
    add = prob.add_variable
    F, C = inst.n_flows, inst.n_coflows
    v, V = inst.flow_volume, inst.coflow_size
    fc = inst.flow_coflow
    w = inst.coflow_weight
    c0 = inst.isolation_time
    slots = range(1, T + 1)
    x = {(i, t): add(f"x_{i}_{t}", 0, 1) for i in range(F) for t in slots}
    X = {(j, t): add(f"X_{j}_{t}", 0, 1 if t >= math.ceil(c0[j] - 1e-9) else 0)
         for j in range(C) for t in slots}
    Z = {(j, t): add(f"Z_{j}_{t}", 0, 1) for j in range(C) for t in slots}
    Cv = {j: add(f"C_{j}", 0, None) for j in range(C)}
    prob += pulp.lpSum(-w[j] * X[j, t] for j in range(C) for t in range(1, T)) + \
        float(w.sum() * T)
    flows_of = [inst.flows_of(j) for j in range(C)]
    for i in range(F):
        prob += pulp.lpSum(x[i, t] for t in slots) == 1
    for j in range(C):
        for t in slots:
            prev = Z[j, t - 1] if t > 1 else 0
            prob += Z[j, t] - prev - pulp.lpSum(v[i] / V[j] * x[i, t] for i in flows_of[j]) == 0
            prob += X[j, t] - Z[j, t] <= 0
            if t < T:
                prob += X[j, t] - X[j, t + 1] <= 0
        prob += Cv[j] + pulp.lpSum(X[j, t] for t in range(1, T)) == T
    for side in (inst.flow_src, inst.flow_dst):
        for port in range(inst.ports):
            on = np.flatnonzero(side == port)
            for t in slots:
                if on.size:
                    prob += pulp.lpSum(v[i] * x[i, t] for i in on) <= 1
    del fc
    return prob


def _best_of(repeat: int, fn: Any) -> tuple[float, Any]:
    """Best wall time of ``repeat`` calls, each after a full collection and with the cyclic
    garbage collector off while it runs (as ``timeit`` does), so that one method's leftover
    objects do not slow the other down."""
    best, out = math.inf, None
    for _ in range(repeat):
        out = None
        gc.collect()
        gc.disable()
        try:
            t0 = time.perf_counter()
            out = fn()
            best = min(best, time.perf_counter() - t0)
        finally:
            gc.enable()
    return best, out


def bench_build(size: str, cbc: bool, repeat: int = 3) -> dict[str, Any]:
    n, m, fmax, vmax = SIZES[size]
    inst = random_instance(n, m, fmax, vmax)
    t_arrays, model = _best_of(repeat, lambda: time_indexed_model(inst, cuts=False))
    lp = model.relaxation()
    t_pass, _ = _best_of(repeat, lambda: highs_model(lp))
    t_pulp_native, prob = _best_of(max(1, repeat - 1), lambda: pulp_native(inst, model.horizon))
    t_pulp_arrays, _ = _best_of(max(1, repeat - 1), lambda: pulp_problem(lp))
    res = solve(lp)
    out: dict[str, Any] = {
        "size": size, "coflows": n, "ports": m, "flows": inst.n_flows, "slots": model.horizon,
        "cols": lp.n_cols, "rows": lp.n_rows, "nnz": lp.nnz,
        "build_highspy_arrays_s": t_arrays + t_pass, "formulation_arrays_s": t_arrays,
        "passModel_s": t_pass, "build_pulp_native_s": t_pulp_native,
        "build_pulp_from_arrays_s": t_pulp_arrays,
        "ratio_native": t_pulp_native / (t_arrays + t_pass),
        "ratio_from_arrays": t_pulp_arrays / (t_arrays + t_pass),
        "solve_highs_s": res.runtime, "objective_highs": res.objective,
        "status_highs": str(res.status),
    }
    import pulp

    t4 = time.perf_counter()
    prob.solve(pulp.HiGHS(msg=False))
    out["solve_pulp_highs_s"] = time.perf_counter() - t4
    out["objective_pulp_highs"] = float(pulp.value(prob.objective))
    if cbc:
        r = solve(lp, SolveParams(time_limit=600), backend="pulp")
        out["solve_pulp_cbc_s"] = r.runtime
        out["objective_pulp_cbc"] = r.objective
    return out


def synthetic_batch(n: int, m: int, seed: int) -> Instance:
    from coflowopt.workloads.synthetic import synthetic_trace

    inst = synthetic_trace(n, seed=seed, ports=m, capacity=1.0)
    return Instance.from_arrays(inst.fabric, inst.flow_src, inst.flow_dst, inst.flow_volume,
                                inst.flow_coflow, coflow_weight=inst.coflow_weight,
                                n_coflows=inst.n_coflows)


def with_releases(inst: Instance, seed: int, spread: float = 20.0) -> Instance:
    rng = np.random.default_rng(seed)
    rel = rng.integers(0, int(spread) + 1, size=inst.n_coflows).astype(float)
    return Instance.from_arrays(inst.fabric, inst.flow_src, inst.flow_dst, inst.flow_volume,
                                inst.flow_coflow, coflow_weight=inst.coflow_weight,
                                coflow_release=rel, n_coflows=inst.n_coflows)


def bench_bisection(seeds: int = 3) -> list[dict[str, Any]]:
    """Three set-ups: a batch started at E_MPS (usually feasible at once), the same batch
    bisected from max phi (use_mps=False), and coflows with releases (no MPS bound)."""
    rows = []
    for kind in ("uniform", "fb-like"):
        for seed in range(seeds):
            base = random_instance(50, 20, 10, 10, seed) if kind == "uniform" else \
                synthetic_batch(50, 20, seed)
            for mode in ("batch, from E_MPS", "batch, from 1", "releases"):
                inst = with_releases(base, seed) if mode == "releases" else base
                t0 = time.perf_counter()
                res = min_slowdown(inst, use_mps=mode != "batch, from 1")
                dt = time.perf_counter() - t0
                rows.append({"kind": kind, "mode": mode, "seed": seed, "flows": inst.n_flows,
                             "E_mps": mps(base).E, "E_star": res.E_star,
                             "lp_solves": res.lp_solves, "time_s": dt, "E_lo": res.E_lo,
                             "E_hi": res.E_hi})
    return rows


def bench_verify() -> list[dict[str, Any]]:
    rows = []
    for jobs in (1, 2):
        t0 = time.perf_counter()
        p = subprocess.run([sys.executable, "-m", "coflowopt.cli", "verify", "--quick",
                            "--jobs", str(jobs)], capture_output=True, text=True)
        dt = time.perf_counter() - t0
        last = [ln for ln in p.stdout.splitlines() if " instances, " in ln]
        rows.append({"jobs": jobs, "wall_s": dt, "exit": p.returncode,
                     "summary": last[-1] if last else p.stdout[-300:]})
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", nargs="*", default=["small", "large"], choices=list(SIZES))
    ap.add_argument("--cbc", action="store_true", help="also solve the PuLP model with CBC")
    ap.add_argument("--verify", action="store_true", help="time coflowopt verify --quick")
    ap.add_argument("--json", default=None, help="write all figures to this JSON file")
    args = ap.parse_args(argv)
    out: dict[str, Any] = {"build": [], "bisection": [], "verify": []}
    print("== build: time-indexed LP (LP relaxation of the slotted MILP) ==")
    for size in args.sizes:
        r = bench_build(size, args.cbc)
        out["build"].append(r)
        print(f"{size}: {r['coflows']} coflows x {r['ports']} ports, {r['flows']} flows, "
              f"{r['slots']} slots -> {r['cols']:,} cols, {r['rows']:,} rows, {r['nnz']:,} nnz")
        print(f"  highspy arrays     {r['build_highspy_arrays_s']:8.3f} s  (formulation "
              f"{r['formulation_arrays_s']:.3f} + passModel {r['passModel_s']:.3f})")
        print(f"  pulp native        {r['build_pulp_native_s']:8.3f} s  "
              f"({r['ratio_native']:.0f}x slower)")
        print(f"  pulp from arrays   {r['build_pulp_from_arrays_s']:8.3f} s  "
              f"({r['ratio_from_arrays']:.0f}x slower)")
        print(f"  solve: HiGHS direct {r['solve_highs_s']:.2f} s (obj {r['objective_highs']:.6g})"
              f", PuLP->HiGHS {r['solve_pulp_highs_s']:.2f} s (obj "
              f"{r['objective_pulp_highs']:.6g})"
              + (f", PuLP->CBC {r['solve_pulp_cbc_s']:.2f} s" if "solve_pulp_cbc_s" in r else ""))
    print("\n== E* bisection (LP-interval, rtol 1e-3, HiGHS IPM), 50 coflows x 20 ports ==")
    for r in bench_bisection():
        out["bisection"].append(r)
        print(f"  {r['kind']:<8} {r['mode']:<18} seed {r['seed']}: {r['flows']:4d} flows, "
              f"E_MPS {r['E_mps']:.4f}, E* {r['E_star']:.4f}, {r['lp_solves']:2d} LP solves, "
              f"{r['time_s']:.2f} s")
    if args.verify:
        print("\n== coflowopt verify --quick ==")
        for r in bench_verify():
            out["verify"].append(r)
            print(f"  --jobs {r['jobs']}: {r['wall_s']:.1f} s wall, exit {r['exit']}: "
                  f"{r['summary']}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(out, fh, indent=1, default=float)
    return 0


if __name__ == "__main__":
    sys.exit(main())
