"""``coflowopt run``: run schedulers on a trace or the synthetic workload, through the run
service (:func:`coflowopt.run`), and print their metrics."""

from __future__ import annotations

import argparse
import contextlib
import csv
import io
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

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
    p.add_argument("-p", "--param", action="append", default=[], metavar="[NAME.]KEY=VALUE",
                   help="a scheduler parameter, VALUE as in TOML (e.g. -p E=1.5, -p E=inf, "
                   "-p mode=online); NAME. limits it to that scheduler (repeatable)")
    p.add_argument("--schedule-out", help="write the schedule as JSON; with several "
                   "schedulers, NAME is inserted before the extension; with --semantics "
                   "coflowsim also the simulated instance it refers to, as FILE.instance.json")
    p.add_argument("--csv", help="write per-coflow results (scheduler, coflow, release, "
                   "completion, cct, slowdown)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--counters", action="store_true",
                   help="also print each run's kernel counters (events, recomputations, "
                   "cascade visits, rate changes) as one JSON line, 'counters NAME {...}'")
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


def instance_path(schedule_path: str | Path) -> Path:
    """Where a CoflowSim-mode schedule's simulated instance goes: ``s.json`` ->
    ``s.instance.json`` (``.json.gz`` -> ``.instance.json.gz``; any other name gets
    ``.instance.json`` appended), beside the schedule."""
    p = Path(schedule_path)
    for ext in (".json.gz", ".json"):
        if p.name.endswith(ext):
            return p.with_name(p.name[: -len(ext)] + ".instance" + ext)
    return p.with_name(p.name + ".instance.json")


def _output_paths(args: argparse.Namespace, infos: list[Any]) -> list[Path]:
    """Every file the run will write, so that each can be checked before any work."""
    out = [Path(args.csv)] if args.csv else []
    if args.schedule_out:
        for info in infos:
            sp = _schedule_path(args.schedule_out, info.name, len(infos) > 1)
            out.append(sp)
            if info.semantics == "coflowsim":
                out.append(instance_path(sp))
    return out


@contextlib.contextmanager
def _progress_bar(name: str, inst: Any, args: argparse.Namespace) -> Iterator[Any]:
    """A bar of the run's progress (simulated time against the kernel's estimate of the
    horizon, or coflows done), for long runs on a terminal unless ``--no-progress``; yields
    the ``progress`` callback.  It shows no time-left estimate: simulated time does not advance
    at a steady pace in wall time (the end of a run is often much faster than its start), so
    any such estimate is unfounded.  On a stderr that is not a terminal (a log, a pipe) there
    is no bar, whose carriage returns would only be noise there."""
    if args.no_progress or inst.n_flows <= 50_000 or not sys.stderr.isatty():
        yield None
        return
    from tqdm import tqdm

    bar = tqdm(total=1000, desc=name, leave=False, file=sys.stderr,
               bar_format="{desc}: {percentage:3.0f}% of the estimated horizon "
                          "|{bar}| {elapsed} elapsed")

    def tick(done: float, total: float) -> None:
        if total > 0:
            bar.n = min(1000, int(1000 * done / total))
            bar.refresh()

    try:
        yield tick
    finally:
        bar.close()


def _scheduler_params(items: list[str], infos: list[Any]) -> dict[str, dict[str, Any]] | str:
    """``-p [NAME.]KEY=VALUE`` as one checked mapping per scheduler name, or the one-line
    reason they do not fit (an unknown key, an ill-typed value, a range check)."""
    import tomllib

    from coflowopt.params import ParamsError

    names = {i.name.lower() for i in infos}
    params: dict[str, dict[str, Any]] = {i.name: {} for i in infos}
    for item in items:
        key, sep, text = item.partition("=")
        key = key.strip()
        if not sep or not key:
            return f"-p {item!r}: expected KEY=VALUE or NAME.KEY=VALUE"
        scope, dot, field = key.partition(".")
        targets = [i.name for i in infos]
        if dot and scope.lower() in names:
            targets = [i.name for i in infos if i.name.lower() == scope.lower()]
            key = field
        try:  # a TOML value (1.5, inf, "x", [1, 2]); bare words are text
            value = tomllib.loads(f"v = {text.strip()}")["v"]
        except tomllib.TOMLDecodeError:
            value = text.strip()
        for t in targets:
            params[t][key] = value
    for info in infos:
        try:
            info.make_params(params[info.name])
        except (ParamsError, ValueError) as exc:
            return f"-p: {exc}"
    return params


