"""DeepWeave checkpoints on the held-out grid of ``docs/deepweave-protocol.md`` (DeepWeave: Sun,
Guo, Wang, Li, Lan, Hu, IJCAI 2020; issue 30), and the checkpoint replacement rule.

Every schedule goes through :func:`coflowopt.run` (validated).  Per workload and checkpoint:
the mean over the 10 held-out seeds of (checkpoint avg JCT / heuristic avg JCT) for Varys,
Sincronia, G-DM and G-DM-BF, with the min-max per-seed spread; the *reference* is the better of
G-DM-BF and Sincronia on that workload (lower mean avg JCT).  ``--rule CANDIDATE`` applies the
protocol's rule to the candidate against ``shipped``.  The heuristics' figures are cached in
``--cache`` (they do not depend on the checkpoints).

    python benchmarks/deepweave_protocol.py [--workers 2] [--json P] [--rule LABEL]
        [--seeds 10] LABEL=PATH ...     (the label ``shipped`` = the shipped checkpoint)
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

HEURISTICS = ("varys", "sincronia", "gdm", "gdm-bf")
SEED0 = 10_000


def _one(args: tuple[str, int, str, str | None]) -> tuple[str, int, str, float]:
    import coflowopt
    from coflowopt.training.teachers import make_instance

    workload, seed, label, path = args
    inst = make_instance(workload, seed)
    if path is None:
        r = coflowopt.run(inst, label, seed=0)
    else:
        r = coflowopt.run(inst, "deepweave", seed=0, params={"checkpoint": path})
    v = r.valid
    return workload, seed, label, float((v.job_completion - inst.job_release).mean())


def evaluate(entries: dict[str, str | None], seeds: list[int], workers: int
             ) -> dict[str, dict[str, dict[int, float]]]:
    """``{label: {workload: {seed: avg JCT}}}`` (a ``None`` path: a heuristic by name)."""
    from coflowopt.training.teachers import WORKLOADS

    jobs = [(w, s, lab, p) for lab, p in entries.items() for w in WORKLOADS for s in seeds]
    out: dict[str, dict[str, dict[int, float]]] = {}
    if workers > 1:
        os.environ.setdefault("OMP_NUM_THREADS", "1")
        with ProcessPoolExecutor(max_workers=workers) as pool:
            res = list(pool.map(_one, jobs))
    else:
        res = [_one(j) for j in jobs]
    for w, s, lab, v in res:
        out.setdefault(lab, {}).setdefault(w, {})[s] = v
    return out


def ratios(jct: dict[str, dict[str, dict[int, float]]], label: str
           ) -> dict[str, dict[str, Any]]:
    """Per workload: the reference's name and, per heuristic and for ``reference``, the mean
    ratio and its per-seed min and max."""
    out: dict[str, dict[str, Any]] = {}
    for w, per_seed in jct[label].items():
        seeds = sorted(per_seed)
        ref = min(("gdm-bf", "sincronia"), key=lambda h: np.mean([jct[h][w][s] for s in seeds]))
        row: dict[str, Any] = {"reference_is": ref}
        for h in (*HEURISTICS, "reference"):
            hh = ref if h == "reference" else h
            r = np.array([per_seed[s] / jct[hh][w][s] for s in seeds])
            row[h] = {"mean": float(r.mean()), "min": float(r.min()), "max": float(r.max())}
        out[w] = row
    return out


def rule(cand: dict[str, dict[str, Any]], shipped: dict[str, dict[str, Any]]
         ) -> tuple[bool, str]:
    """The protocol's rule: better on >= 2 workloads, not worse by more than 1% on the third."""
    better = [w for w in cand if cand[w]["reference"]["mean"] < shipped[w]["reference"]["mean"]]
    worse = [w for w in cand if cand[w]["reference"]["mean"]
             > 1.01 * shipped[w]["reference"]["mean"]]
    ok = len(better) >= 2 and not worse
    return ok, f"better on {better or 'none'}; worse by > 1% on {worse or 'none'}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("entries", nargs="*", help="LABEL=PATH (shipped: the shipped checkpoint)")
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--json", default=None)
    ap.add_argument("--rule", default=None, help="a LABEL to judge against 'shipped'")
    ap.add_argument("--cache", default="benchmarks/results/deepweave_protocol_heuristics.json")
    args = ap.parse_args(argv)
    from coflowopt.schedulers.learned.checkpoint import default_checkpoint_path

    seeds = [SEED0 + k for k in range(args.seeds)]
    cache = Path(args.cache)
    heur: dict[str, Any] = {}
    if cache.is_file():
        heur = {h: {w: {int(s): v for s, v in d.items()} for w, d in ws.items()}
                for h, ws in json.loads(cache.read_text()).items()}
    if not heur or any(set(d) != set(seeds) for ws in heur.values() for d in ws.values()):
        heur = evaluate(dict.fromkeys(HEURISTICS), seeds, args.workers)
        cache.parent.mkdir(parents=True, exist_ok=True)
        cache.write_text(json.dumps(heur, indent=1))
    entries: dict[str, str | None] = {}
    for e in args.entries:
        lab, _, path = e.partition("=")
        entries[lab] = str(default_checkpoint_path()) if lab == "shipped" and not path else path
    jct = {**heur, **evaluate(entries, seeds, args.workers)}
    table = {lab: ratios(jct, lab) for lab in entries}
    print(f"held-out seeds {seeds[0]}-{seeds[-1]}; mean ratio policy / heuristic avg JCT "
          f"(min-max over seeds); reference = better of G-DM-BF and Sincronia")
    for lab, t in table.items():
        for w, row in t.items():
            cells = "  ".join(f"{h} {row[h]['mean']:.3f} ({row[h]['min']:.2f}-"
                              f"{row[h]['max']:.2f})" for h in (*HEURISTICS, "reference"))
            print(f"{lab:>14} {w:>18} [{row['reference_is']}]  {cells}")
    verdict = None
    if args.rule:
        ok, why = rule(table[args.rule], table["shipped"])
        verdict = {"candidate": args.rule, "replace": ok, "why": why}
        print(f"rule: {args.rule} {'REPLACES' if ok else 'does not replace'} shipped: {why}")
    if args.json:
        Path(args.json).write_text(json.dumps({"jct": jct, "ratios": table, "rule": verdict},
                                              indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
