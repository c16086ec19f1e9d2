"""Benchmark CoFair's order and the MPS estimate of ``E*`` (single-stage spec 3.3, 4.3, 10.1).

1. **CoFair's order** on 10,000 coflows x 150 ports (1-30 flows each, volumes 1-99, seeded):
   wall time of :func:`coflowopt.schedulers.fair.cofair.cofair_order` from the instance (port
   loads included) at ``E = E_MPS``, ``1.25 E_MPS`` and ``inf``, best of ``--repeat``, after
   one warm-up call (numba's cache load); MPS's own time; BSSI (dense, ``coflowopt.orders``)
   at ``E = inf`` for comparison and as a check (the same order).
2. **MPS vs the exact bisection** on 100 seeded small instances (2-5 ports, 3-8 coflows, 1-6
   flows, volumes in {1, 2, 3, 5, 8, 13}: the spec's [VER] set-up): the relative error
   ``(E* - E_MPS) / E*``, how often they are equal, the speed-up (bisection time / MPS time)
   and the LP solves per bisection.  The bisection starts from ``max phi_j`` (``use_mps=False``),
   so it does not assume the bound it is compared with; ``rtol = 1e-3``.
3. **Larger batches** (50, 200, 1,000 coflows, FB-like synthetic coflows on 20/40/150 ports,
   releases 0): ``E*`` by the bisection of :func:`coflowopt.lp.min_slowdown` with
   ``method="colgen"`` (``--method lp``: the whole LP per ``E``, as before), from ``max phi``
   (50 and 200 coflows: times the bisection itself), from ``E_MPS``, and one
   column-generation test at ``E_MPS`` alone ("LP at E_MPS": the LP's own answer, without
   the validated heuristic schedules that may close the bracket first), each in a child process
   under ``--limit`` (default 600 s) and ``--mem-cap``; the search gets 0.9 x the limit as
   its budget (then it returns its proven bracket).  Per row: ``E*``, the certified bracket
   (``E_lo_certified``: proven lower bound, ``E_hi_realised``: a validated schedule's
   slowdown), ``E*/E_MPS``, seconds, the child's peak RSS, feasibility tests,
   column-generation rounds, the groups, the full LP's columns and the final master's
   columns and rows.
4. **MPS gap** (``--mps-gap N``, alone): ``E_MPS`` against the LP's ``E*`` on seeds
   ``0 .. N-1`` of part 2's generator (:func:`mps_gap`): how many are equal, the quantiles of
   ``E*/E_MPS`` and the worst seeds (part 2's 100 seeds hold none of the 8 gaps in 1,000).

    python benchmarks/bench_cofair.py [--quick] [--limit S] [--repeat K] [--json PATH]
        [--mem-cap GB (default 8; 0: none)] [--parts 1,2,3] [--method colgen|lp]
    python benchmarks/bench_cofair.py --mps-gap 1000 [--json PATH]   (E_MPS vs E*, only)
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing as mp
import sys
import time
from typing import Any

import numpy as np

from coflowopt import Instance
from coflowopt.lp import min_slowdown, mps, slowdown_feasibility
from coflowopt.orders import bssi, port_loads
from coflowopt.schedulers.fair.cofair import cofair_deadlines, cofair_order

RTOL = 1e-3


def big_instance(n: int = 10_000, m: int = 150, seed: int = 1) -> Instance:
    rng = np.random.default_rng(seed)
    width = rng.integers(1, 31, n)
    fc = np.repeat(np.arange(n), width)
    f = fc.size
    return Instance.from_arrays(m, rng.integers(0, m, f), rng.integers(0, m, f),
                                rng.integers(1, 100, f).astype(float), fc, n_coflows=n,
                                coflow_weight=rng.integers(1, 4, n).astype(float))


def small_instance(seed: int) -> Instance:
    rng = np.random.default_rng(seed)
    m = int(rng.integers(2, 6))
    n = int(rng.integers(3, 9))
    width = rng.integers(1, 7, n)
    fc = np.repeat(np.arange(n), width)
    f = fc.size
    vol = rng.choice(np.array([1.0, 2.0, 3.0, 5.0, 8.0, 13.0]), f)
    return Instance.from_arrays(m, rng.integers(0, m, f), rng.integers(0, m, f), vol, fc,
                                n_coflows=n)


def batch_instance(n: int, m: int, seed: int) -> Instance:
    from coflowopt.workloads.synthetic import synthetic_trace

    inst = synthetic_trace(n, seed=seed, ports=m, capacity=1.0)
    return Instance.from_arrays(inst.fabric, inst.flow_src, inst.flow_dst, inst.flow_volume,
                                inst.flow_coflow, coflow_weight=inst.coflow_weight,
                                n_coflows=inst.n_coflows)


def _best(repeat: int, fn: Any) -> tuple[float, Any]:
    best, out = math.inf, None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def bench_order(repeat: int) -> list[dict[str, Any]]:
    inst = big_instance()
    t_mps, res = _best(repeat, lambda: mps(inst))
    e_mps = res.E
    cofair_order(inst, None, cofair_deadlines(inst, e_mps))  # warm-up (numba cache load)
    rows = [{"what": "MPS (lp.mps)", "E": e_mps, "seconds": t_mps}]
    sigma = None
    for label, E in (("E_MPS", e_mps), ("1.25 E_MPS", 1.25 * e_mps), ("inf", math.inf)):
        D = cofair_deadlines(inst, E)
        t, sigma = _best(repeat, lambda D=D: cofair_order(inst, None, D))
        rows.append({"what": f"CoFair order, E = {label}", "E": E, "seconds": t})
    allc = np.arange(inst.n_coflows)
    t, want = _best(repeat, lambda: bssi(port_loads(inst, allc, inst.flow_volume),
                                         inst.coflow_weight))
    rows.append({"what": "BSSI (dense, orders.bssi)", "E": math.inf, "seconds": t,
                 "same_order_as_cofair_inf": bool(np.array_equal(want, sigma))})
    for r in rows:
        r.update(coflows=inst.n_coflows, ports=inst.ports, flows=inst.n_flows)
    return rows


def bench_small(n_instances: int) -> dict[str, Any]:
    rel, speed, solves, equal = [], [], [], 0
    t_mps_all = t_bis_all = 0.0
    for seed in range(n_instances):
        inst = small_instance(seed)
        t0 = time.perf_counter()
        e_mps = mps(inst).E
        t_mps = time.perf_counter() - t0
        t0 = time.perf_counter()
        res = min_slowdown(inst, use_mps=False, rtol=RTOL)
        t_bis = time.perf_counter() - t0
        e_star = res.E_star
        rel.append((e_star - e_mps) / e_star)
        equal += abs(e_star - e_mps) <= 2 * RTOL * e_mps
        speed.append(t_bis / max(t_mps, 1e-9))
        solves.append(res.lp_solves)
        t_mps_all += t_mps
        t_bis_all += t_bis
    rel_a = np.array(rel)
    return {"instances": n_instances, "equal_within_rtol": int(equal),
            "rel_error_max": float(rel_a.max()), "rel_error_min": float(rel_a.min()),
            "rel_error_mean": float(rel_a.mean()),
            "mps_below_E_star_minus_rtol": int((rel_a < -2 * RTOL).sum()),
            "speedup_median": float(np.median(speed)),
            "speedup_total": t_bis_all / max(t_mps_all, 1e-9),
            "mps_ms_mean": 1e3 * t_mps_all / n_instances,
            "bisection_ms_mean": 1e3 * t_bis_all / n_instances,
            "lp_solves_mean": float(np.mean(solves)), "lp_solves_max": int(np.max(solves))}


def mps_gap(n_instances: int, rtol: float = 1e-6) -> dict[str, Any]:
    """``E_MPS`` against ``E*`` on ``small_instance(0 .. n-1)`` (``--mps-gap N``).

    Per seed: one LP at ``E_MPS`` (feasible: ``E* <= E_MPS``, so ``E* = E_MPS`` by the bound)
    and one at ``E_MPS (1 - 1e-5)`` (infeasible: the bound ``E_MPS <= E*`` holds; 1e-5, not
    ``rtol``: the LP decides feasibility to about 1e-6 relative, HiGHS's 1e-7 on rows scaled
    by the time span, and at ``1 - 1e-6`` it called 2 of 1,000 tight instances feasible);
    where the first is infeasible, the bisection from ``E_MPS`` to ``rtol`` gives ``E*``."""
    ratios, worst, below, undecided = [], [], [], []
    t0 = time.perf_counter()
    for seed in range(n_instances):
        inst = small_instance(seed)
        e_mps = mps(inst).E
        at = slowdown_feasibility(inst, e_mps).feasible
        under = slowdown_feasibility(inst, e_mps * (1 - 1e-5)).feasible
        if at is None or under is None:
            undecided.append(seed)
            continue
        if under:
            below.append(seed)  # E* < E_MPS: the lower-bound lemma broken
        if at:
            ratios.append(1.0)
            continue
        e_star = min_slowdown(inst, rtol=rtol).E_star
        ratios.append(e_star / e_mps)
        worst.append((e_star / e_mps, seed, e_mps, e_star))
    r = np.array(ratios)
    worst.sort(reverse=True)
    qs = (0.5, 0.9, 0.99, 0.995, 0.999, 1.0)
    return {"instances": n_instances, "rtol": rtol,
            "equal": int((r <= 1 + rtol).sum()), "gap": int((r > 1 + rtol).sum()),
            "E_star_below_E_mps": below, "undecided": undecided,
            "quantiles_E_star_over_E_mps": {f"{q:g}": float(np.quantile(r, q)) for q in qs},
            "worst": [{"seed": s_, "E_mps": a, "E_star": b, "ratio": q}
                      for q, s_, a, b in worst[:10]],
            "seconds": time.perf_counter() - t0}


def _child_bisect(n: int, m: int, seed: int, method: str, start: str, test_limit: float,
                  q: Any) -> None:
    import resource

    from coflowopt.lp.slowdown_cg import ColGenParams, SlowdownColGen

    inst = batch_instance(n, m, seed)
    t0 = time.perf_counter()
    # past ~10^6 flows the warm primal simplex slows down round by round: cold interior point
    # masters with more columns per round (measured on the 1,000-coflow batch)
    big = inst.n_flows > 500_000
    cg = ColGenParams(budget=test_limit, time_limit=test_limit,
                      master="ipm" if big else "simplex", max_new=40_000 if big else 5_000)
    if start == "LP at E_MPS":  # the column-generation test alone, no heuristic bracket
        e_mps = mps(inst).E
        r = SlowdownColGen(inst, params=cg).test(e_mps)
        t = r.summary()
        q.put({"E_star": e_mps if r.feasible else math.nan, "lp_solves": 1,
               "seconds": time.perf_counter() - t0, "E_lo_certified": e_mps,
               "E_hi_realised": r.realised_E, "rounds": t["rounds"],
               "lp_seconds": t["lp_seconds"], "groups": t["groups"],
               "full_columns": t["full_columns"], "master_columns": t["columns"],
               "master_rows": t["rows"], "feasible": r.feasible, "message": r.message,
               "trace": r.trace,
               "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024})
        return
    res = min_slowdown(inst, use_mps=start == "E_MPS", rtol=RTOL, method=method, colgen=cg)
    out = {"E_star": res.E_star, "lp_solves": res.lp_solves, "seconds": time.perf_counter() - t0,
           "E_lo_certified": res.E_lo_certified, "E_hi_realised": res.E_hi_realised,
           "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}
    if res.tests:
        last = res.tests[-1]
        out.update(rounds=sum(t["rounds"] for t in res.tests),
                   lp_seconds=sum(t["lp_seconds"] for t in res.tests),
                   groups=last["groups"], full_columns=last["full_columns"],
                   master_columns=last["columns"], master_rows=last["rows"],
                   undecided=sum(t["feasible"] is None for t in res.tests),
                   uncertified=sum(t["feasible"] is False and not t["certified"]
                                   for t in res.tests))
    q.put(out)


#: the children's address-space cap in bytes (``--mem-cap``; None: none): an LP that grows past
#: it fails with MemoryError, reported as such, instead of swapping the machine to a halt
MEM_CAP: int | None = None


def _capped(target: Any, cap: int | None, args: tuple, q: Any) -> None:
    if cap:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    try:
        target(*args, q)
    except MemoryError:
        q.put({"memory": True})


def _limited(target: Any, args: tuple, limit: float) -> dict[str, Any] | None:
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    p = ctx.Process(target=_capped, args=(target, MEM_CAP, args, q))
    p.start()
    p.join(limit)
    if p.is_alive():
        p.terminate()
        p.join()
        return None
    return q.get() if not q.empty() else None


def bench_sizes(sizes: list[tuple[int, int, str]], limit: float, method: str = "colgen"
                ) -> list[dict[str, Any]]:
    """Part 3: per (coflows, ports, start) one search in a capped child process; ``start``:
    ``"max phi"``, ``"E_MPS"`` (the bisection's lower start) or ``"LP at E_MPS"`` (one
    column-generation test at ``E_MPS`` alone)."""
    rows = []
    for n, m, start in sizes:
        inst = batch_instance(n, m, 0)
        t0 = time.perf_counter()
        e_mps = mps(inst).E
        t_mps = time.perf_counter() - t0
        row: dict[str, Any] = {"coflows": n, "ports": m, "flows": inst.n_flows,
                               "E_mps": e_mps, "mps_seconds": t_mps, "limit_s": limit,
                               "method": method, "start": start}
        got = _limited(_child_bisect, (n, m, 0, method, start, 0.9 * limit), limit)
        if got is not None and got.get("memory"):
            row.update(how=f"over the {MEM_CAP / 2**30:g} GB memory cap")
        elif got is None:
            row.update(how=f"not in {limit:g} s")
        else:
            row.update(got, how="measured", E_star_over_E_mps=got["E_star"] / e_mps,
                       rel_error=(got["E_star"] - e_mps) / got["E_star"])
        rows.append(row)
    return rows


def _table(rows: list[dict[str, Any]], cols: list[tuple[str, str]]) -> str:
    def fmt(v: Any) -> str:
        if isinstance(v, float):
            return f"{v:.4g}"
        return str(v)

    cells = [[fmt(r.get(c, "")) for c, _ in cols] for r in rows]
    widths = [max(len(t), *(len(c[i]) for c in cells)) for i, (_, t) in enumerate(cols)]
    lines = ["  ".join(t.ljust(w) for (_, t), w in zip(cols, widths, strict=True))]
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) for row in cells]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true",
                    help="20 small instances, sizes 50 and 200 only, limit 60 s")
    ap.add_argument("--limit", type=float, default=600.0, help="bisection limit per size, s")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", help="write the results as JSON")
    ap.add_argument("--mem-cap", type=float, default=8.0,
                    help="address-space cap of each LP child, GB (0: none)")
    ap.add_argument("--parts", default="1,2,3", help="which parts to run, e.g. 3")
    ap.add_argument("--method", default="colgen", choices=("colgen", "lp"),
                    help="part 3: how each E is decided (lp: the whole LP-interval, IPM)")
    ap.add_argument("--mps-gap", type=int, default=0, metavar="N",
                    help="only: E_MPS against the LP's E* on small_instance(0..N-1)")
    args = ap.parse_args(argv)
    if args.mps_gap:
        gap = mps_gap(args.mps_gap)
        _print_gap(gap)
        if args.json:
            with open(args.json, "w") as fh:
                json.dump({"mps_gap": gap}, fh, indent=1, default=float)
        return 0
    global MEM_CAP
    MEM_CAP = int(args.mem_cap * 2**30) if args.mem_cap > 0 else None
    parts = {int(x) for x in args.parts.split(",")}
    limit = 60.0 if args.quick and args.limit == 600.0 else args.limit
    out: dict[str, Any] = {}

    if 1 in parts:
        out["order"] = bench_order(args.repeat)
        _print_order(out["order"], args.repeat)
    if 2 in parts:
        n_small = 20 if args.quick else 100
        out["small"] = bench_small(n_small)
        _print_small(out["small"], n_small)
    if 3 in parts:
        starts = ("max phi", "E_MPS", "LP at E_MPS")
        sizes = [(n, m, st) for n, m in ((50, 20), (200, 40)) for st in starts]
        if not args.quick:
            sizes += [(1000, 150, "E_MPS"), (1000, 150, "LP at E_MPS")]
        out["sizes"] = bench_sizes(sizes, limit, args.method)
        _print_sizes(out["sizes"], limit)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(out, fh, indent=1, default=float)
    return 0


def _print_order(rows: list[dict[str, Any]], repeat: int) -> None:
    print("1. CoFair's order, 10,000 coflows x 150 ports "
          f"({rows[0]['flows']:,} flows); best of {repeat}")
    print(_table(rows, [("what", "what"), ("E", "E"), ("seconds", "seconds"),
                        ("same_order_as_cofair_inf", "BSSI = CoFair(inf)")]))
    print()


def _print_small(s: dict[str, Any], n_small: int) -> None:
    print(f"2. MPS vs the exact bisection (LP-interval, from max phi, rtol {RTOL:g}) on "
          f"{n_small} small instances")
    print(_table([s], [("equal_within_rtol", "E*=E_MPS"), ("rel_error_max", "max rel err"),
                       ("rel_error_mean", "mean rel err"),
                       ("mps_below_E_star_minus_rtol", "E_MPS>E*"),
                       ("mps_ms_mean", "MPS ms"), ("bisection_ms_mean", "bisect ms"),
                       ("speedup_median", "speed-up (median)"),
                       ("lp_solves_mean", "LP solves mean"), ("lp_solves_max", "max")]))
    print()


def _print_gap(g: dict[str, Any]) -> None:
    print(f"MPS gap: E_MPS vs the LP's E* on {g['instances']} small instances "
          f"(rtol {g['rtol']:g}), {g['seconds']:.0f} s")
    print(f"E* = E_MPS: {g['equal']}; E* > E_MPS: {g['gap']}; E* < E_MPS: "
          f"{len(g['E_star_below_E_mps'])} {g['E_star_below_E_mps']}; LP undecided: "
          f"{g['undecided']}")
    print("quantiles of E*/E_MPS: " + ", ".join(
        f"q{k} {v:.6g}" for k, v in g["quantiles_E_star_over_E_mps"].items()))
    if g["worst"]:
        print(_table(g["worst"], [("seed", "seed"), ("E_mps", "E_MPS"), ("E_star", "E*"),
                                  ("ratio", "E*/E_MPS")]))
    print()


def _print_sizes(rows: list[dict[str, Any]], limit: float) -> None:
    print(f"3. Larger batches (FB-like synthetic, r = 0); bisection (rtol {RTOL:g}) limit "
          f"{limit:g} s per row, in a child process")
    print(_table(rows, [("coflows", "coflows"), ("ports", "ports"), ("flows", "flows"),
                        ("start", "from"), ("E_mps", "E_MPS"), ("E_star", "E*"),
                        ("E_lo_certified", "E* >= (cert.)"), ("E_hi_realised", "E* <= (valid.)"),
                        ("E_star_over_E_mps", "E*/E_MPS"), ("seconds", "seconds"),
                        ("peak_mb", "peak MB"), ("lp_solves", "tests"), ("rounds", "rounds"),
                        ("groups", "groups"), ("full_columns", "full LP cols"),
                        ("master_columns", "master cols"), ("master_rows", "master rows"),
                        ("feasible", "LP feasible"), ("how", "how")]))


if __name__ == "__main__":
    sys.exit(main())
