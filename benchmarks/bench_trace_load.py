"""Benchmark: load the full FB2010 trace (526 coflows, 706,397 flows) into an Instance.

Reports wall time (best of N) and peak memory of ``read_trace``, next to a reference measured
in the same run: a straightforward pure-Python reader that builds one Python tuple per flow
(the shape of most simulator readers).  Each measurement runs in a fresh subprocess so peak RSS
is its own.

    python benchmarks/bench_trace_load.py [TRACE] [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

CHILD = r"""
import json, resource, sys, time, tracemalloc
path, which, repeat = sys.argv[1], sys.argv[2], int(sys.argv[3])
import numpy as np  # imported before the baseline RSS is taken
from coflowopt.workloads import read_trace

def naive(path):
    flows = []
    with open(path) as fh:
        m, n = map(int, fh.readline().split())
        for line in fh:
            tok = line.split()
            cid, t, nm = int(tok[0]), int(tok[1]), int(tok[2])
            maps = [int(x) for x in tok[3:3 + nm]]
            for item in tok[4 + nm:]:
                r, mb = item.split(":")
                for s in maps:
                    flows.append((cid, t, s, int(r), float(mb) / nm))
    return flows

fn = read_trace if which == "coflowopt" else naive
rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
best = float("inf")
for _ in range(repeat):
    t0 = time.perf_counter()
    obj = fn(path)
    if which == "coflowopt":
        obj.effective_size  # include the first derived quantity a scheduler needs
    best = min(best, time.perf_counter() - t0)
    del obj
rss1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
tracemalloc.start()
obj = fn(path)
peak = tracemalloc.get_traced_memory()[1]
print(json.dumps({"seconds": best, "peak_traced_mb": peak / 2**20,
                  "rss_growth_mb": (rss1 - rss0) / 1024, "rss_mb": rss1 / 1024}))
"""


def measure(path: str, which: str, repeat: int) -> dict[str, float]:
    out = subprocess.run([sys.executable, "-c", CHILD, path, which, str(repeat)],
                         check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def main() -> None:
    from coflowopt.workloads import find_fb2010

    ap = argparse.ArgumentParser()
    ap.add_argument("trace", nargs="?", default=None)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    path = args.trace or find_fb2010()
    if path is None:
        sys.exit("FB2010 trace not found: pass its path or set COFLOWOPT_FB2010")
    ours = measure(str(path), "coflowopt", args.repeat)
    ref = measure(str(path), "naive", max(1, args.repeat // 2))
    print("| reader | time (s) | peak traced (MB) | RSS growth (MB) | process RSS (MB) |")
    print("|---|---|---|---|---|")
    for name, r in (("coflowopt.read_trace", ours), ("pure-Python per-flow reader", ref)):
        print(f"| {name} | {r['seconds']:.3f} | {r['peak_traced_mb']:.1f} | "
              f"{r['rss_growth_mb']:.1f} | {r['rss_mb']:.1f} |")
    print(f"\nspeed-up over the reference: {ref['seconds'] / ours['seconds']:.1f}x; "
          f"memory ratio (peak traced): {ref['peak_traced_mb'] / ours['peak_traced_mb']:.1f}x")


if __name__ == "__main__":
    main()
