"""The ``coflowopt`` command line: simulate, benchmark and check coflow schedulers.

Subcommands: ``info``, ``gen``, ``convert``, ``validate``, ``schedulers`` (here), ``run``,
``bench``, ``report``, ``verify``, ``train`` (in :data:`COMMAND_MODULES`).  Instance files are
traces in the coflow-benchmark format, or JSON instances (``.json`` / ``.json.gz``).  Exit
status: 0 done; 1 a result says no (an infeasible schedule, a failed task, an output file that
could not be written); 2 bad input or usage; 130 interrupted.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from coflowopt.model import Instance

__all__ = ["COMMAND_MODULES", "main"]

#: Modules that add subcommands: each defines ``add_commands(subparsers)`` and sets ``func`` on
#: its parsers (``func(args) -> exit code``).
COMMAND_MODULES: tuple[str, ...] = (
    "coflowopt.bench.cli",
    "coflowopt.proofs_check.cli",
    "coflowopt.cli_run",
    "coflowopt.learn_cli",
    "coflowopt.bound_cli",
)


def _is_json(path: str | Path) -> bool:
    name = str(path)
    return name.endswith(".json") or name.endswith(".json.gz")


def load_any(path: str | Path) -> Instance:
    """A trace file or a JSON instance, by extension (``fb2010`` or the trace's file name: the
    located FB2010 trace, :func:`~coflowopt.workloads.trace.resolve_trace`)."""
    from coflowopt.interchange import load_instance
    from coflowopt.workloads import read_trace
    from coflowopt.workloads.trace import resolve_trace

    return load_instance(path) if _is_json(path) else read_trace(resolve_trace(path))


def _save_any(instance: Instance, path: str | Path) -> None:
    from coflowopt.interchange import save_instance
    from coflowopt.workloads import write_trace

    if _is_json(path):
        save_instance(instance, path)
    else:
        write_trace(instance, path)


def _fmt(x: float) -> str:
    if isinstance(x, float) and not x.is_integer():
        return f"{x:,.3f}" if abs(x) < 1e6 else f"{x:,.0f}"
    return f"{int(x):,}"


def cmd_info(args: argparse.Namespace) -> int:
    from coflowopt.workloads.synthetic import trace_statistics

    inst = load_any(args.trace)
    unit = "MB" if inst.time_unit == "ms" else "volume units"
    print(f"{args.trace}")
    rows = [
        ("ports", inst.ports),
        ("coflows", inst.n_coflows),
        ("jobs", inst.n_jobs),
        ("flows", inst.n_flows),
        ("starts_after edges", len(inst.starts_after)),
        (f"total volume ({unit})", float(inst.flow_volume.sum())),
        ("time unit", inst.time_unit),
    ]
    for k, v in rows:
        print(f"  {k:<28} {v if isinstance(v, str) else _fmt(v)}")
    if inst.n_coflows:
        stats = trace_statistics(inst)
        print("  statistics:")
        if inst.time_unit != "ms":
            print("    (volumes in volume units, times in time units)")
        for k, v in stats.items():
            print(f"    {_stat_label(k, inst.time_unit):<34} {_fmt(float(v))}")
    return 0


def _stat_label(key: str, time_unit: str) -> str:
    """A statistic's name for an instance in ``time_unit``: the MB / ms names of the trace
    statistics fit only ``"ms"`` instances; normalized (``"unit"``) ones drop the unit."""
    if time_unit == "ms":
        return key
    key = key.replace("total_mb", "total_volume").replace("size_mb", "size")
    return re.sub(r"_ms$", "", key)


#: ``coflowopt gen`` options that set a generator parameter: (option dest, parameter name).
_GEN_OPTIONS: tuple[tuple[str, str], ...] = (
    ("coflows", "n_coflows"), ("jobs", "n_jobs"), ("ports", "ports"), ("load", "load"),
    ("mean_coflows", "mean_coflows"), ("shape", "shape"),
)


def _gen_list() -> None:
    from coflowopt.workloads import registry

    print(f"{'name':<21} {'time':<5} summary")
    for gen in registry.generators().values():
        print(f"{gen.name:<21} {gen.time_unit:<5} {gen.summary}")
        shown = [f"{f.name}" if f.name in gen.required() else f"{f.name}={f.default!r}"
                 for f in gen.fields]
        print(f"{'':<27} params: {', '.join(shown)}")
    old = ", ".join(f"{a} ({c})" for a, c in registry.aliases().items())
    print(f"older names, still accepted: {old}")


def cmd_gen(args: argparse.Namespace) -> int:
    import tomllib

    from coflowopt.workloads import registry

    if args.list:
        _gen_list()
        return 0
    if args.kind is None or args.output is None:
        print("coflowopt gen: give a generator NAME and -o FILE (names: coflowopt gen --list)",
              file=sys.stderr)
        return 2
    try:
        gen = registry.generator(args.kind)
    except KeyError as exc:
        print(f"coflowopt gen: {exc.args[0]}", file=sys.stderr)
        return 2
    from coflowopt.interchange import output_problem

    problem = output_problem(args.output)
    if problem:  # before the instance is built
        print(f"coflowopt gen: error: {problem}", file=sys.stderr)
        return 2
    if gen.name not in ("synthetic", "trace") and not _is_json(args.output):
        print(f"coflowopt gen: {args.output}: {gen.name} needs a JSON instance file "
              "(.json or .json.gz); the trace format has no jobs, dependencies or "
              "normalized units", file=sys.stderr)
        return 2
    names = {f.name for f in gen.fields}
    params: dict[str, object] = {}
    for dest, name in _GEN_OPTIONS:
        value = getattr(args, dest)
        if value is None:
            continue
        if name not in names:
            print(f"coflowopt gen: --{dest.replace('_', '-')}: {gen.name} has no parameter "
                  f"{name!r} (its parameters: {', '.join(sorted(names))})", file=sys.stderr)
            return 2
        params[name] = value
    if args.trace is not None:
        if not gen.path_params:
            print(f"coflowopt gen: --trace: {gen.name} reads no trace file", file=sys.stderr)
            return 2
        params[next(iter(gen.path_params))] = args.trace
    if "n_jobs" in names:  # the DAG generators: 10 jobs on 10 ports unless told
        params.setdefault("n_jobs", 10)
        params.setdefault("ports", 10)
    for item in args.param:
        key, sep, text = item.partition("=")
        if not sep or not key.strip():
            print(f"coflowopt gen: -p {item!r}: expected KEY=VALUE", file=sys.stderr)
            return 2
        try:  # a TOML value (3, 0.7, "x", [4, 8], {shares = [1, 2]}); bare words are text
            params[key.strip()] = tomllib.loads(f"v = {text.strip()}")["v"]
        except tomllib.TOMLDecodeError:
            params[key.strip()] = text.strip()
    try:
        inst = gen.build(params, args.seed)
    except registry.ParamError as exc:
        print(f"coflowopt gen: {exc}", file=sys.stderr)
        return 2
    _save_any(inst, args.output)
    print(f"wrote {args.output}: {inst}")
    return 0


def trace_losses(inst: Instance) -> list[str]:
    """What writing ``inst`` as a trace would lose, one phrase each (empty: nothing).  The
    trace format has one job per coflow, no dependencies, weights or deadlines, and is read
    back in MB and ms at 1 Gb/s ports (0.125 MB/ms)."""
    from coflowopt.workloads.trace import GBPS_MB_PER_MS

    out = []
    if inst.starts_after.size:
        out.append(f"{len(inst.starts_after)} Starts-After edges")
    if inst.finishes_before.size:
        out.append(f"{len(inst.finishes_before)} Finishes-Before edges")
    if inst.n_jobs != inst.n_coflows:
        out.append(f"{inst.n_jobs} jobs (the {inst.n_coflows} coflows become "
                   f"{inst.n_coflows} one-coflow jobs)")
    if np.any(inst.coflow_weight != 1) or np.any(inst.job_weight != 1):
        out.append("coflow and job weights (all become 1)")
    n_dl = int((~np.isnan(inst.job_deadline)).sum())
    if n_dl:
        out.append(f"{n_dl} job deadlines")
    if inst.time_unit != "ms":
        out.append(f"time unit {inst.time_unit!r} (read back as MB and ms)")
    cap = np.concatenate([inst.fabric.capacity_in, inst.fabric.capacity_out])
    if cap.size and np.any(cap != GBPS_MB_PER_MS):
        shown = _fmt(float(cap[0])) if np.all(cap == cap[0]) else "per-port capacities"
        out.append(f"capacity {shown} (read back as {GBPS_MB_PER_MS} MB/ms)")
    return out


def cmd_convert(args: argparse.Namespace) -> int:
    from coflowopt.interchange import output_problem

    problem = output_problem(args.output)
    if problem:
        print(f"coflowopt convert: error: {problem}", file=sys.stderr)
        return 2
    inst = load_any(args.input)
    lost = [] if _is_json(args.output) else trace_losses(inst)
    if lost and not args.lossy:
        print(f"coflowopt convert: {args.output}: the trace format would lose "
              f"{'; '.join(lost)}; write JSON (.json) instead, or give --lossy", file=sys.stderr)
        return 2
    _save_any(inst, args.output)
    print(f"wrote {args.output}: {inst}" + (f" (lost: {'; '.join(lost)})" if lost else ""))
    return 0


def cmd_validate(args: argparse.Namespace) -> int:
    from coflowopt.interchange import load_schedule
    from coflowopt.metrics import summary
    from coflowopt.validate import InfeasibleSchedule, Tolerance, validate

    inst = load_any(args.instance)
    sched = load_schedule(args.schedule)
    tol = Tolerance(capacity_rtol=args.rtol, volume_rtol=args.rtol)
    try:
        v = validate(inst, sched, tol)
    except InfeasibleSchedule as exc:
        print(f"INFEASIBLE: {exc.violation}")
        for extra in exc.violations[1:]:
            print(f"  also: {extra}")
        return 1
    print(f"feasible: {inst.n_flows} flows served, {sched.n_intervals} intervals")
    for k, val in summary(v).items():
        print(f"  {k:<22} {val:.6g}")
    return 0


def cmd_schedulers(args: argparse.Namespace) -> int:
    from coflowopt.schedulers import registry

    head = ("name", "semantics", "family", "kind", "clairvoyant", "DAGs", "factor",
            "objective", "summary")
    rows = []
    for info in registry(None).values():
        dags = "needs" if info.needs_starts_after else ("yes" if info.multistage else "no")
        rows.append((info.name, info.semantics, info.family, info.kind,
                     "yes" if info.clairvoyant else "no", dags, info.factor_label,
                     info.objective, info.summary))
    # every column as wide as its widest cell (the summary, last, is left ragged)
    widths = [max(len(r[i]) for r in (head, *rows)) for i in range(len(head) - 1)]
    for r in (head, *rows):
        print(" ".join(f"{c:<{w}}" for c, w in zip(r, widths, strict=False)) + " " + r[-1])
    from coflowopt.schedulers.registry import FACTOR_LEGEND

    print(FACTOR_LEGEND)
    return 0


class _PlainFormatter(argparse.HelpFormatter):
    """Help text as plain text: the docstrings' RST literals (``x``) shown as x."""

    @staticmethod
    def _plain(text: str) -> str:
        return re.sub(r"``([^`]+)``", r"\1", text)

    def _format_text(self, text: str) -> str:
        return super()._format_text(self._plain(text))

    def _expand_help(self, action: argparse.Action) -> str:
        return self._plain(super()._expand_help(action))


