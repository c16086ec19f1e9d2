"""Compare two DeepWeave checkpoints on the held-out instances of the evaluation grid
(``benchmarks/deepweave_experiments.py``'s full-grid instances: TPC-DS-like 10 jobs on 10
ports, GGen 30 jobs x 4-64 nodes on 20 ports, TPC-DS-like 30 jobs arriving at ``1e-4`` on 10
ports; generator seeds 10000 + k).  DeepWeave alone, each schedule validated by
:func:`coflowopt.run`; per seed the ratio ``avg JCT(candidate) / avg JCT(reference)`` (below 1:
the candidate is better), with mean, min and max over the seeds (the JSON also keeps both
average JCTs per seed).  Each checkpoint brings its own architecture (its ``config`` entry:
an ablated network loads as trained).

Replacement rule used in BENCHMARKS.md (set before the check): the candidate replaces the
reference only if it wins on every seed of every column and its mean gain exceeds half the
column's range of ratios.

    python benchmarks/bench_deepweave_checkpoints.py CANDIDATE.npz [--reference REF.npz]
        [--seeds 10] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections.abc import Callable
from typing import Any

import coflowopt
from coflowopt.model import Instance
from coflowopt.workloads.dags import ggen_fan_in_fan_out, tpcds_like

HELD_OUT = 10_000

CASES: dict[str, Callable[[int], Instance]] = {
    "tpcds 10 jobs, 10 ports": lambda s: tpcds_like(10, ports=10, seed=s, critical_path=(4, 7)),
    "ggen 30 jobs x 4-64 nodes, 20 ports": lambda s: ggen_fan_in_fan_out(
        30, ports=20, nodes=(4, 64), seed=s),
    "tpcds 30 jobs arriving, 10 ports": lambda s: tpcds_like(
        30, ports=10, seed=s, critical_path=(4, 7), arrival_rate=1e-4),
}


def _avg_jct(inst: Instance, checkpoint: str | None) -> float:
    prm = {"checkpoint": checkpoint} if checkpoint else {}
    return float(coflowopt.run(inst, "deepweave", seed=0, params=prm).summary()["avg_jct"])


def compare(candidate: str, reference: str | None, seeds: list[int]) -> dict[str, Any]:
    """Per case: the per-seed ratios candidate / reference and their mean, min, max, and
    whether the replacement rule (module docstring) holds on that case."""
    out: dict[str, Any] = {}
    for name, make in CASES.items():
        r, cj, rj = [], [], []
        for s in seeds:
            inst = make(s)
            cj.append(_avg_jct(inst, candidate))
            rj.append(_avg_jct(inst, reference))
            r.append(cj[-1] / rj[-1])
        mean = statistics.fmean(r)
        out[name] = {"ratios": r, "mean": mean, "min": min(r), "max": max(r),
                     "wins": max(r) < 1 and 1 - mean > (max(r) - min(r)) / 2,
                     "candidate_avg_jct": cj, "reference_avg_jct": rj}
        print(name, json.dumps({k: v for k, v in out[name].items()
                                if k in ("mean", "min", "max", "wins")}), flush=True)
    out["replace"] = all(v["wins"] for v in out.values())
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("candidate")
    ap.add_argument("--reference", default=None, help="default: the shipped checkpoint")
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    res = compare(a.candidate, a.reference, [HELD_OUT + k for k in range(a.seeds)])
    print("replace" if res["replace"] else "keep the reference")
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(res, fh, indent=1)


if __name__ == "__main__":
    main()
