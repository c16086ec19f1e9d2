"""The backfilling kernel of G-DM-BF / G-DM-RT-BF (:mod:`coflowopt.schedulers.dag.backfill`) on
real plans: its time, its counters, and its output plan columns, to compare two versions of the
kernel (e.g. the base checkout's venv against a working tree's).

    python benchmarks/bench_backfill.py dump TRACE OUT.npz [--rooted] [--seed 0]
    python benchmarks/bench_backfill.py compare A.npz B.npz

``dump`` builds G-DM's (``--rooted``: G-DM-RT's) slot plan with the given seed, backfills it
(timing the compiled kernel ``_bf_kernel`` alone and the whole ``backfill`` call) and writes the
backfilled plan's columns.  ``compare`` says whether two dumps hold the same plan: the columns as
emitted, and after sorting the pieces by ``(flow, start)`` (the canonical order).  Run it from
outside the repository (e.g. ``cd /tmp``) so that the interpreter's installed ``coflowopt`` is
the one measured, not the working directory's.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np


def dump(trace: str, out: str, rooted: bool, seed: int) -> None:
    """Backfill G-DM's plan of ``trace`` and save the result's columns and timings."""
    from coflowopt.cli import load_any
    from coflowopt.schedulers.dag import backfill as bfmod
    from coflowopt.schedulers.dag.gdm import (
        GDMParams,
        GDMRTParams,
        coflow_priority,
        gdm_plan,
        release_slots,
    )
    from coflowopt.schedulers.dag.slots import slot_demand

    inst = load_any(trace)
    params = GDMRTParams() if rooted else GDMParams()
    t0 = time.perf_counter()
    plan, g, _ = gdm_plan(inst, params, np.random.default_rng(seed), rooted=rooted)
    t_plan = time.perf_counter() - t0
    n_base = plan.flow.size
    kernel = bfmod._bf_kernel
    spent = []

    def timed(*args):  # the compiled kernel alone, each call (one per chunk and the last)
        t = time.perf_counter()
        r = kernel(*args)
        spent.append(time.perf_counter() - t)
        return r

    bfmod._bf_kernel = timed
    try:
        t0 = time.perf_counter()
        bf = bfmod.backfill(inst, plan, coflow_priority(inst, g.order),
                            slot_demand(inst, params.quantum),
                            release_slots(inst, params.quantum))
        t_bf = time.perf_counter() - t0
    finally:
        bfmod._bf_kernel = kernel
    c = bf.counters or {}
    np.savez(out, flow=bf.flow, start=bf.start, length=bf.length,
             counters=np.array([c.get("events", -1), c.get("port_repairs", -1),
                                c.get("pair_scans", -1)]))
    print(f"{trace.split('/')[-1]} {'gdm-rt' if rooted else 'gdm'} seed={seed}: ports "
          f"{inst.ports}, flows {inst.n_flows}, base pieces {n_base}, plan {t_plan:.1f} s; "
          f"backfill {t_bf:.2f} s, _bf_kernel {sum(spent):.2f} s; pieces {bf.flow.size}, "
          f"counters {c}")


def compare(a: str, b: str) -> int:
    """0 when the two dumps hold the same plan (as emitted and canonically sorted)."""
    x, y = np.load(a), np.load(b)
    cols = ("flow", "start", "length")
    same_raw = all(np.array_equal(x[k], y[k]) for k in cols)

    def canon(d):
        o = np.lexsort((d["start"], d["flow"]))
        return [d[k][o] for k in cols]

    same_canon = all(np.array_equal(p, q) for p, q in zip(canon(x), canon(y), strict=True))
    same_cnt = np.array_equal(x["counters"], y["counters"])
    print(f"pieces {x['flow'].size} vs {y['flow'].size}; same as emitted: {same_raw}; same "
          f"after (flow, start) sort: {same_canon}; same counters: {same_cnt} "
          f"({x['counters'].tolist()} vs {y['counters'].tolist()})")
    return 0 if same_canon else 1


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("dump")
    d.add_argument("trace")
    d.add_argument("out")
    d.add_argument("--rooted", action="store_true")
    d.add_argument("--seed", type=int, default=0)
    c = sub.add_parser("compare")
    c.add_argument("a")
    c.add_argument("b")
    args = ap.parse_args(argv)
    if args.cmd == "dump":
        dump(args.trace, args.out, args.rooted, args.seed)
        return 0
    return compare(args.a, args.b)


if __name__ == "__main__":
    sys.exit(main())
