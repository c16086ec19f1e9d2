"""The fair family's references and baselines: Utopia's speed on FB2010 and the size limit of
Approximate's ordering LP.

1. **Utopia on FB2010** (target: the whole command under 10 s and 400 MB): ``coflowopt run
   --trace FB2010 -s utopia`` in a fresh process under ``/usr/bin/time -v`` (wall seconds,
   peak RSS), after one warm-up run so the numba kernels are cached, ``--repeat`` times; and
   the fair emulation alone in this process (:func:`fair_emulation`, best of 5).
2. **Approximate's LP limit**: the ordering LP (:func:`coflowopt.lp.ordering_lp`, ``N (N-1)/2``
   pair columns, ``2m N`` rows of ``N`` entries) on the first ``N`` FB2010 coflows, each size
   in a fresh process (build + solve wall seconds, solve seconds, peak RSS), in two modes:
   ``online`` (the trace's releases) and ``batch`` (every release 0, the factor-4 setting);
   a mode stops at the first size that does not solve within ``--lp-limit`` seconds.  The
   largest ``N`` solvable in ``--budget`` seconds (default 600, "10 minutes") is extrapolated
   from a power law ``t = a N^b`` fitted to the two largest solved sizes.

    python benchmarks/bench_fair_family.py [--trace PATH] [--repeat 3] [--sizes 50 100 200]
        [--modes online batch] [--lp-limit 600] [--lp-solver ipm] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import resource
import subprocess
import sys
import time
from typing import Any

TIME = "/usr/bin/time"


def _timed(cmd: list[str]) -> tuple[float, float]:
    """(wall s, peak RSS MB) of ``cmd`` in a fresh process."""
    out = subprocess.run([TIME, "-v", *cmd], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONHASHSEED": "0"})
    wall = re.search(r"Elapsed \(wall clock\) time.*: (?:(\d+):)?(\d+):([\d.]+)", out.stderr)
    assert wall is not None
    h, m, sec = wall.groups()
    seconds = (int(h) * 3600 if h else 0) + int(m) * 60 + float(sec)
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", out.stderr)
    assert rss is not None
    return seconds, int(rss.group(1)) / 1024


def bench_utopia(trace: str, repeat: int) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "coflowopt.cli", "run", "--trace", trace, "-s", "utopia",
           "--no-progress"]
    _timed(cmd)  # warm-up: numba caches
    runs = [_timed(cmd) for _ in range(repeat)]
    from coflowopt.schedulers.fair.utopia import fair_emulation
    from coflowopt.workloads import read_trace

    inst = read_trace(trace)
    fair_emulation(inst)
    best = math.inf
    for _ in range(5):
        t0 = time.perf_counter()
        em = fair_emulation(inst)
        best = min(best, time.perf_counter() - t0)
    return {"command": " ".join(cmd[1:]), "wall_s": [r[0] for r in runs],
            "peak_rss_mb": [r[1] for r in runs], "emulation_s": best,
            "emulation_events": em.events, "coflows": inst.n_coflows, "flows": inst.n_flows}


def _lp_one(trace: str, n: int, mode: str, limit: float, solver: str) -> dict[str, Any]:
    """One LP solve on the first ``n`` coflows (run in its own process)."""
    from coflowopt import Instance
    from coflowopt.lp import SolveParams, ordering_lp
    from coflowopt.workloads import read_trace

    full = read_trace(trace)
    keep = full.flow_coflow < n
    rel = full.coflow_release[:n] if mode == "online" else None
    inst = Instance.from_arrays(full.fabric, full.flow_src[keep], full.flow_dst[keep],
                                full.flow_volume[keep], full.flow_coflow[keep], n_coflows=n,
                                coflow_release=rel, time_unit=full.time_unit)
    opts = None if solver == "choose" else {"solver": solver}
    t0 = time.perf_counter()
    lp = ordering_lp(inst, SolveParams(time_limit=limit, options=opts))
    wall = time.perf_counter() - t0
    return {"n": n, "mode": mode, "status": lp.result.status.value, "wall_s": wall,
            "solve_s": lp.result.runtime, "value": lp.value,
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def bench_lp(trace: str, sizes: list[int], modes: list[str], limit: float, solver: str,
             budget: float) -> dict[str, Any]:
    out: dict[str, Any] = {"solver": solver, "limit_s": limit, "budget_s": budget, "rows": []}
    for mode in modes:
        solved = []
        for n in sizes:
            cmd = [sys.executable, __file__, "--_lp-one", str(n), mode, str(limit), solver,
                   "--trace", trace]
            try:
                res = subprocess.run(cmd, capture_output=True, text=True,
                                     timeout=limit * 2 + 120)
                row = json.loads(res.stdout.strip().splitlines()[-1])
            except (subprocess.TimeoutExpired, IndexError, json.JSONDecodeError) as exc:
                row = {"n": n, "mode": mode, "status": f"failed ({type(exc).__name__})"}
            out["rows"].append(row)
            print(json.dumps(row), flush=True)
            if row.get("status") != "optimal":
                break
            solved.append(row)
        if len(solved) >= 2:
            (n1, t1), (n2, t2) = [(r["n"], r["wall_s"]) for r in solved[-2:]]
            b = math.log(t2 / t1) / math.log(n2 / n1)
            n_budget = n2 * (budget / t2) ** (1 / b)
            out[f"{mode}_exponent"] = b
            out[f"{mode}_n_in_budget"] = n_budget
            print(f"{mode}: t ~ N^{b:.2f}; about {n_budget:.0f} coflows in {budget:g} s",
                  flush=True)
    return out


def bench_list(trace: str) -> dict[str, Any]:
    import numpy as np

    from coflowopt.schedulers.fair.approximate import list_schedule
    from coflowopt.workloads import read_trace

    inst = read_trace(trace)
    order = np.argsort(inst.release + inst.isolation_time, kind="stable")
    list_schedule(inst, order)  # compile or load the kernel
    best = math.inf
    for _ in range(3):
        t0 = time.perf_counter()
        s = list_schedule(inst, order)
        best = min(best, time.perf_counter() - t0)
    return {"flows": inst.n_flows, "segments": int(s.n_segments), "seconds": best}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trace", default=None, help="FB2010 trace (default: found one)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--sizes", type=int, nargs="+", default=[50, 100, 200, 300])
    ap.add_argument("--modes", nargs="+", default=["online", "batch"],
                    choices=["online", "batch"])
    ap.add_argument("--lp-limit", type=float, default=600.0)
    ap.add_argument("--budget", type=float, default=600.0)
    ap.add_argument("--lp-solver", default="ipm", choices=["ipm", "simplex", "choose"])
    ap.add_argument("--skip-utopia", action="store_true")
    ap.add_argument("--skip-lp", action="store_true")
    ap.add_argument("--json", default=None)
    ap.add_argument("--_lp-one", nargs=4, default=None, help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    from coflowopt.workloads import require_fb2010

    trace = a.trace or str(require_fb2010())
    if a._lp_one:
        n, mode, limit, solver = a._lp_one
        print(json.dumps(_lp_one(trace, int(n), mode, float(limit), solver)))
        return 0
    report: dict[str, Any] = {}
    if not a.skip_utopia:
        report["utopia"] = bench_utopia(trace, a.repeat)
        u = report["utopia"]
        print(f"utopia whole command: wall {min(u['wall_s']):.2f}-{max(u['wall_s']):.2f} s, "
              f"peak RSS {max(u['peak_rss_mb']):.0f} MB; emulation {u['emulation_s']*1e3:.1f} "
              f"ms ({u['emulation_events']} events)", flush=True)
    if not a.skip_lp:
        report["approximate_list"] = bench_list(trace)
        print(f"approximate list scheduling: {report['approximate_list']['seconds']:.2f} s "
              f"for {report['approximate_list']['flows']} flows", flush=True)
        report["approximate_lp"] = bench_lp(trace, a.sizes, a.modes, a.lp_limit, a.lp_solver,
                                             a.budget)
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(report, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
