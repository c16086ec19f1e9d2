"""The ``coflowopt`` command line.

Subcommands: ``info``, ``gen``, ``convert``, ``validate``, ``schedulers``.  Instance files are
traces in the coflow-benchmark format, or JSON instances (``.json`` / ``.json.gz``).
"""

from __future__ import annotations

import argparse
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
    "coflowopt.sim.cli",
)


def _is_json(path: str | Path) -> bool:
    name = str(path)
    return name.endswith(".json") or name.endswith(".json.gz")


def load_any(path: str | Path) -> Instance:
    """A trace file or a JSON instance, by extension."""
    from coflowopt.interchange import load_instance
    from coflowopt.workloads import read_trace

    return load_instance(path) if _is_json(path) else read_trace(path)


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


def cmd_gen(args: argparse.Namespace) -> int:
    if args.kind == "synthetic":
        from coflowopt.workloads.synthetic import synthetic_trace

        inst = synthetic_trace(args.coflows, seed=args.seed, ports=args.ports or 150)
    else:
        from coflowopt.workloads import dags

        ports = args.ports or 10
        if args.kind == "ggen":
            inst = dags.ggen_fan_in_fan_out(args.jobs, ports=ports, seed=args.seed)
        elif args.kind in ("fan-in", "fan-out"):
            inst = dags.rooted_trees(args.jobs, kind=args.kind, ports=ports, seed=args.seed)
        elif args.kind == "layered":
            inst = dags.layered_dags(args.jobs, ports=ports, seed=args.seed)
        elif args.kind == "tpcds":
            inst = dags.tpcds_like(args.jobs, ports=ports, seed=args.seed)
        else:  # fb2010
            inst = dags.fb2010_jobs(args.trace, mean_coflows=args.mean_coflows,
                                    shape=args.shape, seed=args.seed, ports=args.ports)
    if args.kind != "synthetic" and not _is_json(args.output):
        print(f"coflowopt gen: {args.output}: DAG jobs need a JSON instance file "
              "(.json or .json.gz); the trace format has no dependencies", file=sys.stderr)
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

    reg = registry()
    print(f"{'name':<14} {'kind':<8} {'clairvoyant':<12} {'factor':<10} {'objective':<28} summary")
    for info in reg.values():
        print(f"{info.name:<14} {info.kind:<8} {'yes' if info.clairvoyant else 'no':<12} "
              f"{info.factor or '-':<10} {info.objective:<28} {info.summary}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="coflowopt", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)

    s = sub.add_parser("info", help="summary statistics of a trace or JSON instance")
    s.add_argument("trace")
    s.set_defaults(func=cmd_info)

    s = sub.add_parser("gen", help="generate a synthetic trace or DAG jobs to a file")
    s.add_argument("kind", choices=["synthetic", "ggen", "fan-in", "fan-out", "layered", "tpcds",
                                    "fb2010"])
    s.add_argument("-o", "--output", required=True, help="trace file, or .json / .json.gz")
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--coflows", type=int, default=526, help="synthetic: number of coflows")
    s.add_argument("--jobs", type=int, default=10, help="DAG generators: number of jobs")
    s.add_argument("--ports", type=int, default=None,
                   help="fabric ports (synthetic 150, DAG 10, fb2010: the trace's)")
    s.add_argument("--trace", default=None, help="fb2010: trace path (default: located)")
    s.add_argument("--mean-coflows", type=float, default=5, help="fb2010: mean coflows per job")
    s.add_argument("--shape", choices=["dag", "fan-in"], default="dag", help="fb2010: job shape")
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
    from coflowopt.interchange import InterchangeError
    from coflowopt.model import InstanceError
    from coflowopt.schedule import ScheduleError

    args = build_parser().parse_args(argv)
    np.set_printoptions(linewidth=120)
    try:
        return int(args.func(args))
    except (InstanceError, InterchangeError, ScheduleError, FileNotFoundError, ValueError,
            KeyError) as exc:
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        print(f"coflowopt {args.command}: error: {msg}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
