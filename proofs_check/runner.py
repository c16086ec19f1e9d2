"""Run checks (in-process or over a process pool) and format the ratio table."""

from __future__ import annotations

import json
import math
import time
import traceback
import zlib
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Any

import numpy as np

from coflowopt.model import Instance

from .registry import SCALED, SIZE_M, SIZE_MU, Check, CheckReport, Trial, all_checks

__all__ = ["NO_CONSTANT", "format_failures", "format_sizes", "format_table", "instance_of",
           "load", "run_checks", "run_trial"]

NO_CONSTANT = "no proven constant (an O(.) result, a contested claim or none)"

def load() -> None:
    """Import the check modules (the schedulers come from the registry's table); a second call
    finds them in ``sys.modules`` and registers nothing again."""
    import importlib

    # registration, in table order: formulation checks, then algorithm checks
    importlib.import_module(f"{__package__}.lp_checks")
    importlib.import_module(f"{__package__}.algorithm_checks")
    importlib.import_module(f"{__package__}.rounding_checks")
    importlib.import_module(f"{__package__}.yosemite_checks")


def instance_of(check: Check, index: int, seed: int) -> Instance:
    """Instance ``index`` of ``check`` for ``seed`` (the same in every process)."""
    rng = np.random.default_rng([int(seed), zlib.crc32(check.name.encode()), int(index)])
    return check.instances(rng, index)


def _resolve(check: Check, algorithms: Mapping[str, Any] | None) -> dict[str, Any]:
    from coflowopt.schedulers import registry

    reg = registry()
    out: dict[str, Any] = {}
    for r in check.requires:
        if algorithms is not None and r in algorithms:
            out[r] = algorithms[r]
        else:
            out[r] = reg[r]
    return out


def run_trial(check: Check, index: int, seed: int,
              algorithms: Mapping[str, Any] | None = None) -> tuple[Trial, str | None]:
    """Evaluate one instance; an exception becomes a failed trial (``NotImplementedError`` /
    ``ImportError``: a skipped one).  Returns the trial and, when it failed, the instance as
    JSON."""
    inst = None
    try:
        inst = instance_of(check, index, seed)
        trial = check.evaluate(inst, _resolve(check, algorithms))
    except (NotImplementedError, ImportError) as exc:
        trial = Trial(None, skipped=f"{type(exc).__name__}: {exc}")
    except Exception as exc:
        tb = traceback.format_exc(limit=4).strip().splitlines()
        trial = Trial(False, message=f"{type(exc).__name__}: {exc} [{tb[-3].strip()}]"
                      if len(tb) >= 3 else f"{type(exc).__name__}: {exc}")
    dump = None
    if trial.ok is False and inst is not None:
        from coflowopt.interchange import instance_to_dict

        dump = json.dumps(instance_to_dict(inst), separators=(",", ":"))
    return trial, dump


def _worker_init(threads: int) -> None:
    """Process-pool worker initializer: HiGHS's pool of this process gets ``threads`` threads
    (every LP a check solves asks for none, so ``jobs`` workers use ``jobs`` cores with
    ``threads=1``), and the checks are registered."""
    from coflowopt.lp.backends import HIGHS_POOL

    HIGHS_POOL.start(threads)
    load()


def _worker(name: str, index: int, seed: int) -> tuple[str, int, Trial, str | None, float]:
    check = all_checks()[name]
    t0 = time.perf_counter()
    trial, dump = run_trial(check, index, seed)
    return name, index, trial, dump, time.perf_counter() - t0


def _summarize(check: Check, trials: list[tuple[int, Trial, str | None]], runtime: float
               ) -> CheckReport:
    report = check.kind == "report"
    rep = CheckReport(check.name, "reported" if report else "passed", check.factor,
                      check.objective, runtime=runtime, kind=check.kind,
                      factor_source=check.factor_source, function=check.function)
    ratios = []
    refs: Counter[str] = Counter()
    sizes: dict[tuple[int, int], list[float]] = {}
    for index, t, dump in sorted(trials, key=lambda x: x[0]):
        if t.skipped:
            rep.skipped_trials += 1
            if t.skipped not in rep.notes:
                rep.notes.append(t.skipped)
            continue
        rep.n += 1
        if t.ok is True:
            rep.passed += 1
        elif t.ok is False:
            rep.failed += 1
            rep.failures.append((index, t.message, dump or ""))
        else:
            rep.inconclusive += 1
            if t.message:
                rep.notes.append(f"instance {index}: {t.message}")
        if report:
            x = t.values.get(SCALED)
            if x is not None and math.isfinite(x):
                ratios.append(x)
                refs[t.reference] += 1
                key = (int(t.values.get(SIZE_M, 0)), int(t.values.get(SIZE_MU, 0)))
                sizes.setdefault(key, []).append(x)
        elif t.ratio is not None and math.isfinite(t.ratio):
            ratios.append(t.ratio)
            refs[t.reference] += 1
    if ratios:
        rep.worst = float(max(ratios))
        rep.mean = float(np.mean(ratios))
    rep.references = dict(refs)
    rep.by_size = {k: (len(v), float(max(v)), float(np.mean(v))) for k, v in sorted(sizes.items())}
    if rep.failed:
        rep.status = "failed"
    elif rep.n == 0:
        rep.status = "skipped"
        rep.reason = rep.notes[0] if rep.notes else "no instance ran"
    return rep


