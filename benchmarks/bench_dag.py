"""Benchmark G-DM, G-DM-RT, their BF variants and the O(m) LP baseline (dag-coflows spec 6, 7).

1. **Schedulers** (default): every requested scheduler on every requested case, each in a
   fresh process under ``/usr/bin/time -v`` (whole command: wall time and peak RSS), beside the
   algorithm's own time (``coflowopt.run``: plan + streamed validation) and the instance load.
   Cases: ``ggen`` -- ``ggen_fan_in_fan_out`` with ``--jobs`` jobs of ``--coflows`` coflows on
   ``--ports`` ports (targets for 500 x 5 x 150: < 30 s and < 1 GB), mix ``--mix narrow``
   (CoflowSim's two narrow classes, widths 1-5) or ``default`` (all four classes: up to
   150 x 150 flows per coflow, millions of flows); ``fb2010`` -- the whole FB2010 trace as jobs
   (``fb2010_jobs(slots=True)``, 526 coflows on 150 ports; ``shape="fan-in"`` for the rooted
   variants; targets < 60 s and < 1 GB); ``dma`` and ``dma-rt`` (makespan algorithms, no
   releases) run on its ``offline=True`` form.
2. **LP limit** (``--lp``): Tian et al.'s LP (:func:`coflowopt.lp.tian_lp`) on growing numbers
   of coflows (``ggen`` narrow jobs of 5 coflows on 150 ports), the solve time of each, and the
   number of coflows a 10-minute solve reaches, extrapolated by a power law fitted to the two
   largest sizes that solved.

    python benchmarks/bench_dag.py [--cases ggen fb2010] [--schedulers gdm gdm-bf ...]
                                   [--l-i sqrt]   (l_I of gdm-rt, gdm-rt-bf, dma-rt, dma-srt)
    python benchmarks/bench_dag.py --lp [--lp-sizes 25 50 100 200] [--lp-limit 600]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import subprocess
import sys
import time
from typing import Any

FB2010 = "/work/shared/data/fb2010/FB2010-1Hr-150-0.txt"
ROOTED = ("gdm-rt", "gdm-rt-bf", "dma-rt", "dma-srt")
# makespan algorithms refuse releases: they run on the trace's offline form (every job at 0)
OFFLINE = ("dma", "dma-rt", "dma-srt")


def _mix(name: str) -> Any:
    from coflowopt.workloads.dags import DEFAULT_COFLOW_CLASSES, CoflowClassMix

    return None if name == "default" else CoflowClassMix(DEFAULT_COFLOW_CLASSES[:2],
                                                         (0.41, 0.29))


def _instance(case: str, scheduler: str, a: argparse.Namespace) -> Any:
    from coflowopt.workloads import dags

    if case == "ggen":
        if scheduler in ROOTED:
            return dags.rooted_trees(a.jobs, ports=a.ports, nodes=a.coflows, seed=a.seed,
                                     mix=_mix(a.mix), weight="uniform")
        return dags.ggen_fan_in_fan_out(a.jobs, ports=a.ports, nodes=a.coflows, seed=a.seed,
                                        mix=_mix(a.mix), weight="uniform")
    if case == "fb2010":
        shape = "fan-in" if scheduler in ROOTED else "dag"
        return dags.fb2010_jobs(a.trace, slots=True, seed=a.seed, shape=shape,
                                offline=scheduler in OFFLINE)
    raise SystemExit(f"bench_dag: unknown case {case!r}")


def run_one(case: str, scheduler: str, a: argparse.Namespace) -> dict[str, Any]:
    """One scheduler on one case, in this process; a JSON row on stdout."""
    import coflowopt
    from coflowopt.metrics import weighted_jct

    t0 = time.perf_counter()
    inst = _instance(case, scheduler, a)
    t1 = time.perf_counter()
    params: dict[str, Any] = {}
    if scheduler == "om-lp":
        params["time_limit"] = a.lp_limit
    if a.rule and scheduler != "om-lp":
        params["rule"] = a.rule
    run_params: Any = params
    if a.l_i is not None and scheduler in ROOTED:
        l_i: int | str = int(a.l_i) if a.l_i.isdigit() else a.l_i
        if scheduler.startswith("gdm") and isinstance(l_i, str):
            # GDMRTParams types l_I as an int; its plan passes the value on to DMA-SRT, which
            # takes "sqrt": set on a checked object (the run service takes it as is)
            from coflowopt.schedulers.dag.gdm import GDMRTParams

            run_params = GDMRTParams(**params)
            object.__setattr__(run_params, "l_I", l_i)
        else:
            params["l_I"] = l_i
    res = coflowopt.run(inst, scheduler, seed=a.seed, params=run_params)
    t2 = time.perf_counter()
    row = {"case": case, "scheduler": scheduler, "jobs": inst.n_jobs, "coflows": inst.n_coflows,
           "flows": inst.n_flows, "ports": inst.ports, "load_s": t1 - t0, "algo_s": t2 - t1,
           "weighted_jct": weighted_jct(res.valid),
           "makespan_slots": res.valid.meta.get("makespan_slots"),
           "streamed": res.streamed, "l_I": a.l_i if scheduler in ROOTED else None}
    print("ROW " + json.dumps(row), flush=True)
    return row


def _time_v(stderr: str) -> tuple[float | None, float | None]:
    wall = rss = None
    m = re.search(r"Elapsed \(wall clock\) time.*: (?:(\d+):)?(\d+):([\d.]+)", stderr)
    if m:
        wall = int(m.group(1) or 0) * 3600 + int(m.group(2)) * 60 + float(m.group(3))
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", stderr)
    if m:
        rss = int(m.group(1)) / 1024.0
    return wall, rss


def bench_schedulers(a: argparse.Namespace) -> list[dict[str, Any]]:
    rows = []
    print(f"{'case':7s} {'scheduler':10s} {'jobs':>5s} {'coflows':>7s} {'flows':>8s} "
          f"{'load s':>7s} {'algo s':>8s} {'wall s':>8s} {'RSS MB':>8s} {'weighted JCT':>14s}",
          flush=True)
    for case in a.cases:
        for sched in a.schedulers:
            cmd = ["/usr/bin/time", "-v", sys.executable, os.path.abspath(__file__), "--one",
                   case, sched, "--jobs", str(a.jobs), "--coflows", str(a.coflows), "--ports",
                   str(a.ports), "--mix", a.mix, "--seed", str(a.seed), "--trace", a.trace,
                   "--lp-limit", str(a.lp_limit)] + (["--rule", a.rule] if a.rule else []) \
                + (["--l-i", a.l_i] if a.l_i else [])
            try:
                p = subprocess.run(cmd, capture_output=True, text=True, timeout=a.timeout)
                out, err, rc = p.stdout, p.stderr, p.returncode
            except subprocess.TimeoutExpired as exc:
                out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else exc.stdout or ""
                err, rc = f"timed out after {a.timeout} s", -1
            wall, rss = _time_v(err)
            found = [ln for ln in out.splitlines() if ln.startswith("ROW ")]
            if rc != 0 or not found:
                last = (err.strip().splitlines() or ["?"])
                msg = next((ln for ln in reversed(last) if "rror" in ln), last[-1])
                print(f"{case:7s} {sched:10s} failed (rc {rc}): {msg.strip()[:150]}",
                      flush=True)
                rows.append({"case": case, "scheduler": sched, "error": msg.strip(),
                             "wall_s": wall, "rss_mb": rss})
                continue
            row = json.loads(found[-1][4:])
            row.update(wall_s=wall, rss_mb=rss)
            rows.append(row)
            print(f"{case:7s} {sched:10s} {row['jobs']:5d} {row['coflows']:7d} "
                  f"{row['flows']:8d} {row['load_s']:7.1f} {row['algo_s']:8.1f} "
                  f"{wall or float('nan'):8.1f} {rss or float('nan'):8.0f} "
                  f"{row['weighted_jct']:14.6g}", flush=True)
    return rows


def bench_lp(a: argparse.Namespace) -> list[dict[str, Any]]:
    from coflowopt.lp import tian_lp
    from coflowopt.lp.model import SolveParams
    from coflowopt.workloads.dags import ggen_fan_in_fan_out

    rows = []
    print(f"{'coflows':>7s} {'ordering vars':>13s} {'status':>10s} {'solve s':>8s}", flush=True)
    for k in a.lp_sizes:
        inst = ggen_fan_in_fan_out(max(1, k // a.coflows), ports=a.ports, nodes=a.coflows,
                                   seed=a.seed, mix=_mix(a.mix), weight="uniform")
        t0 = time.perf_counter()
        lp = tian_lp(inst, SolveParams(time_limit=a.lp_limit))
        dt = time.perf_counter() - t0
        C = inst.n_coflows
        rows.append({"coflows": C, "vars": C * (C - 1) // 2, "status": lp.result.status.value,
                     "seconds": dt})
        print(f"{C:7d} {C * (C - 1) // 2:13d} {lp.result.status.value:>10s} {dt:8.1f}",
              flush=True)
        if not lp.optimal:
            break
    ok = [r for r in rows if r["status"] == "optimal" and r["seconds"] > 0]
    if len(ok) >= 2:
        (c1, t1), (c2, t2) = [(r["coflows"], r["seconds"]) for r in ok[-2:]]
        b = math.log(t2 / t1) / math.log(c2 / c1)
        reach = c2 * (a.lp_limit / t2) ** (1.0 / b)
        print(f"fit t ~ C^{b:.2f} on C = {c1}, {c2}: a {a.lp_limit:g} s solve would reach "
              f"about {reach:.0f} coflows (extrapolated)", flush=True)
        rows.append({"fit_exponent": b, "coflows_in_limit": reach})
    failed = [r for r in rows if r.get("status") not in (None, "optimal")]
    if failed and ok:
        print(f"measured: {ok[-1]['coflows']} coflows solve in {ok[-1]['seconds']:.1f} s, "
              f"{failed[0]['coflows']} do not within {a.lp_limit:g} s "
              f"({failed[0]['status']}): the limit lies between them", flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", nargs="+", default=["ggen", "fb2010"])
    ap.add_argument("--schedulers", nargs="+",
                    default=["gdm", "gdm-bf", "gdm-rt", "gdm-rt-bf", "om-lp"])
    ap.add_argument("--jobs", type=int, default=500)
    ap.add_argument("--coflows", type=int, default=5)
    ap.add_argument("--ports", type=int, default=150)
    ap.add_argument("--mix", choices=("narrow", "default"), default="narrow")
    ap.add_argument("--rule", choices=("auto", "hk", "maxweight"), default=None,
                    help="BNA rule of the G-DM family (default: the scheduler's)")
    ap.add_argument("--l-i", default=None,
                    help="DMA-SRT's interval length l_I of the rooted schedulers (an integer "
                         "or 'sqrt'; default: the scheduler's, 1)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--trace", default=FB2010)
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds per command")
    ap.add_argument("--lp", action="store_true", help="measure the Tian LP's size limit")
    ap.add_argument("--lp-sizes", type=int, nargs="+", default=[25, 50, 100, 150, 200])
    ap.add_argument("--lp-limit", type=float, default=600.0, help="LP time limit, seconds")
    ap.add_argument("--one", nargs=2, metavar=("CASE", "SCHEDULER"), help=argparse.SUPPRESS)
    ap.add_argument("--json", help="write the rows here")
    a = ap.parse_args()
    if a.one:
        run_one(a.one[0], a.one[1], a)
        return
    rows = bench_lp(a) if a.lp else bench_schedulers(a)
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(rows, fh, indent=1)


if __name__ == "__main__":
    main()
