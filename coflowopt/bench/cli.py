"""The ``bench`` and ``report`` subcommands (plugged into ``coflowopt.cli``).

::

    coflowopt bench [SUITE] [--executor local|inline|dask [ADDRESS]] [--dask ADDRESS]
                    [--jobs N] [--out DIR] [--max-tasks N] [--retry-errors] [--no-plots]
                    [--strict | --allow-failures] [--progress | --no-progress]
    coflowopt report RESULTS [--no-plots]

``SUITE`` is a suite file, or the name of one in ``./benchmarks/`` (``fb2010`` for
``benchmarks/fb2010.toml``); without it the embedded default suite runs.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from pathlib import Path
from typing import Any

__all__ = ["add_commands", "cmd_bench", "cmd_report"]


def add_commands(sub: Any) -> None:
    """Add ``bench`` and ``report`` to the ``coflowopt`` subparsers."""
    s = sub.add_parser(
        "bench", help="run a benchmark suite (default: the embedded default suite)",
        description="Run every task of a suite that its results folder lacks, print the "
                    "summary table and write the report.")
    s.add_argument("suite", nargs="?", default=None,
                   help="suite file, or a name in ./benchmarks/ (default: the default suite)")
    s.add_argument("--executor", nargs="+", metavar=("KIND", "ADDRESS"), default=["local"],
                   help="local (process pool, default), inline (this process), or dask "
                        "[ADDRESS] (ADDRESS: tcp://host:8786, or local for a LocalCluster)")
    s.add_argument("--dask", metavar="ADDRESS", default=None,
                   help="shorthand for --executor dask ADDRESS")
    s.add_argument("--jobs", "-j", type=int, default=2,
                   help="workers of the local pool or local Dask cluster (default 2)")
    s.add_argument("--out", default=None, help="results folder (default results/<suite name>)")
    s.add_argument("--max-tasks", type=int, default=None,
                   help="run at most N of the pending tasks (the rest on a rerun)")
    s.add_argument("--retry-errors", action="store_true", help="run failed tasks again")
    s.add_argument("--no-plots", action="store_true", help="write the tables only")
    s.add_argument("--strict", action="store_true",
                   help="(the default now) exit 1 if any task failed")
    s.add_argument("--allow-failures", action="store_true",
                   help="exit 0 even when tasks failed (they are still listed)")
    s.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="progress bar (default: when stderr is a terminal)")
    s.set_defaults(func=cmd_bench)

    s = sub.add_parser("report", help="rebuild the tables, summary and plots of a results folder")
    s.add_argument("results", help="a results folder (results/<suite name>)")
    s.add_argument("--no-plots", action="store_true", help="write the tables only")
    s.set_defaults(func=cmd_report)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _n(k: int, word: str) -> str:
    return f"{k} {word}{'' if k == 1 else 's'}"


def _resolve_suite_arg(arg: str | None) -> Any:
    from coflowopt.bench.defaults import default_suite
    from coflowopt.bench.suite import load_suite

    if arg is None or (arg == "default" and not Path(arg).exists()):
        return default_suite()
    p = Path(arg)
    if not p.exists() and not p.suffix:
        cand = Path("benchmarks") / f"{arg}.toml"
        if cand.exists():
            p = cand
    return load_suite(p)


def _split_executor(args: argparse.Namespace) -> tuple[str, str | None]:
    """``--executor KIND [ADDRESS]`` (a trailing ``*.toml`` swallowed by nargs is the suite)."""
    items = list(args.executor)
    if args.suite is None and len(items) > 1 and (items[-1].endswith(".toml")
                                                  or Path(items[-1]).is_file()):
        args.suite = items.pop()
    kind = items[0]
    if args.dask is not None:
        if kind not in ("local", "dask") or len(items) > 1:
            raise ValueError("--dask ADDRESS and --executor KIND: give one of them")
        return "dask", args.dask
    if kind not in ("local", "inline", "dask"):
        raise ValueError(f"--executor: expected local, inline or dask, got {kind!r}")
    if kind != "dask" and len(items) > 1:
        raise ValueError(f"--executor {kind}: takes no address (got {items[1:]})")
    if len(items) > 2:
        raise ValueError(f"--executor dask: one ADDRESS at most (got {items[1:]})")
    return kind, (items[1] if len(items) > 1 else ("local" if kind == "dask" else None))


def folder_problem(folder: str | os.PathLike[str]) -> str | None:
    """Why the results ``folder`` cannot be created or written (``"FOLDER: reason"``), or
    ``None``: checked by creating and removing a file in it, or in its nearest existing
    ancestor when it is still to be made, so a bench refuses before running any task."""
    folder = Path(folder)
    p = folder
    while not p.exists() and p.parent != p:
        p = p.parent
    if not p.is_dir():
        return f"{folder}: {p} is not a folder"
    from coflowopt.interchange import write_probe

    why = write_probe(p)
    return None if why is None else f"{folder}: cannot write in {p} ({why})"


def _report_failures(failed: tuple[str, ...], command: str) -> None:
    for line in failed:
        print(f"coflowopt {command}: cannot write {line}", file=sys.stderr)


def cmd_bench(args: argparse.Namespace) -> int:
    """``coflowopt bench``."""
    from coflowopt.bench.report import format_table, write_report
    from coflowopt.bench.runner import dask_executor, run_suite

    kind, address = _split_executor(args)
    suite = _resolve_suite_arg(args.suite)
    problem = folder_problem(args.out if args.out is not None else Path("results") / suite.name)
    if problem:  # before any task runs
        print(f"coflowopt bench: error: {problem}", file=sys.stderr)
        return 2
    jobs = max(1, args.jobs)
    where = {"local": f"a local process pool ({jobs} workers)", "inline": "this process",
             "dask": ("a Dask LocalCluster" + f" ({jobs} workers)" if address == "local"
                      else f"the Dask cluster at {address}")}[kind]
    n_seeds = {len(suite.seeds_of(w)) for w in suite.workloads}
    seeds = _n(n_seeds.pop(), "seed") if len(n_seeds) == 1 else "seeds per workload"
    some = any(s.workloads is not None for s in suite.schedulers)
    print(f"suite {suite.name}: {_n(suite.n_tasks, 'task')} ({_n(len(suite.workloads), 'workload')}"
          f" x {_n(len(suite.schedulers), 'scheduler')} x {seeds}"
          f"{', some schedulers on some workloads only' if some else ''}) on {where}", flush=True)
    for w in suite.workloads:  # what each workload is (the default suite's load, say)
        args_ = ", ".join(f"{k}={v!r}" for k, v in w.params.items())
        only = [s.label for s in suite.schedulers if s.workloads is not None and s.runs_on(w.name)]
        print(f"  workload {w.name}: {w.generator}({args_})"
              + (f"; also {', '.join(only)}" if only else ""), flush=True)
    kw = dict(out=args.out, jobs=jobs, max_tasks=args.max_tasks,
              retry_errors=args.retry_errors, progress=args.progress)
    # SIGTERM (a batch scheduler's stop) ends the run like Ctrl-C: finished rows are kept
    old_term = signal.signal(signal.SIGTERM, _interrupt)
    try:
        if kind == "dask":
            with dask_executor(address or "local", n_workers=jobs) as ex:
                run = run_suite(suite, executor=ex, **kw)
        else:
            run = run_suite(suite, executor=kind, **kw)
    except RuntimeError as exc:
        print(f"coflowopt bench: error: {exc}", file=sys.stderr)
        return 2
    finally:
        signal.signal(signal.SIGTERM, old_term)
    if run.skipped:
        print(f"{run.skipped} of {run.total} tasks were already done (resumed)")
    rep = write_report(run.out, suite, plots=not args.no_plots)
    if not rep.summary.empty:
        print()
        print(format_table(rep.summary))
        print()
    print(f"{_n(run.ran, 'task')} ran ({run.failed} failed) in {run.seconds:.1f} s; "
          f"{run.remaining} remaining. Results: {run.out / 'results.csv'}")
    md = run.out / "report" / "summary.md"
    if md in rep.files:
        print(f"Report: {md}" + (" and plots beside it"
                                 if any(p.suffix == ".png" for p in rep.files) else ""))
    _report_failures(rep.failed, "bench")
    for p in run.problems:
        print(f"  lost (will rerun): {p}", file=sys.stderr)
    failures = _failures(run.results())
    if failures:
        print(f"{_n(len(failures), 'failed task')} (rows kept with their errors; "
              "--retry-errors runs them again):", file=sys.stderr)
        for line in failures:
            print(f"  {line}", file=sys.stderr)
    if run.interrupted:
        print("interrupted: finished rows are kept; rerun the same command to resume",
              file=sys.stderr)
        return 130
    if run.lost or rep.failed or (failures and not args.allow_failures):
        return 1
    return 0


def _failures(df: Any) -> list[str]:
    """One line per failed task of a results table: workload/scheduler/seed, status and the
    first line of its error."""
    from coflowopt.bench.runner import is_failure

    if df.empty or "status" not in df:
        return []
    # a scheduler's proven "infeasible" (NoFeasibleSchedule) is a result, not a failure
    err = df["error"] if "error" in df else [""] * len(df)
    bad = df[[is_failure(st, e) for st, e in zip(df["status"], err, strict=True)]]
    out = []
    for r in bad.itertuples():
        err = str(getattr(r, "error", "") or "").strip().splitlines()
        out.append(f"{r.workload}/{r.scheduler}/seed {r.seed}: {r.status}: "
                   f"{err[0] if err else '(no message)'}")
    return out


def cmd_report(args: argparse.Namespace) -> int:
    """``coflowopt report RESULTS``."""
    from coflowopt.bench.report import format_table, write_report

    rep = write_report(args.results, plots=not args.no_plots)
    if not rep.summary.empty:
        print(format_table(rep.summary))
        print()
    if rep.files:
        print("wrote " + ", ".join(str(p) for p in rep.files))
    _report_failures(rep.failed, "report")
    return 1 if rep.failed else 0
