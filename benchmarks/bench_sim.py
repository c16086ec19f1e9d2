"""Benchmark: every single-stage scheduler on the full FB2010 trace, and time scaling.

For each scheduler, in its own subprocess (so its peak memory is its own) and after a warm-up
run that compiles the kernels: CPU seconds (one core) of simulating *and validating* the trace
with :func:`coflowopt.run` (the kernel hands each rate change to the
streaming validator; no schedule is stored), resident memory of the process before and at
its peak, the number of rate changes, and the average and percentile CCT (ms) next to the
published figures (Varys 28,528 ms, Aalo 46,098 ms, A-SEBF 30,800 ms: CoflowSim's numbers,
whose semantics differ; see BENCHMARKS.md).

``--stored``: also the stored path (the scheduler returns its ``Schedule``, then
``validate``): simulation and validation CPU, peak memory of each, and the segment count.
Per-flow fair sharing stores 187 million segments there (13.5 GB, 20.7 GB validating).

Scaling: the trace replicated k = 1, 2, 4 times (copy i shifted by i x 3,629,235 ms in time and
by i x 150 in port index), CPU seconds against flow count, streamed.

    python benchmarks/bench_sim.py [--schedulers a,b] [--scaling a,b] [--trace PATH]
                                   [--stored a,b] [--cdf docs/fb2010_cct_cdf.png]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

CHILD = r"""
import json, resource, sys, time
import numpy as np
import coflowopt as co
from coflowopt.workloads import read_trace
name, path, copies = sys.argv[1], sys.argv[2], int(sys.argv[3])
cct_out = sys.argv[4] if len(sys.argv) > 4 else ""
inst = read_trace(path)
if copies > 1:
    F, m, span = inst.n_flows, inst.ports, float(inst.release.max())
    k = np.repeat(np.arange(copies), F)
    src = np.tile(inst.flow_src, copies) + k * m
    dst = np.tile(inst.flow_dst, copies) + k * m
    cof = np.tile(inst.flow_coflow, copies) + k * inst.n_coflows
    rel = np.concatenate([inst.release + i * span for i in range(copies)])
    inst = co.Instance.from_arrays(co.Fabric.uniform(m * copies, inst.fabric.capacity_in[0]),
                                   src, dst, np.tile(inst.flow_volume, copies), cof,
                                   coflow_release=rel, time_unit="ms")
mode = sys.argv[5] if len(sys.argv) > 5 else "stream"
algo = co.schedulers.get(name)
small = co.build_instance(co.Fabric.uniform(2, 0.125), coflows=[[(0, 1, 4.0), (1, 0, 2.0)]],
                          time_unit="ms")
# compile (load) the kernels outside the measurement
co.run(small, name) if mode == "stream" else algo(small)
rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
out = {"flows": inst.n_flows, "rss_base_mb": rss0}
if mode == "stream":
    t0 = time.process_time()
    valid = co.run(inst, name).valid
    out["cpu"] = time.process_time() - t0
    out["changes"] = valid.meta.get("rate_changes")
