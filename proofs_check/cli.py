"""``coflowopt verify``: run the proofs checks and print the ratio table."""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

__all__ = ["add_commands", "cmd_verify"]


def cmd_verify(args: argparse.Namespace) -> int:
    from .registry import all_checks
    from .runner import format_failures, format_table, load, run_checks

    load()
    if args.list:
        for name, chk in all_checks().items():
            missing = chk.missing()
            state = f"  (skipped: {', '.join(missing)} not registered)" if missing else ""
            print(f"{name:<26} factor {chk.factor:<12} {chk.theorem}{state}")
        return 0
    t0 = time.perf_counter()
    mode = "quick" if args.quick else "full"
    print(f"coflowopt verify ({mode}, seed {args.seed}, jobs {args.jobs})", flush=True)

    def progress(name: str) -> None:
        if args.verbose:
            print(f"  done: {name} ({time.perf_counter() - t0:.1f}s)", flush=True)

    try:
        reports = run_checks(args.check or None, quick=args.quick, seed=args.seed,
                             jobs=args.jobs, progress=progress, count=args.instances)
    except KeyError as exc:
        print(f"coflowopt verify: error: {exc.args[0]}", file=sys.stderr)
        return 2
    print(format_table(reports))
    n = sum(r.n for r in reports)
    failed = [r.name for r in reports if r.status == "failed"]
    skipped = [r for r in reports if r.status == "skipped"]
    for r in skipped:
        print(f"skipped {r.name}: {r.reason}")
    for r in reports:
        for note in r.notes[:3] if args.verbose else []:
            print(f"note {r.name}: {note}")
    if failed:
        print(format_failures(reports))
    print(f"{n} instances, {len(reports) - len(skipped)} checks run, {len(skipped)} skipped, "
          f"{len(failed)} failed in {time.perf_counter() - t0:.1f}s")
    print("ratios: 'OPT (fluid, exact)' is the true optimum; a ratio against an 'LP lower "
          "bound' over-states the true ratio; one against 'OPT_slot' under-states it.")
    return 1 if failed else 0


def add_commands(subparsers: Any) -> None:
    """Add ``verify`` to the ``coflowopt`` command line."""
    s = subparsers.add_parser(
        "verify", help="check proven approximation ratios against exact optima",
        description="Run every registered proofs check (or --check NAME ...) on small seeded "
                    "instances; exit 1 if any guarantee is violated.")
    s.add_argument("--quick", action="store_true", help="few instances per check (~200 in all)")
    s.add_argument("--check", action="append", metavar="NAME",
                   help="run only this check (repeatable); see --list")
    s.add_argument("--seed", type=int, default=0, help="seed of the instance generators")
    s.add_argument("--jobs", type=int, default=1, help="worker processes")
    s.add_argument("--instances", type=int, default=None,
                   help="instances per check (overrides --quick / full counts)")
    s.add_argument("--list", action="store_true", help="list the checks and exit")
    s.add_argument("-v", "--verbose", action="store_true", help="progress and notes")
    s.set_defaults(func=cmd_verify)


if __name__ == "__main__":  # pragma: no cover
    p = argparse.ArgumentParser(prog="coflowopt")
    add_commands(p.add_subparsers(dest="command", required=True))
    a = p.parse_args()
    sys.exit(a.func(a))