def cmd_run(args: argparse.Namespace) -> int:
    from coflowopt.bounds import lower_bounds
    from coflowopt.cli import load_any
    from coflowopt.schedulers import NoFeasibleSchedule, get
    from coflowopt.service import run
    from coflowopt.workloads.synthetic import synthetic_trace

    names = [n.strip() for n in args.scheduler.split(",") if n.strip()]
    infos = [get(n, args.semantics) for n in names]  # unknown names fail before any work
    params = _scheduler_params(args.param, infos)
    if isinstance(params, str):  # parameters are checked before any work too
        print(f"coflowopt run: error: {params}", file=sys.stderr)
        return 2
    from coflowopt.interchange import output_problem

    for path in _output_paths(args, infos):  # and so is every output file
        problem = output_problem(path)
        if problem:
            print(f"coflowopt run: error: {problem}", file=sys.stderr)
            return 2
    if args.trace:
        inst = load_any(args.trace)
        label = args.trace
    else:
        inst = synthetic_trace(args.coflows, seed=args.seed)
        label = f"synthetic FB-like ({args.coflows} coflows, seed {args.seed})"
    for info in infos:  # refused pairs fail before any output is opened
        info.check_supports(inst)
    unit = inst.time_unit
    print(f"{label}: {inst}")
    lb_inst = inst
    rows: list[tuple[str, dict[str, float], float]] = []
    # the per-coflow rows, written once the run ends (a temporary file renamed over the
    # target: a refused, failed or interrupted run never leaves a truncated file)
    out: list[list[Any]] | None = [] if args.csv else None
    interrupted = False
    # schedulers that proved no schedule meets their own constraints (CoFair below E_MPS):
    # a result, printed in one line; the others still run
    infeasible: list[str] = []
    # output files that could not be written ("PATH: reason"): reported after the table,
    # the other schedulers still run
    failed: list[str] = []
    # schedulers stopped for memory (KernelMemoryError): reported after the table
    stopped: list[str] = []
    try:
        for info in infos:
            try:
                with _progress_bar(info.name, inst, args) as tick:
                    res = run(inst, info, params=params[info.name], seed=args.seed,
                              keep_schedule=bool(args.schedule_out), progress=tick)
            except NoFeasibleSchedule as exc:
                infeasible.append(info.name)
                print(f"{info.name}: infeasible: {str(exc).removeprefix(info.name + ': ')}")
                continue
            except MemoryError as exc:  # stopped before the system ran out: the rest still run
                stopped.append(f"{info.name}: {exc or 'out of memory'}")
                continue
            lb_inst = res.instance  # coflowsim: rounded flows, releases at the admission epochs
            _report(res, rows, out, args, len(infos) > 1, failed)
    except KeyboardInterrupt:
        # the kernel stopped at once; what finished is printed and its CSV rows kept
        interrupted = True
    if out is not None and rows:  # none finished: an existing file stays as it was
        try:
            _write_csv(args.csv, out)
        except OSError as exc:
            failed.append(_os_error(exc, args.csv))
            out = None  # so the interrupted line below does not claim the rows were kept
    for problem in stopped:
        print(f"coflowopt run: {problem}", file=sys.stderr)
    if (infeasible or stopped) and not rows and not interrupted:
        return 1  # nothing to tabulate: the lines said it
    lb = lower_bounds(lb_inst)
    if args.semantics == "coflowsim":
        print("semantics: coflowsim (rounded flows, releases at the admission epochs, CCT "
              "from there; the bound is for that instance)")
    # jobs of several coflows (or Starts-After edges): the job objectives the DAG schedulers
    # optimise (average JCT, sum_j w_j C_j over jobs) get their own columns
    jobs = any("avg_jct" in s for _, s, _ in rows)
    head = (f"{'scheduler':<11} {'avg CCT':>12} {'p50':>10} {'p95':>12} {'p99':>12} "
            f"{'avg slowdown':>12} {'wtd compl.':>14}"
            + (f" {'avg JCT':>12} {'wtd JCT':>14}" if jobs else "") + f" {'cpu s':>7}")
    bound = f"lower bound on avg CCT: {lb['avg_cct']:.6g}"
    if jobs:
        bound += f", on wtd JCT: {lb['weighted_jct']:.6g}"
    print(f"times in {unit}; {bound}; cpu s = simulation and validation"
          + ("; wtd JCT = sum of job weight x job completion" if jobs else ""))
    print(head)
    for name, s, cpu in rows:
        line = (f"{name:<11} {s['avg_cct']:>12.6g} {s['cct_p50']:>10.5g} "
                f"{s['cct_p95']:>12.6g} {s['cct_p99']:>12.6g} {s['avg_slowdown']:>12.4g} "
                f"{s['weighted_completion']:>14.6g}")
        if jobs:
            line += (f" {s.get('avg_jct', float('nan')):>12.6g} "
                     f"{s.get('weighted_jct', float('nan')):>14.6g}")
        print(f"{line} {cpu:>7.2f}")
    for problem in failed:
        print(f"coflowopt run: cannot write {problem}", file=sys.stderr)
    if interrupted:
        done = ", ".join(n for n, _, _ in rows) or "none"
        print(f"interrupted: finished {done}" + (f"; {args.csv} holds their rows"
                                                  if out is not None and rows else ""),
              file=sys.stderr)
        return 130
    return 1 if infeasible or failed or stopped else 0