else:
    t0 = time.process_time()
    sched = algo(inst)
    out["cpu"] = time.process_time() - t0
    out["rss_sim_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out["segments"] = sched.n_segments
    t0 = time.process_time()
    valid = co.validate(inst, sched)
    out["validate"] = time.process_time() - t0
cct = co.metrics.cct(valid)
if cct_out:
    np.save(cct_out, cct)
out.update({"rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "avg": float(cct.mean()), "p50": float(np.percentile(cct, 50)),
            "p90": float(np.percentile(cct, 90)), "p99": float(np.percentile(cct, 99)),
            "under_1e6": float((cct < 1e6).mean()),
            "events": valid.meta.get("events"), "engine": valid.meta.get("engine")})
print(json.dumps(out))
"""

PUBLISHED = {"varys": 28528.0, "aalo": 46098.0, "a-sebf": 30800.0}


def run(name: str, path: str, copies: int = 1, cct_out: str = "", mode: str = "stream") -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, name, path, str(copies), cct_out, mode],
                         capture_output=True, text=True)
    if out.returncode != 0:
        return {"error": out.stderr.strip().splitlines()[-1] if out.stderr else "failed"}
    return json.loads(out.stdout)


def plot_cdf(ccts: dict[str, np.ndarray], path: str) -> None:
    """Empirical CDF of the coflow completion times, one step curve per scheduler."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.2))
    for name, c in ccts.items():
        x = np.sort(c)
        ax.step(x, np.arange(1, x.size + 1) / x.size, where="post", label=name)
    ax.set_xscale("log")
    ax.set_xlabel("CCT (ms)")
    ax.set_ylabel("fraction of coflows")
    ax.set_title("FB2010, 526 coflows, exact fluid simulation")
    ax.legend(ncol=3, fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> None:
    from coflowopt.workloads import find_fb2010

    ap = argparse.ArgumentParser()
    ap.add_argument("--trace", default=None)
    ap.add_argument("--schedulers", default="varys,aalo,a-sebf,sincronia,fifo,scf,ncf,lcf,fair")
    ap.add_argument("--scaling", default="sincronia,varys,aalo,fifo,fair")
    ap.add_argument("--stored", default="", help="schedulers to run on the stored path too")
    ap.add_argument("--cdf", default="", help="write a CDF plot of the CCTs to this file")
    args = ap.parse_args()
    tmp = tempfile.TemporaryDirectory()
    ccts: dict[str, np.ndarray] = {}
    path = str(args.trace or find_fb2010() or sys.exit("FB2010 trace not found"))
    print("| scheduler | engine | CPU s (simulate + validate) | RSS before MB | peak RSS MB | "
          "rate changes | events | avg CCT ms | published | p50 | p90 | p99 | < 10^6 ms |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name in [s for s in args.schedulers.split(",") if s]:
        npy = str(Path(tmp.name) / f"{name}.npy") if args.cdf else ""
        r = run(name, path, cct_out=npy)
        if "error" in r:
            print(f"| {name} | | error: {r['error']} | | | | | | | | | | |", flush=True)
            continue
        pub = PUBLISHED.get(name)
        print(f"| {name} | {r['engine']} | {r['cpu']:.1f} | {r['rss_base_mb']:.0f} | "
              f"{r['rss_mb']:.0f} | {r['changes'] / 1e6:.1f} M | {r['events']:,} | "
              f"{r['avg']:,.0f} | {f'{pub:,.0f}' if pub else '-'} | {r['p50']:,.0f} | "
              f"{r['p90']:,.0f} | {r['p99']:,.0f} | {100 * r['under_1e6']:.2f}% |", flush=True)
        if npy:
            ccts[name] = np.load(npy)
    if args.cdf and ccts:
        plot_cdf(ccts, args.cdf)
    if args.stored:
        print("\n| scheduler (stored) | CPU s simulate | CPU s validate | peak RSS simulate MB | "
              "peak RSS with validation MB | segments | avg CCT ms |")
        print("|---|---|---|---|---|---|---|")
        for name in [s for s in args.stored.split(",") if s]:
            r = run(name, path, mode="store")
            if "error" in r:
                print(f"| {name} | error: {r['error']} | | | | | |", flush=True)
                continue
            print(f"| {name} | {r['cpu']:.1f} | {r['validate']:.1f} | {r['rss_sim_mb']:.0f} | "
                  f"{r['rss_mb']:.0f} | {r['segments'] / 1e6:.1f} M | {r['avg']:,.0f} |",
                  flush=True)
    if args.scaling:
        print("\n| scheduler | copies | flows | CPU s | CPU s per 10^6 flows | ratio to 1x | "
              "peak RSS MB |")
        print("|---|---|---|---|---|---|---|")
        for name in [s for s in args.scaling.split(",") if s]:
            base = None
            for k in (1, 2, 4):
                r = run(name, path, k)
                if "error" in r:
                    print(f"| {name} | {k} | | error: {r['error']} | | |", flush=True)
                    break
                base = base or r["cpu"]
                print(f"| {name} | {k} | {r['flows']:,} | {r['cpu']:.1f} | "
                      f"{r['cpu'] / r['flows'] * 1e6:.1f} | {r['cpu'] / base:.2f} | "
                      f"{r['rss_mb']:.0f} |",
                      flush=True)

if __name__ == "__main__":
    main()
