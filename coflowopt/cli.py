"""The ``coflowopt`` command line.

Subcommands: ``info``, ``gen``, ``convert``, ``validate``, ``schedulers``.  Instance files are
traces in the coflow-benchmark format, or JSON instances (``.json`` / ``.json.gz``).
"""

from __future__ import annotations

import argparse
import os
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
    unit = "MB" if inst.time_unit == "ms" else "units"
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
        for k, v in stats.items():
            print(f"    {k:<34} {_fmt(float(v))}")
    return 0


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


def cmd_convert(args: argparse.Namespace) -> int:
    inst = load_any(args.input)
    _save_any(inst, args.output)
    print(f"wrote {args.output}: {inst}")
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

    print(f"{'name':<11} {'semantics':<10} {'family':<9} {'kind':<8} {'clairvoyant':<12} "
          f"{'DAGs':<5} {'factor':<7} {'objective':<30} summary")
    for info in registry(None).values():
        dags = "needs" if info.needs_starts_after else ("yes" if info.multistage else "no")
        print(f"{info.name:<11} {info.semantics:<10} {info.family:<9} {info.kind:<8} "
              f"{'yes' if info.clairvoyant else 'no':<12} {dags:<5} {info.factor or '-':<7} "
              f"{info.objective:<30} {info.summary}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="coflowopt", description=__doc__.splitlines()[0])
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

    s = sub.add_parser("convert", help="trace <-> JSON instance, by file extension")
    s.add_argument("input")
    s.add_argument("output")
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


if __name__ == "__main__":
    sys.exit(main())
