"""``coflowopt verify``: run the proofs checks and print the ratio table."""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

__all__ = ["add_commands", "cmd_verify", "cmd_worst"]


def _param(text: str) -> tuple[str, Any]:
    """``KEY=VALUE`` with VALUE read as JSON where it parses (``mode=offline`` is a string)."""
    import json

    key, sep, raw = text.partition("=")
    if not sep or not key:
        raise ValueError(f"--param {text!r}: expected KEY=VALUE")
    try:
        return key.strip(), json.loads(raw)
    except json.JSONDecodeError:
        return key.strip(), raw


def cmd_worst(args: argparse.Namespace) -> int:
    """``coflowopt verify --worst NAME``: exit 1 on a defect (a ratio above a proven factor, an
    invalid schedule), 0 otherwise (a claim exceeded is a finding), 2 on bad arguments."""
    from coflowopt.params import ParamsError

    from .worst import find_worst, format_worst, write_worst

    seconds = args.seconds
    if seconds is None and args.evaluations is None:
        seconds = 60.0
    last = [time.perf_counter()]

    def progress(res: Any) -> None:
        if args.verbose and time.perf_counter() - last[0] >= 5.0:
            last[0] = time.perf_counter()
            w = res.worst
            print(f"  {res.evaluations} evaluations, worst so far "
                  f"{'-' if w is None else f'{w.ratio:.4f}'}", flush=True)

    try:
        params = dict(_param(t) for t in args.param or [])
        start = None
        if args.start:
            from coflowopt.interchange import load_instance

            start = load_instance(args.start)
        print(f"coflowopt verify --worst {args.worst} (seed {args.seed}, "
              + (f"{args.evaluations} evaluations" if args.evaluations is not None else "")
              + (", " if args.evaluations is not None and seconds is not None else "")
              + (f"wall cap {seconds:g}s" if seconds is not None else "") + ")", flush=True)
        res = find_worst(args.worst, evaluations=args.evaluations, seconds=seconds,
                         seed=args.seed, claim=args.claim, factor=args.factor, params=params,
                         assumes=tuple(args.assume or ()), metric=args.metric,
                         reference=args.reference, start=start, progress=progress)
    except (KeyError, ValueError, ParamsError, OSError) as exc:
        msg = exc.args[0] if exc.args else str(exc)
        print(f"coflowopt verify: error: {msg}", file=sys.stderr)
        return 2
    print(format_worst(res))
    if args.out:
        if res.worst is None and res.first_defect is None:
            print(f"nothing written to {args.out}: no instance with a ratio")
        else:
            paths = write_worst(res, args.out)
            print("written: " + ", ".join(f"{k} {v}" for k, v in paths.items()))
    return 1 if res.verdict in ("defect", "violation") else 0


def cmd_verify(args: argparse.Namespace) -> int:
    from coflowopt.schedulers.registry import FACTOR_LEGEND

    from .registry import all_checks
    from .runner import NO_CONSTANT, format_failures, format_sizes, format_table, load, run_checks

    if args.worst:
        return cmd_worst(args)
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
    w = s.add_argument_group(
        "worst-case finder", "--worst NAME: a seeded local search over small instances for the "
        "worst ALG / OPT of one registered algorithm, against its proven factor (exit 1 if "
        "exceeded) and an optional claimed one (a finding, exit 0); docs/worst-case.md")
    w.add_argument("--worst", metavar="NAME", help="search this scheduler's worst case")
    w.add_argument("--seconds", type=float, default=None,
                   help="wall cap in seconds (default 60 when --evaluations is not given)")
    w.add_argument("--evaluations", type=int, default=None,
                   help="budget in evaluations: the same seed and budget give the same search "
                        "on any machine")
    w.add_argument("--out", metavar="FILE", help="write the worst instance (interchange JSON, "
                   "for coflowopt run --trace FILE) and its OPT and ALG schedules beside it")
    w.add_argument("--claim", metavar="EXPR", help="a claimed, unproven factor to test, e.g. 3 "
                   "or '2 + 1/LB' (names: m ports, n coflows, mu coflows per job, LB = min_k "
                   "r_k + rho_k)")
    w.add_argument("--factor", metavar="EXPR",
                   help="replace the registry's proven factor (when its text is prose)")
    w.add_argument("--param", action="append", metavar="KEY=VALUE",
                   help="a parameter of the scheduler (repeatable; VALUE as JSON if it parses)")
    w.add_argument("--assume", action="append", metavar="WHAT",
                   help="'release 0' or 'single-stage' (repeatable): the class of --claim / "
                        "--factor; without them, narrows the class of the entry's factor "
                        "(its factor_assumes)")
    w.add_argument("--reference", choices=("opt", "lb"), default="opt",
                   help="opt: exact fluid optimum or OPT_slot (default); lb: LP lower bounds "
                        "only (upper estimates, never a violation; the worst instance is "
                        "re-evaluated against the optimum)")
    w.add_argument("--start", metavar="FILE", help="start from this instance (interchange "
                   "JSON, e.g. a known bad case or a file --out wrote) instead of a random one")
    w.add_argument("--metric", choices=("weighted_completion", "weighted_jct", "makespan"),
                   help="the objective (default: the entry's factor metric)")
    s.set_defaults(func=cmd_verify)


if __name__ == "__main__":  # pragma: no cover
    p = argparse.ArgumentParser(prog="coflowopt")
    add_commands(p.add_subparsers(dest="command", required=True))
    a = p.parse_args()
    sys.exit(a.func(a))