def run_checks(names: Sequence[str] | None = None, *, quick: bool = True, seed: int = 0,
               jobs: int = 1, algorithms: Mapping[str, Any] | None = None,
               progress: Callable[[str], None] | None = None,
               count: int | None = None) -> list[CheckReport]:
    """Run the checks ``names`` (default: all) and return one report per check.

    ``quick`` picks each check's small instance count; ``count`` overrides it; ``jobs > 1``
    spreads the instances over a process pool (each worker runs HiGHS with one thread);
    ``algorithms`` overrides registered schedulers by name (in-process runs only).
    """
    load()
    checks = all_checks()
    if names:
        unknown = [n for n in names if n not in checks]
        if unknown:
            raise KeyError(f"unknown check(s) {unknown}; known: {', '.join(checks)}")
        selected = [checks[n] for n in names]
    else:
        selected = list(checks.values())
    reports: dict[str, CheckReport] = {}
    runnable: list[Check] = []
    for chk in selected:
        missing = [r for r in chk.requires if r not in (algorithms or {})]
        missing = [r for r in missing if r in chk.missing()]
        if missing:
            reports[chk.name] = CheckReport(chk.name, "skipped", chk.factor, chk.objective,
                                            reason=f"scheduler(s) not registered: "
                                                   f"{', '.join(missing)}", kind=chk.kind,
                                            factor_source=chk.factor_source,
                                            function=chk.function)
            continue
        runnable.append(chk)
    tasks = [(chk.name, i) for chk in runnable
             for i in range(count if count is not None else chk.count(quick))]
    results: dict[str, list[tuple[int, Trial, str | None]]] = {c.name: [] for c in runnable}
    runtime: dict[str, float] = {c.name: 0.0 for c in runnable}
    if jobs <= 1 or algorithms:
        for chk in runnable:
            t0 = time.perf_counter()
            n = count if count is not None else chk.count(quick)
            for i in range(n):
                trial, dump = run_trial(chk, i, seed, algorithms)
                results[chk.name].append((i, trial, dump))
            runtime[chk.name] = time.perf_counter() - t0
            if progress:
                progress(chk.name)
    else:
        import multiprocessing as mp

        ctx = mp.get_context("spawn")
        with ProcessPoolExecutor(max_workers=jobs, mp_context=ctx, initializer=_worker_init,
                                 initargs=(1,)) as ex:
            futs = [ex.submit(_worker, name, i, seed) for name, i in tasks]
            left = Counter(name for name, _ in tasks)
            for fut in as_completed(futs):
                name, i, trial, dump, dt = fut.result()
                results[name].append((i, trial, dump))
                runtime[name] += dt
                left[name] -= 1
                if progress and left[name] == 0:
                    progress(name)
    for chk in runnable:
        reports[chk.name] = _summarize(chk, results[chk.name], runtime[chk.name])
    return [reports[c.name] for c in selected]


def _fmt(x: float) -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.3f}"


def format_table(reports: Iterable[CheckReport]) -> str:
    """The ratio table: one row per check.  A report check (no constant) shows ``reported``,
    no pass count, and worst / mean of ``ratio / f``."""
    rows = [("check", "status", "factor", "n", "pass", "fail", "inc.", "worst", "mean",
             "ratio against", "time")]
    for r in reports:
        refs = ", ".join(f"{k} x{v}" if len(r.references) > 1 else k
                         for k, v in sorted(r.references.items(), key=lambda kv: -kv[1]))
        if r.kind == "report" and r.status != "skipped":
            refs = f"{NO_CONSTANT}: ratio / ({r.function}), ratio against {refs or '-'}"
        rows.append((r.name, r.status, r.factor_label, str(r.n),
                     "-" if r.kind == "report" else str(r.passed), str(r.failed),
                     str(r.inconclusive), _fmt(r.worst), _fmt(r.mean),
                     refs or (r.reason if r.status == "skipped" else "-"),
                     f"{r.runtime:.1f}s"))
    widths = [max(len(row[k]) for row in rows) for k in range(len(rows[0]) - 2)]
    lines = []
    for row in rows:
        head = "  ".join(c.ljust(widths[k]) for k, c in enumerate(row[:-2]))
        lines.append(f"{head}  {row[-1]:>6}  {row[-2]}")
    return "\n".join(lines)


def format_sizes(reports: Iterable[CheckReport]) -> str:
    """For each report check: the largest ``ratio / f`` per instance size, a grid of ``m``
    (rows) by ``mu`` (columns), labelled as having no constant; empty when none ran."""
    out = []
    for r in reports:
        if r.kind != "report" or not r.by_size:
            continue
        ms = sorted({m for m, _ in r.by_size})
        mus = sorted({mu for _, mu in r.by_size})
        n = sum(c for c, _, _ in r.by_size.values())
        ref = ", ".join(r.references) or "-"
        out.append(f"{r.name}: max ratio / ({r.function}) by size over {n} instances, ratio "
                   f"against {ref}; {NO_CONSTANT}, not pass/fail")
        out.append("         " + "".join(f"{f'mu = {mu}':>10}" for mu in mus))
        for m in ms:
            cells = [r.by_size.get((m, mu)) for mu in mus]
            out.append(f"  m = {m:<3}" + "".join(
                f"{'-' if c is None else f'{c[1]:.3f}':>10}" for c in cells))
    return "\n".join(out)


def format_failures(reports: Iterable[CheckReport], limit: int = 3) -> str:
    """Each failure with its instance (JSON, loadable with ``instance_from_dict``)."""
    out = []
    for r in reports:
        for index, message, dump in r.failures[:limit]:
            out.append(f"FAILED {r.name} instance {index}: {message}\n  instance: {dump}")
        if len(r.failures) > limit:
            out.append(f"  ... and {len(r.failures) - limit} more failures of {r.name}")
    return "\n".join(out)
