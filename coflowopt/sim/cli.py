"""``coflowopt run``: simulate schedulers on a trace or the synthetic workload."""

from __future__ import annotations

import argparse
import csv
import sys
import time
from pathlib import Path

__all__ = ["add_commands"]


def add_commands(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run", help="simulate schedulers on a trace and print their metrics")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--trace", help="a trace file or JSON instance")
    src.add_argument("--synthetic", action="store_true",
                     help="the embedded FB-like synthetic workload")
    p.add_argument("--coflows", type=int, default=526, help="synthetic: number of coflows")
    p.add_argument("--seed", type=int, default=0, help="synthetic workload and schedulers")
    p.add_argument("--scheduler", "-s", default="varys",
                   help="registry name(s), comma-separated (see `coflowopt schedulers`)")
    p.add_argument("--schedule-out", help="write the (last) schedule as JSON; with several "
                   "schedulers, NAME is inserted before the extension")
    p.add_argument("--csv", help="write per-coflow results (scheduler, coflow, release, "
                   "completion, cct, slowdown)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--semantics", choices=("fluid", "coflowsim"), default="fluid",
                   help="fluid: the exact fluid simulator (default); coflowsim: CoflowSim's "
                   "semantics (8 ms quanta, 10,240 ms admission epochs, rounded flows), with "
                   "CoflowSim's scheduler names sebf, dark, fifo, scf, ncf, lcf, fair, pfp "
                   "(varys = sebf, aalo = dark)")
    p.set_defaults(func=cmd_run)


def _schedule_path(base: str, name: str, several: bool) -> Path:
    p = Path(base)
    if not several:
        return p
    suffixes = "".join(p.suffixes)
    return p.with_name(p.name[: len(p.name) - len(suffixes)] + f"-{name}" + suffixes)


def cmd_run(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from coflowopt.bounds import lower_bounds
    from coflowopt.cli import load_any
    from coflowopt.schedulers import get
    from coflowopt.sim.engine import PROGRESS
    from coflowopt.sim.policies import simulate_validated
    from coflowopt.validate import validate
    from coflowopt.workloads.synthetic import synthetic_trace

    names = [n.strip() for n in args.scheduler.split(",") if n.strip()]
    coflowsim_mode = args.semantics == "coflowsim"
    if coflowsim_mode:
        from coflowopt.sim.coflowsim import COFLOWSIM_SCHEDULERS, coflowsim

        for n in names:  # unknown names fail before any work
            if n.lower() not in COFLOWSIM_SCHEDULERS:
                raise KeyError(f"--semantics coflowsim: unknown scheduler {n!r}; CoflowSim has "
                               f"{', '.join(sorted(COFLOWSIM_SCHEDULERS))}")
        algos: list = list(names)
    else:
        algos = [get(n) for n in names]  # unknown names fail before any work
    if args.trace:
        inst = load_any(args.trace)
        label = args.trace
    else:
        inst = synthetic_trace(args.coflows, seed=args.seed)
        label = f"synthetic FB-like ({args.coflows} coflows, seed {args.seed})"
    unit = inst.time_unit
    print(f"{label}: {inst}")
    lb_inst = inst
    rows = []
    writer = None
    fh = None
    if args.csv:
        fh = open(args.csv, "w", newline="")
        writer = csv.writer(fh)
        writer.writerow(["scheduler", "coflow", "release", "completion", "cct", "slowdown"])
    try:
        for algo in algos:
            if coflowsim_mode:
                t0 = time.process_time()
                res = coflowsim(inst, algo)
                cpu = time.process_time() - t0
                lb_inst = res.instance  # rounded flows, releases at the admission epochs
                _report(res.instance, res.schedule, f"{algo}", cpu, rows, writer, args,
                        len(algos) > 1, res.tolerance)
                continue
            bar = None
            if not args.no_progress and inst.n_flows > 50_000:  # a long run
                bar = tqdm(total=inst.n_coflows, desc=algo.name, unit="coflow", leave=False,
                           file=sys.stderr)

            def tick(done: int, total: int, bar=bar) -> None:
                if bar is not None:
                    bar.n = done
                    bar.refresh()

            token = PROGRESS.set(tick)
            t0 = time.process_time()
            try:
                if args.schedule_out:
                    valid = validate(inst, algo(inst, seed=args.seed))
                else:  # nothing to write: the validator takes the rates as they are made
                    valid = simulate_validated(inst, algo.name, seed=args.seed)
            finally:
                PROGRESS.reset(token)
                if bar is not None:
                    bar.close()
            cpu = time.process_time() - t0
            _report(inst, valid, algo.name, cpu, rows, writer, args, len(algos) > 1)
    finally:
        if fh is not None:
            fh.close()
    lb = lower_bounds(lb_inst)
    if coflowsim_mode:
        print("semantics: coflowsim (rounded flows, releases at the admission epochs, CCT "
              "from there; the bound is for that instance)")
    head = (f"{'scheduler':<11} {'avg CCT':>12} {'p50':>10} {'p95':>12} {'p99':>12} "
            f"{'avg slowdown':>12} {'wtd compl.':>14} {'cpu s':>7}")
    print(f"times in {unit}; lower bound on avg CCT: {lb['avg_cct']:.6g}")
    print(head)
    for name, s, cpu in rows:
        print(f"{name:<11} {s['avg_cct']:>12.6g} {s['cct_p50']:>10.5g} {s['cct_p95']:>12.6g} "
              f"{s['cct_p99']:>12.6g} {s['avg_slowdown']:>12.4g} "
              f"{s['weighted_completion']:>14.6g} {cpu:>7.2f}")
    return 0


def _report(inst, sched, name: str, cpu: float, rows: list, writer, args: argparse.Namespace,
            several: bool, tol=None) -> None:
    """Validate one schedule (unless it comes validated), add its metrics row, write its CSV
    rows and schedule file."""
    from coflowopt import metrics, validate
    from coflowopt.interchange import save_schedule
    from coflowopt.validate import ValidSchedule

    valid = sched if isinstance(sched, ValidSchedule) else validate(inst, sched, tol)
    rows.append((name, metrics.summary(valid), cpu))
    if writer is not None:
        cct = metrics.cct(valid)
        sl = metrics.slowdown(valid)
        for c in range(inst.n_coflows):
            cid = inst.coflow_id[c]
            writer.writerow([name, cid.item() if hasattr(cid, "item") else cid,
                             repr(float(inst.release[c])),
                             repr(float(valid.coflow_completion[c])),
                             repr(float(cct[c])), repr(float(sl[c]))])
    if args.schedule_out:
        assert valid.schedule is not None  # stored whenever a file is asked for
        save_schedule(valid.schedule, _schedule_path(args.schedule_out, name, several))
