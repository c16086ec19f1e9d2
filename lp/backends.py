"""Three thin back-ends for one :class:`~coflowopt.lp.LinearProgram`.

- ``"highs"`` (default): ``highspy``; the arrays go to HiGHS in one ``passModel`` call (CSR, no
  per-constraint expressions);
- ``"scipy"``: ``scipy.optimize.milp`` for models with integer columns, ``linprog(method="highs")``
  for LPs (which also returns row duals);
- ``"pulp"``: one PuLP variable per column and one PuLP expression per row, then any solver PuLP
  can drive (CBC by default; ``SolveParams(solver="GUROBI")``, a ``pulp.HiGHS(...)`` object, ...),
  so a user with CBC, Gurobi or CPLEX solves the same model.

``SolveParams.method`` (``"simplex"``, ``"ipm"``, ``"pdlp"``), ``tolerance`` and
``iteration_limit`` choose HiGHS's LP algorithm; scipy maps the first two to ``highs-ds`` /
``highs-ipm`` and refuses PDLP; PuLP ignores them, as it ignores ``options``.

Every back-end honours ``SolveParams.time_limit`` and returns a :class:`SolveResult`; a solver
exception becomes ``Status.ERROR`` with the message, never a lost run.  Data errors (NaN) are
caught earlier, when the :class:`LinearProgram` is made.
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp

from .highs import highs_model
from .model import LinearProgram, SolveParams, SolveResult, Status

__all__ = ["BACKENDS", "HIGHS_POOL", "HighsPool", "solve"]

INF = math.inf


class HighsPool:
    """HiGHS's thread pool, of which a process has exactly one.

    HiGHS starts it at its first run with the ``threads`` option of that run (HiGHS's own
    default when unset) and keeps it: a later run that asks for another count fails unless the
    pool is restarted (``Highs.resetGlobalScheduler``), and a run that asks for none uses the
    pool as it is.  highspy cannot tell what the pool was started with, so this object
    remembers the count it last started it with (``None``: not started here) and restarts it
    only when a run asks for a different one.  The only state it holds mirrors HiGHS's own
    process-wide state; what a solve uses is always its ``SolveParams.threads``.
    """

    def __init__(self) -> None:
        self.threads: int | None = None

    def use(self, threads: int) -> None:
        """Make the pool one of ``threads`` threads before a run that asks for that many."""
        if self.threads != int(threads):
            import highspy

            highspy.Highs.resetGlobalScheduler(True)
            self.threads = int(threads)

    def start(self, threads: int) -> None:
        """Start the pool with ``threads`` threads now (an empty run), so that every later run
        in this process that asks for no count (``SolveParams.threads`` ``None``, e.g. inside a
        scheduler) uses that many: what a process-pool worker does to use one core."""
        import highspy

        self.use(threads)
        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        h.setOptionValue("threads", int(threads))
        h.run()


#: This process's HiGHS thread pool (see :class:`HighsPool`).
HIGHS_POOL = HighsPool()


def _gap(objective: float, bound: float) -> float:
    if math.isnan(objective) or math.isnan(bound):
        return math.nan
    if math.isinf(objective) or math.isinf(bound):
        return math.inf
    return abs(objective - bound) / max(abs(objective), 1e-9)


def _solve_highs(lp: LinearProgram, params: SolveParams) -> SolveResult:
    import highspy

    t0 = time.perf_counter()
    h = highs_model(lp)
    h.setOptionValue("output_flag", bool(params.verbose))
    if math.isfinite(params.time_limit):
        h.setOptionValue("time_limit", float(params.time_limit))
    h.setOptionValue("mip_rel_gap", float(params.mip_rel_gap))
    if params.threads is not None:
        # HiGHS fixes its thread pool at the first run; a new count needs a new pool
        HIGHS_POOL.use(params.threads)
        h.setOptionValue("threads", int(params.threads))
    if not params.presolve:
        h.setOptionValue("presolve", "off")
    # the named fields first, so an explicit ``options`` entry overrides them
    for key, value in {**params.highs_options(), **(params.options or {})}.items():
        if "Error" in str(h.setOptionValue(key, value)):
            raise ValueError(f"HiGHS option {key}={value!r} refused")
    h.run()
    ms = h.getModelStatus()
    MS = highspy.HighsModelStatus
    if ms == MS.kUnboundedOrInfeasible and params.presolve:
        # presolve cannot tell which: ask again without it
        h.setOptionValue("presolve", "off")
        h.clearSolver()
        h.run()
        ms = h.getModelStatus()
    info = h.getInfo()
    has_x = info.primal_solution_status == highspy.kSolutionStatusFeasible
    sol = h.getSolution()
    x = np.asarray(sol.col_value, dtype=np.float64) if has_x else None
    obj = float(info.objective_function_value) if has_x else math.nan
    if lp.is_mip:
        bound = float(info.mip_dual_bound)
        if not math.isfinite(bound):
            bound = math.nan if not has_x else bound
    else:
        bound = obj if ms == MS.kOptimal else math.nan
    limits = (MS.kTimeLimit, MS.kIterationLimit, MS.kSolutionLimit, MS.kInterrupt,
              MS.kObjectiveBound, MS.kObjectiveTarget, MS.kMemoryLimit)
    duals = None
    # an LP stopped at a limit, or one PDLP calls optimal while HiGHS's own check of the
    # tolerances does not (status Unknown), keeps its (possibly infeasible) dual vector: any
    # dual vector gives a valid Lagrangian bound (coflowopt.lp.certify)
    if not lp.is_mip and ((ms == MS.kOptimal and sol.dual_valid) or ms in limits
                          or ms == MS.kUnknown) and len(sol.row_dual) == lp.n_rows:
        duals = np.asarray(sol.row_dual, dtype=np.float64)
    iterations = int(info.simplex_iteration_count) + int(info.ipm_iteration_count) + \
        int(info.pdlp_iteration_count)
    if ms == MS.kOptimal:
        status = Status.OPTIMAL
    elif ms == MS.kInfeasible:
        status, x, obj = Status.INFEASIBLE, None, math.nan
    elif ms in (MS.kUnbounded, MS.kUnboundedOrInfeasible):
        status = Status.UNBOUNDED if ms == MS.kUnbounded else Status.INFEASIBLE
        x, obj = None, math.nan
    elif ms in limits:
        status = Status.FEASIBLE if has_x else Status.TIME_LIMIT
    elif ms == MS.kModelEmpty:
        status, x, obj, bound = Status.OPTIMAL, np.zeros(0), lp.offset, lp.offset
    else:
        status = Status.ERROR
    if status is Status.OPTIMAL and math.isnan(bound):
        bound = obj
    return SolveResult(status, obj, bound, _gap(obj, bound) if x is not None else math.nan,
                       time.perf_counter() - t0, x, "highs", h.modelStatusToString(ms),
                       duals, lp.is_mip, max(iterations, 0))


def _solve_scipy(lp: LinearProgram, params: SolveParams) -> SolveResult:
    from scipy.optimize import Bounds, LinearConstraint, linprog, milp

    t0 = time.perf_counter()
    sign = -1.0 if lp.sense == "max" else 1.0
    c = sign * lp.cost
    options: dict[str, Any] = {"disp": bool(params.verbose), "presolve": bool(params.presolve)}
    if math.isfinite(params.time_limit):
        options["time_limit"] = float(params.time_limit)
    options.update(params.options or {})
    duals = None
    if lp.is_mip:
        options["mip_rel_gap"] = float(params.mip_rel_gap)
        cons = [LinearConstraint(lp.A, lp.row_lower, lp.row_upper)] if lp.n_rows else []
        res = milp(c, integrality=lp.integrality.astype(np.int64),
                   bounds=Bounds(lp.col_lower, lp.col_upper), constraints=cons, options=options)
        x = None if res.x is None else np.asarray(res.x, dtype=np.float64)
        bound = getattr(res, "mip_dual_bound", None)
        bound = math.nan if bound is None else sign * float(bound) + lp.offset
        code = int(res.status)
        message = str(res.message)
    else:
        A = lp.A
        lo, up = lp.row_lower, lp.row_upper
        eq = np.flatnonzero(lo == up)
        le = np.flatnonzero((lo != up) & np.isfinite(up))
        ge = np.flatnonzero((lo != up) & np.isfinite(lo))
        A_ub = sp.vstack([A[le], -A[ge]], format="csr") if le.size + ge.size else None
        b_ub = np.r_[up[le], -lo[ge]] if A_ub is not None else None
        bounds = np.c_[np.where(np.isfinite(lp.col_lower), lp.col_lower, -np.inf),
                       np.where(np.isfinite(lp.col_upper), lp.col_upper, np.inf)]
        if params.method == "pdlp":
            raise ValueError("method 'pdlp' needs the 'highs' back-end (scipy has no PDLP)")
        method = {"simplex": "highs-ds", "ipm": "highs-ipm"}.get(params.method or "", "highs")
        res = linprog(c, A_ub=A_ub, b_ub=b_ub, A_eq=A[eq] if eq.size else None,
                      b_eq=lo[eq] if eq.size else None, bounds=bounds, method=method,
                      options=options)
        x = None if res.x is None else np.asarray(res.x, dtype=np.float64)
        code = int(res.status)
        message = str(res.message)
        bound = math.nan
        if code == 0 and x is not None:
            duals = np.zeros(lp.n_rows)
            if eq.size:
                duals[eq] = sign * np.asarray(res.eqlin.marginals)
            if le.size:
                duals[le] += sign * np.asarray(res.ineqlin.marginals[:le.size])
            if ge.size:
                duals[ge] -= sign * np.asarray(res.ineqlin.marginals[le.size:])
    obj = lp.objective_value(x) if x is not None else math.nan
    if code == 0:
        status = Status.OPTIMAL
        if math.isnan(bound):
            bound = obj
    elif code == 1:
        status = Status.FEASIBLE if x is not None else Status.TIME_LIMIT
    elif code == 2:
        status, x, obj = Status.INFEASIBLE, None, math.nan
    elif code == 3:
        status, x, obj = Status.UNBOUNDED, None, math.nan
    else:
        status = Status.ERROR
    if "time limit" in message.lower() and status is Status.ERROR:
        status = Status.FEASIBLE if x is not None else Status.TIME_LIMIT
    return SolveResult(status, obj, bound, _gap(obj, bound) if x is not None else math.nan,
                       time.perf_counter() - t0, x, "scipy", message, duals, lp.is_mip)


def pulp_problem(lp: LinearProgram) -> tuple[Any, list[Any]]:
    """The model as a ``pulp.LpProblem`` (one variable per column, one expression per row;
    a row with two different finite bounds becomes two constraints) and its variables."""
    import pulp

    prob = pulp.LpProblem(_pulp_name(lp.name),
                          pulp.LpMaximize if lp.sense == "max" else pulp.LpMinimize)
    names = lp.col_names()
    lo = [None if not math.isfinite(v) else float(v) for v in lp.col_lower.tolist()]
    up = [None if not math.isfinite(v) else float(v) for v in lp.col_upper.tolist()]
    cats = ["Integer" if b else "Continuous" for b in lp.integrality.tolist()]
    add = getattr(prob, "add_variable", None)  # PuLP >= 3; LpVariable(...) before
    if add is not None:
        xs = [add(_pulp_name(n), lo[k], up[k], cat=cats[k]) for k, n in enumerate(names)]
    else:  # pragma: no cover - PuLP 2.x
        xs = [pulp.LpVariable(_pulp_name(n), lo[k], up[k], cats[k])
              for k, n in enumerate(names)]
    nz = np.flatnonzero(lp.cost)
    prob += pulp.LpAffineExpression([(xs[k], float(lp.cost[k])) for k in nz.tolist()],
                                    constant=lp.offset)
    A = lp.A
    indptr, indices, data = A.indptr, A.indices.tolist(), A.data.tolist()
    rnames = lp.row_names()
    for r in range(lp.n_rows):
        a, b = indptr[r], indptr[r + 1]
        expr = pulp.LpAffineExpression([(xs[k], v) for k, v in
                                        zip(indices[a:b], data[a:b], strict=True)])
        lo_r, up_r = float(lp.row_lower[r]), float(lp.row_upper[r])
        nm = _pulp_name(rnames[r])
        if lo_r == up_r:
            prob += pulp.LpConstraint(expr, pulp.LpConstraintEQ, nm, lo_r)
            continue
        if math.isfinite(lo_r):
            prob += pulp.LpConstraint(expr, pulp.LpConstraintGE, nm + ("_lo" if
                                      math.isfinite(up_r) else ""), lo_r)
        if math.isfinite(up_r):
            prob += pulp.LpConstraint(expr, pulp.LpConstraintLE, nm + ("_up" if
                                      math.isfinite(lo_r) else ""), up_r)
    return prob, xs


def _pulp_name(name: str) -> str:
    out = "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in name)
    return out or "_"


def _pulp_solver(params: SolveParams) -> Any:
    import pulp

    tl = params.time_limit if math.isfinite(params.time_limit) else None
    s = params.solver
    if s is None or isinstance(s, str):
        name = s or "PULP_CBC_CMD"
        kwargs: dict[str, Any] = {"msg": bool(params.verbose)}
        if tl is not None:
            kwargs["timeLimit"] = tl
        if name in ("PULP_CBC_CMD", "HiGHS", "HiGHS_CMD", "GUROBI", "GUROBI_CMD", "CPLEX_CMD",
                    "CPLEX_PY", "COIN_CMD", "SCIP_CMD"):
            kwargs["gapRel"] = params.mip_rel_gap
        if params.threads is not None and name in ("PULP_CBC_CMD", "COIN_CMD", "GUROBI",
                                                   "GUROBI_CMD", "CPLEX_CMD", "HiGHS"):
            kwargs["threads"] = params.threads
        with warnings.catch_warnings():  # PuLP 3 deprecates PULP_CBC_CMD in favour of COIN_CMD
            warnings.simplefilter("ignore", DeprecationWarning)
            return pulp.getSolver(name, **kwargs)
    return s


def _solve_pulp(lp: LinearProgram, params: SolveParams) -> SolveResult:
    import pulp

    t0 = time.perf_counter()
    prob, xs = pulp_problem(lp)
    solver = _pulp_solver(params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        prob.solve(solver)
    code = int(prob.status)
    sol = int(getattr(prob, "sol_status", code))
    values = [v.varValue for v in xs]
    has_x = all(v is not None for v in values) and sol in (1, 2)
    x = np.asarray(values, dtype=np.float64) if has_x else None
    obj = lp.objective_value(x) if x is not None else math.nan
    elapsed = time.perf_counter() - t0
    if code == 1 and sol == 1:
        status = Status.OPTIMAL
    elif sol == 2 or (code == 1 and has_x):
        status = Status.FEASIBLE
    elif code == -1 or sol == -1:
        status, x, obj = Status.INFEASIBLE, None, math.nan
    elif code == -2 or sol == -2:
        status, x, obj = Status.UNBOUNDED, None, math.nan
    elif code == 0:
        status = Status.TIME_LIMIT
    else:
        status = Status.ERROR
    bound = obj if status is Status.OPTIMAL else math.nan
    if not lp.n_cols:
        status, x, obj, bound = Status.OPTIMAL, np.zeros(0), lp.offset, lp.offset
    return SolveResult(status, obj, bound, _gap(obj, bound) if x is not None else math.nan,
                       elapsed, x, "pulp", f"{pulp.LpStatus.get(code, code)} "
                       f"({type(solver).__name__})", None, lp.is_mip)


BACKENDS: dict[str, Callable[[LinearProgram, SolveParams], SolveResult]] = {
    "highs": _solve_highs,
    "scipy": _solve_scipy,
    "pulp": _solve_pulp,
}


def solve(lp: LinearProgram, params: SolveParams | None = None, *, backend: str = "highs",
          **overrides: Any) -> SolveResult:
    """Solve ``lp`` with ``backend`` (``"highs"``, ``"scipy"`` or ``"pulp"``).

    ``overrides`` replace fields of ``params`` (``solve(lp, time_limit=5)``).  Never raises
    for a solver failure: the result's status says what happened.
    """
    if backend not in BACKENDS:
        raise ValueError(f"solve: unknown backend {backend!r}; known: {sorted(BACKENDS)}")
    if not isinstance(lp, LinearProgram):
        raise TypeError(f"solve: expected a LinearProgram, got {type(lp).__name__}")
    params = params or SolveParams()
    if overrides:
        from dataclasses import replace

        params = replace(params, **overrides)
    t0 = time.perf_counter()
    try:
        return BACKENDS[backend](lp, params)
    except Exception as exc:  # a solver failure is a result, not a lost run
        return SolveResult(Status.ERROR, math.nan, math.nan, math.nan, time.perf_counter() - t0,
                           None, backend, f"{type(exc).__name__}: {exc}", None, lp.is_mip)
