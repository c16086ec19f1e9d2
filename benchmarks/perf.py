"""The performance suite: each figure as a ratio against a reference timed in the same run.

    python benchmarks/perf.py [--repeat N] [--only NAME ...] [--out DIR] [--list]

Prints a Markdown table and writes it to ``results/perf/perf.md`` (and the numbers to
``perf.json``); ``BENCHMARKS.md`` quotes it.  Timings are the best of ``--repeat`` runs
(wall clock, one process); ``speed-up`` is reference time / our time.

Add a case with the decorator::

    @perf_case("simulator", ours="coflowopt.sim Varys", reference="event loop in pure Python")
    def _simulator(ctx: Context) -> Timing:
        inst = ctx.trace()
        return Timing(ours=ctx.best(lambda: ...), reference=ctx.best(lambda: ...))

The FB2010 trace is used where present (``COFLOWOPT_FB2010`` or ``shared/data/fb2010/``); else a
526-coflow synthetic trace stands in, and the table says so.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from coflowopt import Instance, Schedule, validate
from coflowopt.schedulers import sequential
from coflowopt.workloads import find_fb2010, read_trace, write_trace
from coflowopt.workloads.synthetic import synthetic_trace


@dataclass(frozen=True)
class Timing:
    """Seconds for ours and the reference; ``estimated``: the reference was timed on part of
    the work and scaled (the notes say how)."""

    ours: float
    reference: float
    notes: str = ""
    estimated: bool = False


@dataclass(frozen=True)
class Case:
    name: str
    ours: str
    reference: str
    func: Callable[[Context], Timing]


CASES: dict[str, Case] = {}


def perf_case(name: str, *, ours: str, reference: str
              ) -> Callable[[Callable[[Context], Timing]], Callable[[Context], Timing]]:
    """Register a perf case: ``func(ctx) -> Timing``."""

    def deco(func: Callable[[Context], Timing]) -> Callable[[Context], Timing]:
        if name in CASES:
            raise ValueError(f"perf case {name!r} registered twice")
        CASES[name] = Case(name, ours, reference, func)
        return func

    return deco


@dataclass
class Context:
    """What cases share: the repeat count, the trace (loaded once), a timer."""

    repeat: int = 5
    tmp: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="coflowopt-perf-")))

    def best(self, fn: Callable[[], object], repeat: int | None = None) -> float:
        """Best wall time of ``fn()`` over ``repeat`` runs (default ``self.repeat``)."""
        best = float("inf")
        for _ in range(repeat or self.repeat):
            t0 = time.perf_counter()
            fn()
            best = min(best, time.perf_counter() - t0)
        return best

    _cache: dict[str, object] = field(default_factory=dict)

    def trace_path(self) -> tuple[Path, str]:
        """The FB2010 trace, or a synthetic stand-in written to a temporary file."""
        if "path" not in self._cache:
            p = find_fb2010()
            if p is not None:
                self._cache["path"] = (Path(p), "FB2010")
            else:
                stand_in = self.tmp / "synthetic-526.txt"
                write_trace(synthetic_trace(526, seed=0), stand_in)
                self._cache["path"] = (stand_in, "synthetic 526-coflow stand-in (FB2010 trace "
                                                 "not found)")
        return self._cache["path"]  # type: ignore[return-value]

    def trace(self) -> Instance:
        """The trace as an Instance (read once)."""
        if "trace" not in self._cache:
            self._cache["trace"] = read_trace(self.trace_path()[0])
        return self._cache["trace"]  # type: ignore[return-value]


# -- references ------------------------------------------------------------------------------


def naive_read(path: str | Path) -> list[tuple[int, int, int, int, float]]:
    """A straightforward reader: one Python tuple per flow (the shape of most simulators')."""
    flows = []
    with open(path) as fh:
        fh.readline()
        for line in fh:
            tok = line.split()
            if not tok:
                continue
            cid, t, nm = int(tok[0]), int(tok[1]), int(tok[2])
            maps = [int(x) for x in tok[3:3 + nm]]
            for item in tok[4 + nm:]:
                r, mb = item.split(":")
                for s in maps:
                    flows.append((cid, t, s, int(r), float(mb) / nm))
    return flows


def brute_force_validate(inst: Instance, sched: Schedule, intervals: int | None = None,
                         rtol: float = 1e-6) -> list[str]:
    """Per interval, scan every segment, add up port loads and served volume in Python dicts;
    then check every flow's volume.  ``O(K * S)``.  ``intervals``: stop after that many (for
    timing a prefix); the volume check then covers the flows seen."""
    t = sched.breakpoints.tolist()
    flow, rate = sched.flow.tolist(), sched.rate.tolist()
    first, last = sched.first.tolist(), sched.last.tolist()
    src, dst = inst.flow_src.tolist(), inst.flow_dst.tolist()
    fco, vol = inst.flow_coflow.tolist(), inst.flow_volume.tolist()
    rel = inst.release.tolist()
    cap_in, cap_out = inst.fabric.capacity_in.tolist(), inst.fabric.capacity_out.tolist()
    served: dict[int, float] = defaultdict(float)
    problems = []
    n_k = len(t) - 1 if intervals is None else min(intervals, len(t) - 1)
    for k in range(n_k):
        dt = t[k + 1] - t[k]
        load_in: dict[int, float] = defaultdict(float)
        load_out: dict[int, float] = defaultdict(float)
        for i in range(len(flow)):
            if first[i] <= k < last[i]:
                f, r = flow[i], rate[i]
                if r < 0:
                    problems.append(f"negative rate: flow {f} interval {k}")
                if t[k] < rel[fco[f]] - 1e-9:
                    problems.append(f"release: flow {f} interval {k}")
                load_in[src[f]] += r
                load_out[dst[f]] += r
                served[f] += r * dt
        for p, load in load_in.items():
            if load > cap_in[p] * (1 + rtol):
                problems.append(f"capacity: in {p} interval {k}")
        for p, load in load_out.items():
            if load > cap_out[p] * (1 + rtol):
                problems.append(f"capacity: out {p} interval {k}")
    for f in served if intervals is not None else range(len(vol)):
        if abs(served[f] - vol[f]) > vol[f] * rtol + 1e-9:
            problems.append(f"volume: flow {f}")
    return problems


# -- cases -----------------------------------------------------------------------------------


@perf_case("trace load", ours="`read_trace` + `effective_size`",
           reference="pure-Python per-flow reader")
def _trace_load(ctx: Context) -> Timing:
    path, what = ctx.trace_path()
    ours = ctx.best(lambda: read_trace(path).effective_size)
    ref = ctx.best(lambda: naive_read(path), repeat=max(1, ctx.repeat // 2))
    return Timing(ours, ref, f"{what}, {ctx.trace().n_flows:,} flows")


@perf_case("validator", ours="`validate` (vectorized)",
           reference="per-interval brute-force loop")
def _validator(ctx: Context) -> Timing:
    inst = ctx.trace()
    sched = sequential(inst)
    assert not brute_force_validate(inst, sched, intervals=2)
    ours = ctx.best(lambda: validate(inst, sched))
    k = 4
    part = ctx.best(lambda: brute_force_validate(inst, sched, intervals=k), repeat=1)
    ref = part * sched.n_intervals / k
    return Timing(ours, ref, f"sequential schedule of the {ctx.trace_path()[1]} trace: "
                  f"{sched.n_intervals} intervals x {sched.n_segments:,} segments; reference "
                  f"timed on {k} intervals and scaled by {sched.n_intervals / k:.0f}",
                  estimated=True)


@perf_case("bench harness", ours="`run_suite` (inline), default suite",
           reference="the same pipeline in a bare loop")
def _harness(ctx: Context) -> Timing:
    from coflowopt.bench import default_suite, expand, run_suite
    from coflowopt.bench.workloads import build_workload
    from coflowopt.bounds import lower_bounds
    from coflowopt.metrics import summary
    from coflowopt.schedulers import get

    suite = default_suite()
    counter = iter(range(10**6))

    def harness() -> None:
        run_suite(suite, out=ctx.tmp / f"bench-{next(counter)}", executor="inline",
                  progress=False)

    def bare() -> None:
        for t in expand(suite):
            inst = build_workload(t.workload.generator, t.workload.params, t.seed)
            lower_bounds(inst)
            v = validate(inst, get(t.scheduler.name)(inst, seed=t.algorithm_seed))
            summary(v)

    ours = ctx.best(harness, repeat=max(1, ctx.repeat // 2))
    ref = ctx.best(bare, repeat=max(1, ctx.repeat // 2))
    return Timing(ours, ref, f"{suite.n_tasks} tasks; the ratio is the harness's overhead "
                  "(durable CSV rows, per-coflow arrays, time limits); < 1 means slower")


def _first_coflows(inst: Instance, n: int) -> Instance:
    keep = np.isin(inst.flow_coflow, np.arange(n))
    return Instance.from_arrays(inst.fabric, inst.flow_src[keep], inst.flow_dst[keep],
                                inst.flow_volume[keep], inst.flow_coflow[keep],
                                coflow_id=inst.coflow_id[:n],
                                coflow_release=inst.coflow_release[:n], n_coflows=n,
                                time_unit=inst.time_unit)


def _fast_vs_reference(ctx: Context, name: str, n: int) -> Timing:
    """Scheduler ``name`` on its compiled engine against the reference engine, on the first
    ``n`` coflows of the trace; both schedules validated and checked equal flow by flow."""
    from coflowopt.schedulers import get

    inst = _first_coflows(ctx.trace(), n)
    algo = get(name)
    algo(inst)  # compile outside the measurement
    fast = algo(inst)
    ref_s = algo(inst, engine="reference")
    a, b = validate(inst, fast), validate(inst, ref_s)
    assert np.allclose(a.flow_completion, b.flow_completion, rtol=1e-9)
    ours = ctx.best(lambda: algo(inst))
    ref = ctx.best(lambda: algo(inst, engine="reference"), repeat=1)
    return Timing(ours, ref, f"first {n} coflows of the {ctx.trace_path()[1]} trace "
                  f"({inst.n_flows:,} flows, {fast.meta['events']:,} events); same schedule")


@perf_case("simulator", ours="Sincronia on the compiled incremental engine",
           reference="the same policy on the reference engine (every rate at every event)")
def _simulator(ctx: Context) -> Timing:
    return _fast_vs_reference(ctx, "sincronia", 60)


@perf_case("fair simulator", ours="per-flow fair sharing on the compiled pair-level kernel",
           reference="the same policy on the reference engine (max-min at every event)")
def _fair_simulator(ctx: Context) -> Timing:
    return _fast_vs_reference(ctx, "fair", 300)


@perf_case("ordering", ours="BSSI (`coflowopt.orders.bssi`, compiled)",
           reference="the primal-dual job order of `coflowopt.lp` with load steps only "
                     "(numpy; on one-coflow jobs it is BSSI)")
def _ordering(ctx: Context) -> Timing:
    from coflowopt.lp import order_cost, primal_dual_job_order
    from coflowopt.orders import bssi, coflow_port_loads

    inst = ctx.trace()  # one coflow per job, unit weights
    loads = coflow_port_loads(inst)
    w = np.asarray(inst.coflow_weight)
    pd_order = primal_dual_job_order(inst, kappa=1e300).order  # never a release step
    ours_cost = order_cost(inst, bssi(loads, w))
    assert math.isclose(ours_cost, order_cost(inst, pd_order), rel_tol=1e-9)
    ours = ctx.best(lambda: bssi(loads, w))
    ref = ctx.best(lambda: primal_dual_job_order(inst, kappa=1e300), repeat=1)
    return Timing(ours, ref, f"all {inst.n_coflows} coflows x {loads.shape[1]} ports of the "
                  f"{ctx.trace_path()[1]} trace; orders of equal cost")


@perf_case("LP build", ours="time-indexed LP as arrays + highspy `passModel`",
           reference="the same LP through PuLP expressions")
def _lp_build(ctx: Context) -> Timing:
    from bench_lp import SIZES, pulp_native, random_instance

    from coflowopt.lp import time_indexed_model
    from coflowopt.lp.highs import highs_model

    inst = random_instance(*SIZES["small"])
    model = time_indexed_model(inst, cuts=False)
    lp = model.relaxation()
    ours = ctx.best(lambda: highs_model(time_indexed_model(inst, cuts=False).relaxation()))
    ref = ctx.best(lambda: pulp_native(inst, model.horizon), repeat=max(1, ctx.repeat // 2))
    return Timing(ours, ref, f"{inst.n_coflows} coflows x {inst.ports} ports, "
                  f"{model.horizon} slots: {lp.nnz:,} nonzeros")


@perf_case("LP solve", ours="HiGHS through highspy arrays",
           reference="HiGHS through PuLP (`pulp.HiGHS`)")
def _lp_solve(ctx: Context) -> Timing:
    import pulp
    from bench_lp import pulp_native, random_instance

    from coflowopt.lp import solve, time_indexed_model

    inst = random_instance(16, 6, 4, 3)
    model = time_indexed_model(inst, cuts=False)
    lp = model.relaxation()
    res = solve(lp)

    def via_pulp() -> float:
        prob = pulp_native(inst, model.horizon)
        prob.solve(pulp.HiGHS(msg=False))
        return float(pulp.value(prob.objective))

    assert abs(via_pulp() - res.objective) <= 1e-6 * max(1.0, abs(res.objective))
    ours = ctx.best(lambda: solve(lp))
    ref = ctx.best(via_pulp, repeat=max(1, ctx.repeat // 2))
    return Timing(ours, ref, f"LP relaxation, {lp.nnz:,} nonzeros, build included for PuLP; "
                  "same objective")


# -- driver ----------------------------------------------------------------------------------


def run(names: list[str] | None = None, repeat: int = 5) -> list[dict[str, object]]:
    ctx = Context(repeat=repeat)
    rows = []
    for name, case in CASES.items():
        if names and name not in names:
            continue
        timing = case.func(ctx)
        rows.append({"case": name, "ours_what": case.ours, "reference_what": case.reference,
                     **asdict(timing), "speedup": timing.reference / timing.ours})
        print(f"  {name}: ours {timing.ours:.4f} s, reference {timing.reference:.4f} s",
              file=sys.stderr)
    return rows


def markdown(rows: list[dict[str, object]]) -> str:
    lines = ["| case | ours | reference | ours (s) | reference (s) | speed-up | notes |",
             "|---|---|---|---:|---:|---:|---|"]
    for r in rows:
        est = " (est.)" if r["estimated"] else ""
        lines.append(f"| {r['case']} | {r['ours_what']} | {r['reference_what']} | "
                     f"{r['ours']:.4f} | {r['reference']:.4f}{est} | {r['speedup']:.1f}x | "
                     f"{r['notes']} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5, help="best of N runs (default 5)")
    ap.add_argument("--only", nargs="+", default=None, metavar="NAME", help="run these cases")
    ap.add_argument("--out", default="results/perf", help="folder for perf.md and perf.json")
    ap.add_argument("--list", action="store_true", help="list the cases and exit")
    args = ap.parse_args(argv)
    if args.list:
        for c in CASES.values():
            print(f"{c.name}: {c.ours} vs {c.reference}")
        return 0
    unknown = sorted(set(args.only or []) - set(CASES))
    if unknown:
        ap.error(f"unknown case(s) {unknown}; known: {sorted(CASES)}")
    rows = run(args.only, args.repeat)
    table = markdown(rows)
    print(table)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "perf.md").write_text(table)
    (out / "perf.json").write_text(json.dumps(rows, indent=2))
    print(f"wrote {out / 'perf.md'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    np.set_printoptions(linewidth=120)
    sys.exit(main())
