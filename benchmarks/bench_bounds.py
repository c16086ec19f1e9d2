"""Certified lower bounds at trace scale, and the optimality gap of the heuristics on FB2010.

Parts (``--parts``, default ``fb2010``):

- ``fb2010``: for FB2010 with its releases (``online``) and FB2010 batch (every release 0):
  every bound of :func:`coflowopt.bounds.all_bounds` with the interval-indexed LP (after Qiu,
  Stein and Zhong, SPAA 2015) solved by PDLP and certified from its dual vector, each form in a
  child process under an address-space cap (``--mem-cap`` GB, default 4) with its wall seconds
  and peak resident memory; then Sincronia, Varys and the other ``--schedulers`` through the run
  service (validated), their total completion time ``sum_k C_k`` (the trace's weights are 1) and
  its ratio to the best certified bound: ``measured / bound >= measured / OPT``, so the ratio
  bounds each heuristic's optimality gap from above;
- ``estar``: the slowdown-LP bisection for ``E*`` (``coflowopt.lp.min_slowdown``) with PDLP on
  the FB-like batches of ``bench_cofair.py`` (200 x 40 and 1,000 x 150), beside MPS's ``E``;
- ``omlp``, ``approximate``: the two LP-based schedulers on FB2010 online under the same cap.

Each child has ``--limit`` seconds (default 300).  Output: one JSON line per measurement and a
Markdown table (``--md FILE``).  Example::

    python benchmarks/bench_bounds.py --parts fb2010 --eps 0.05 --md /tmp/bounds.md
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing as mp
import resource
import sys
import time
from pathlib import Path
from typing import Any

TRACE = "/work/shared/data/fb2010/FB2010-1Hr-150-0.txt"


def _instance(trace: str, form: str) -> Any:
    from coflowopt.workloads.trace import read_trace, resolve_trace

    return read_trace(resolve_trace(trace), batch=form == "batch")


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # KiB on Linux


def child_bounds(trace: str, form: str, eps: float, tolerance: float,
                 limit: float) -> dict[str, Any]:
    from coflowopt.bounds import all_bounds
    from coflowopt.lp import SolveParams

    inst = _instance(trace, form)
    t0 = time.perf_counter()
    sp = SolveParams(method="pdlp", tolerance=tolerance, presolve=False, time_limit=limit)
    rows = all_bounds(inst, lp=True, eps=eps, solve_params=sp)
    return {"seconds": time.perf_counter() - t0, "peak_mb": _peak_mb(),
            "n_coflows": inst.n_coflows, "sum_release": float(inst.release.sum()),
            "bounds": [{"objective": b.objective, "name": b.name, "value": b.value,
                        "seconds": b.seconds, "certified": b.certified, "detail": b.detail}
                       for b in rows]}


def child_schedule(trace: str, form: str, name: str, params: dict[str, Any]) -> dict[str, Any]:
    import numpy as np

    from coflowopt.service import run

    inst = _instance(trace, form)
    t0 = time.perf_counter()
    res = run(inst, name, params=params or None)
    v = res.valid
    total = float(np.dot(res.instance.coflow_weight, v.coflow_completion))
    return {"seconds": time.perf_counter() - t0, "peak_mb": _peak_mb(), "sum_completion": total,
            "avg_cct": float(np.mean(v.coflow_completion - res.instance.release))}


def child_estar(n: int, m: int, tolerance: float) -> dict[str, Any]:
    from bench_cofair import batch_instance

    from coflowopt.lp import SolveParams, min_slowdown, mps

    inst = batch_instance(n, m, 0)
    t0 = time.perf_counter()
    e_mps = mps(inst).E
    t_mps = time.perf_counter() - t0
    t0 = time.perf_counter()
    res = min_slowdown(inst, use_mps=False, rtol=1e-3,
                       params=SolveParams(method="pdlp", tolerance=tolerance, presolve=False))
    return {"flows": inst.n_flows, "E_mps": e_mps, "mps_seconds": t_mps, "E_star": res.E_star,
            "lp_solves": res.lp_solves, "seconds": time.perf_counter() - t0,
            "peak_mb": _peak_mb()}


def _run_child(target: Any, args: tuple, cap_gb: float, q: Any) -> None:
    if cap_gb > 0:
        cap = int(cap_gb * 2**30)
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    try:
        q.put(target(*args))
    except MemoryError:
        q.put({"error": f"MemoryError: over the {cap_gb:g} GB address-space cap",
               "peak_mb": _peak_mb()})
    except Exception as exc:  # a failed measurement is a result
        q.put({"error": f"{type(exc).__name__}: {exc}", "peak_mb": _peak_mb()})


def measure(target: Any, args: tuple, limit: float, cap_gb: float) -> dict[str, Any]:
    """``target(*args)`` in a fresh spawned process, stopped after ``limit`` seconds."""
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    t0 = time.perf_counter()
    p = ctx.Process(target=_run_child, args=(target, args, cap_gb, q))
    p.start()
    p.join(limit)
    wall = time.perf_counter() - t0
    if p.is_alive():
        p.terminate()
        p.join()
        return {"error": f"not finished in {limit:g} s", "wall": wall}
    out = q.get() if not q.empty() else {"error": f"child exited with code {p.exitcode}"}
    out["wall"] = wall
    return out


def part_fb2010(a: argparse.Namespace, emit: Any) -> list[str]:
    md = []
    for form in a.forms:
        b = measure(child_bounds, (a.trace, form, a.eps, a.tolerance, a.limit), a.limit + 60,
                    a.mem_cap)
        emit({"part": "fb2010", "form": form, "what": "bounds", **b})
        best = -math.inf
        md += [f"**FB2010 {form}** (eps {a.eps}, PDLP tolerance {a.tolerance:g})", "",
               "| bound (sum of completion times) | value (ms) | seconds | certified |",
               "|---|---|---|---|"]
        for r in b.get("bounds", []):
            if r["objective"] != "sum_completion":
                continue
            if r["certified"]:
                best = max(best, r["value"])
            md.append(f"| {r['name']} | {r['value']:,.0f} | {r['seconds']:.2f} | "
                      f"{'yes' if r['certified'] else 'no'} |")
        sum_r = b.get("sum_release", math.nan)
        md += ["", f"bounds child: {b.get('wall', math.nan):.1f} s wall, peak "
               f"{b.get('peak_mb', math.nan):,.0f} MB" + (f"; {b['error']}" if 'error' in b
                                                          else "")
               + f"; best bound on the sum of CCTs (sum C - sum r): {best - sum_r:,.0f} ms", ""]
        md += ["| scheduler | sum C (ms) | avg CCT (ms) | sum C / bound | sum CCT / bound | "
               "seconds | peak MB |", "|---|---|---|---|---|---|---|"]
        done = []
        for name in a.schedulers:
            s = measure(child_schedule, (a.trace, form, name, {}), a.limit, 0)
            emit({"part": "fb2010", "form": form, "what": name, **s})
            if "error" in s:
                md.append(f"| {name} | {s['error']} | | | | {s['wall']:.1f} | |")
                continue
            done.append((s["sum_completion"], name))
            md.append(f"| {name} | {s['sum_completion']:,.0f} | {s['avg_cct']:,.1f} | "
                      f"{s['sum_completion'] / best:.4f} | "
                      f"{(s['sum_completion'] - sum_r) / (best - sum_r):.4f} | "
                      f"{s['seconds']:.1f} | {s['peak_mb']:,.0f} |")
        if done:
            v, who = min(done)
            md.append(f"| best schedule ({who}) | {v:,.0f} | | {v / best:.4f} | "
                      f"{(v - sum_r) / (best - sum_r):.4f} | | |")
        md.append("")
    return md


def part_estar(a: argparse.Namespace, emit: Any) -> list[str]:
    md = ["| coflows | ports | flows | E_MPS | E* (PDLP bisection) | (E* - E_MPS)/E* | LP solves | "
          "seconds | peak MB |", "|---|---|---|---|---|---|---|---|---|"]
    for n, m in ((200, 40), (1000, 150)):
        r = measure(child_estar, (n, m, a.tolerance), a.limit, a.mem_cap)
        emit({"part": "estar", "coflows": n, "ports": m, **r})
        if "error" in r:
            md.append(f"| {n} | {m} | | | {r['error']} | | | {r['wall']:.1f} | |")
        else:
            md.append(f"| {n} | {m} | {r['flows']:,} | {r['E_mps']:.4f} | {r['E_star']:.4f} | "
                      f"{(r['E_star'] - r['E_mps']) / r['E_star']:.2e} | {r['lp_solves']} | "
                      f"{r['seconds']:.1f} | {r['peak_mb']:,.0f} |")
    return [*md, ""]


def part_scheduler(a: argparse.Namespace, emit: Any, name: str) -> list[str]:
    # max_nonzeros raised so that the LP is built and its real memory measured (by default
    # both refuse FB2010 from the estimate alone)
    r = measure(child_schedule, (a.trace, "online", name, {"max_nonzeros": 1e9}), a.limit,
                a.mem_cap)
    emit({"part": name, "form": "online", **r})
    if "error" in r:
        return [f"{name} on FB2010 online: {r['error']} ({r['wall']:.1f} s wall, peak "
                f"{r.get('peak_mb', math.nan):,.0f} MB)", ""]
    return [f"{name} on FB2010 online: sum C {r['sum_completion']:,.0f} ms, avg CCT "
            f"{r['avg_cct']:,.1f} ms, {r['seconds']:.1f} s, peak {r['peak_mb']:,.0f} MB", ""]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--parts", nargs="+", default=["fb2010"],
                    choices=("fb2010", "estar", "omlp", "approximate"))
    ap.add_argument("--forms", nargs="+", default=["online", "batch"],
                    choices=("online", "batch"))
    ap.add_argument("--schedulers", nargs="+", default=["sincronia", "varys"])
    ap.add_argument("--eps", type=float, default=0.05, help="interval grid ratio 1 + eps")
    ap.add_argument("--tolerance", type=float, default=1e-4, help="PDLP tolerance")
    ap.add_argument("--limit", type=float, default=300.0, help="seconds per child")
    ap.add_argument("--mem-cap", type=float, default=4.0, help="GB address space per child")
    ap.add_argument("--trace", default=TRACE)
    ap.add_argument("--md", help="write the Markdown tables here")
    a = ap.parse_args(argv)

    def emit(row: dict[str, Any]) -> None:
        print(json.dumps(row, default=str), flush=True)

    md: list[str] = []
    for part in a.parts:
        if part == "fb2010":
            md += part_fb2010(a, emit)
        elif part == "estar":
            md += part_estar(a, emit)
        else:
            md += part_scheduler(a, emit, "om-lp" if part == "omlp" else "approximate")
    text = "\n".join(md)
    if a.md:
        Path(a.md).write_text(text + "\n")
    print(text, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