def _os_error(exc: OSError, path: str | Path) -> str:
    from coflowopt.interchange import os_error_text

    return os_error_text(exc, path)


def _write_csv(path: str, body: list[list[Any]]) -> None:
    from coflowopt.interchange import write_atomic

    text = io.StringIO()
    writer = csv.writer(text)
    writer.writerow(["scheduler", "coflow", "release", "completion", "cct", "slowdown"])
    writer.writerows(body)
    write_atomic(path, [text.getvalue()])


def _report(res: Any, rows: list, out: list[list[Any]] | None, args: argparse.Namespace,
            several: bool, failed: list[str]) -> None:
    """Add one validated run's metrics row, its CSV rows and its schedule file (a file that
    cannot be written is added to ``failed`` as ``"PATH: reason"``)."""
    from coflowopt import metrics
    from coflowopt.interchange import save_instance, save_schedule

    valid, inst = res.valid, res.instance
    rows.append((res.scheduler, metrics.summary(valid), res.cpu_seconds))
    excess = valid.meta.get("capacity_excess", 0.0)
    if excess > valid.tolerance.capacity_rtol - excess:  # CoflowSim's own, and it mattered
        print(f"coflowopt run: note: {res.scheduler}: CoflowSim's own accounting takes a port "
              f"{excess:.3g} of its capacity over ({valid.meta['capacity_excess_at']}: a "
              "reducer's byte counter drifts from its flows' bytes left); validated with "
              f"capacity_rtol {valid.tolerance.capacity_rtol:.3g}", file=sys.stderr)
    if getattr(args, "counters", False):  # what explains a run's cost (benchmarks/bench_scale)
        import json

        print(f"counters {res.scheduler} {json.dumps(res.counters, sort_keys=True)}")
    if out is not None:
        cct = metrics.cct(valid)
        sl = metrics.slowdown(valid)
        for c in range(inst.n_coflows):
            cid = inst.coflow_id[c]
            out.append([res.scheduler, cid.item() if hasattr(cid, "item") else cid,
                        repr(float(inst.release[c])), repr(float(valid.coflow_completion[c])),
                        repr(float(cct[c])), repr(float(sl[c]))])
    if args.schedule_out:
        if valid.schedule is None:
            raise RuntimeError(f"{res.scheduler}: no stored schedule to write")
        path = _schedule_path(args.schedule_out, res.scheduler, several)
        if res.semantics == "coflowsim":
            # the schedule refers to the rounded, re-split instance that was simulated, which
            # no input file holds: it is written beside the schedule, so the pair can be checked
            ipath = instance_path(path)
            try:
                save_instance(inst, ipath)
            except OSError as exc:
                failed.append(_os_error(exc, ipath))
                return
        try:
            save_schedule(valid.schedule, path)
        except OSError as exc:
            failed.append(_os_error(exc, path))
            return
        if res.semantics == "coflowsim":
            print(f"{res.scheduler}: wrote {path} and the simulated instance it schedules, "
                  f"{ipath} (coflowopt validate {ipath} {path})")
