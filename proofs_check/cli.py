"""``coflowopt verify``: run the proofs checks and print the ratio table."""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

__all__ = ["add_commands", "cmd_verify"]


def cmd_verify(args: argparse.Namespace) -> int:
    from coflowopt.schedulers.registry import FACTOR_LEGEND

    from .registry import all_checks
    from .runner import NO_CONSTANT, format_failures, format_sizes, format_table, load, run_checks

    load()
    if args.list:
        width = max((len(c.factor_label) for c in all_checks().values()), default=0)
        for name, chk in all_checks().items():
            missing = chk.missing()
            state = f"  (skipped: {', '.join(missing)} not registered)" if missing else ""
            what = f"  [{NO_CONSTANT}: reports ratio / ({chk.function})]" \
                if chk.kind == "report" else ""
            print(f"{name:<26} factor {chk.factor_label:<{width}} {chk.theorem}{what}{state}")
        print(FACTOR_LEGEND)
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
    print(FACTOR_LEGEND)
    sizes = format_sizes(reports)
    if sizes:
        print(f"{NO_CONSTANT}: ratio / stated function by size; reported, never counted as "
              "passed (these checks fail only on a broken sanity bound)")
        print(sizes)
    n = sum(r.n for r in reports)
    failed = [r.name for r in reports if r.status == "failed"]
    skipped = [r for r in reports if r.status == "skipped"]
    reported = [r for r in reports if r.status == "reported"]
    for r in skipped:
        print(f"skipped {r.name}: {r.reason}")
    for r in reports:
        for note in r.notes[:3] if args.verbose else []:
            print(f"note {r.name}: {note}")
    if failed:
        print(format_failures(reports))
    print(f"{n} instances, {len(reports) - len(skipped)} checks run, {len(skipped)} skipped, "
          f"{len(failed)} failed in {time.perf_counter() - t0:.1f}s"
          + (f" ({len(reported)} without a constant: reported only)" if reported else ""))
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