class _Parser(argparse.ArgumentParser):
    """The parser of ``coflowopt`` and (as ``add_subparsers``' default) its subcommands."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        kwargs.setdefault("formatter_class", _PlainFormatter)
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]


def _version() -> str:
    from coflowopt import __version__

    return __version__


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="coflowopt", description=__doc__.split("\n\n")[0])
    p.add_argument("--version", action="version", version=f"coflowopt {_version()}")
    sub = p.add_subparsers(dest="command", required=True)

    s = sub.add_parser("info", help="summary statistics of a trace or JSON instance")
    s.add_argument("trace")
    s.set_defaults(func=cmd_info)

    s = sub.add_parser("gen", help="build an instance with a workload generator, to a file",
                       description="Build an instance with a generator of "
                                   "coflowopt.workloads.registry (the names bench suites use) "
                                   "and write it: a trace file or JSON (.json, .json.gz).")
    s.add_argument("kind", nargs="?", metavar="NAME",
                   help="synthetic, trace, ggen_fan_in_fan_out, rooted_trees, layered_dags, "
                        "tpcds_like, fb2010_jobs (older names: ggen, fan-in, fan-out, layered, "
                        "tpcds, fb2010)")
    s.add_argument("-o", "--output", help="trace file, or .json / .json.gz")
    s.add_argument("--list", action="store_true", help="list the generators and parameters")
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("-p", "--param", action="append", default=[], metavar="KEY=VALUE",
                   help="any parameter of the generator, VALUE as in TOML (repeatable)")
    s.add_argument("--coflows", type=int, default=None,
                   help="synthetic: n_coflows (default 526)")
    s.add_argument("--load", type=float, default=None,
                   help="synthetic: target port utilisation (arrivals compressed to it)")
    s.add_argument("--jobs", type=int, default=None, help="DAG generators: n_jobs (default 10)")
    s.add_argument("--ports", type=int, default=None,
                   help="fabric ports (synthetic 150, DAG 10, fb2010_jobs: the trace's)")
    s.add_argument("--trace", default=None,
                   help="trace: path; fb2010_jobs: trace path (default: located)")
    s.add_argument("--mean-coflows", type=int, default=None,
                   help="fb2010_jobs: mean coflows per job (default 5)")
    s.add_argument("--shape", choices=["dag", "fan-in"], default=None,
                   help="fb2010_jobs: job shape (default dag)")
    s.set_defaults(func=cmd_gen)

    s = sub.add_parser("convert", help="trace <-> JSON instance, by file extension",
                       description="Convert a trace or JSON instance to the format of OUTPUT's "
                                   "extension.  A trace holds less than a JSON instance (no "
                                   "jobs of several coflows, dependencies, weights or "
                                   "deadlines; MB and ms at 0.125 MB/ms): writing one that "
                                   "would lose any of these is refused (exit 2, naming what) "
                                   "unless --lossy.")
    s.add_argument("input")
    s.add_argument("output")
    s.add_argument("--lossy", action="store_true",
                   help="write a trace even if it loses data (what is lost is printed)")
    s.set_defaults(func=cmd_convert)

    s = sub.add_parser("validate", help="check a schedule against an instance (exit 1 if not)")
    s.add_argument("instance")
    s.add_argument("schedule")
    s.add_argument("--rtol", type=float, default=1e-6, help="capacity and volume tolerance")
    s.set_defaults(func=cmd_validate)

    s = sub.add_parser("schedulers", help="list the registered algorithms")
    s.set_defaults(func=cmd_schedulers)

    import importlib

    for name in COMMAND_MODULES:
        importlib.import_module(name).add_commands(sub)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``coflowopt`` console script."""
    from coflowopt._memory import fix_mmap_threshold
    from coflowopt.interchange import InterchangeError
    from coflowopt.model import InstanceError
    from coflowopt.schedule import ScheduleError

    fix_mmap_threshold()
    args = build_parser().parse_args(argv)
    np.set_printoptions(linewidth=120)
    try:
        return int(args.func(args))
    except KeyboardInterrupt:
        print(f"coflowopt {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader went away (``| head``): stop quietly, and keep Python's exit-time flush of
        # stdout from raising again
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except (InstanceError, InterchangeError, ScheduleError, FileNotFoundError, ValueError,
            KeyError) as exc:
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        print(f"coflowopt {args.command}: error: {msg}", file=sys.stderr)
        return 2
    except OSError as exc:  # a disk, permission or device error: one line, no traceback
        from coflowopt.interchange import os_error_text

        print(f"coflowopt {args.command}: error: {os_error_text(exc)}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
