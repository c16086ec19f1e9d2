"""``coflowopt bound FILE``: every lower bound of an instance, with its time and whether it is
certified (:func:`coflowopt.bounds.all_bounds`; the interval-indexed LP after Qiu, Stein and
Zhong, SPAA 2015, solved by PDLP and certified from its dual vector,
:mod:`coflowopt.lp.certify`)."""

from __future__ import annotations

import argparse
import json
import math
import sys
from typing import Any

__all__ = ["add_commands", "cmd_bound"]


def add_commands(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("bound", help="lower bounds of an instance (combinatorial and a "
                       "certified LP bound), each with its time",
                       description="Print every lower bound on weighted completion time, sum "
                       "of completion times, weighted JCT and makespan, with the seconds it took "
                       "and whether its value is certified. The LP bound is the interval-indexed "
                       "LP solved by PDLP; its value is a Lagrangian bound from the dual vector, "
                       "valid even when the solve stops early.")
    p.add_argument("file", help="a trace file or JSON instance (fb2010: the located trace)")
    p.add_argument("--batch", action="store_true",
                   help="trace files: every release 0 (the batch form)")
    p.add_argument("--no-lp", action="store_true", help="combinatorial bounds only")
    p.add_argument("--eps", type=float, default=0.1,
                   help="interval grid ratio 1 + eps (default 0.1)")
    p.add_argument("--method", choices=("pdlp", "ipm", "simplex"), default="pdlp",
                   help="LP algorithm (default pdlp)")
    p.add_argument("--tolerance", type=float, default=1e-4,
                   help="relative tolerance of the LP solve (default 1e-4)")
    p.add_argument("--time-limit", type=float, default=math.inf,
                   help="seconds for each LP solve (the bound stays certified)")
    p.add_argument("--json", action="store_true", help="print JSON rows instead of a table")
    p.set_defaults(func=cmd_bound)


def _load(path: str, batch: bool) -> Any:
    from coflowopt.cli import load_any
    from coflowopt.workloads import read_trace
    from coflowopt.workloads.trace import resolve_trace

    if not batch:
        return load_any(path)
    if str(path).endswith((".json", ".json.gz")):
        raise ValueError(f"{path}: --batch applies to trace files only")
    return read_trace(resolve_trace(path), batch=True)


def cmd_bound(args: argparse.Namespace) -> int:
    from coflowopt.bounds import all_bounds
    from coflowopt.lp import SolveParams

    try:
        inst = _load(args.file, args.batch)
        sp = SolveParams(method=args.method, tolerance=args.tolerance,
                         time_limit=args.time_limit, presolve=args.method != "pdlp")
    except (OSError, ValueError) as exc:
        print(f"coflowopt bound: {exc}", file=sys.stderr)
        return 2
    rows = all_bounds(inst, lp=not args.no_lp, eps=args.eps, solve_params=sp)
    order = list(dict.fromkeys(b.objective for b in rows))
    rows.sort(key=lambda b: order.index(b.objective))  # stable: grouped by objective
    best: dict[str, float] = {}
    for b in rows:
        if b.certified:
            best[b.objective] = max(best.get(b.objective, -math.inf), b.value)
    if args.json:
        for b in rows:
            print(json.dumps({"objective": b.objective, "bound": b.name, "value": b.value,
                              "seconds": b.seconds, "certified": b.certified,
                              "best": b.certified and b.value == best.get(b.objective),
                              "detail": b.detail}))
        return 0
    print(f"{args.file}: {inst.n_coflows} coflows, {inst.n_flows} flows, {inst.ports} ports "
          f"({inst.time_unit}; absolute completion times)")
    print(f"{'objective':<20} {'bound':<31} {'value':>18} {'seconds':>9}  certified")
    for b in rows:
        mark = " *" if b.certified and b.value == best.get(b.objective) else ""
        print(f"{b.objective:<20} {b.name:<31} {b.value:>18,.3f} {b.seconds:>9.3f}  "
              f"{'yes' if b.certified else 'no'}{mark}")
        if b.detail:
            print(f"{'':<20}   {b.detail}")
    print("* the best certified bound of its objective")
    if "sum_completion" in best:
        sum_r = float(inst.release.sum())
        print(f"sum of CCTs (C - r) >= {best['sum_completion'] - sum_r:,.3f}; average CCT >= "
              f"{(best['sum_completion'] - sum_r) / max(inst.n_coflows, 1):,.3f}")
    return 0
