"""The one LP/MILP container every formulation builds, and the result every back-end returns.

A :class:`LinearProgram` is plain arrays::

    minimize (or maximize)   c^T x + offset
    subject to               row_lower <= A x <= row_upper
                             col_lower <=   x <= col_upper
                             x_k integer  where integrality[k]

with ``A`` a ``scipy.sparse.csr_matrix``.  Formulations write their model once, as arrays, through
:class:`ModelBuilder` (blocks of columns and rows in COO form, no Python loop per nonzero); the
back-ends in :mod:`coflowopt.lp.backends` hand the same arrays to HiGHS, scipy or PuLP.

Column and row *names* are kept as blocks (``x`` of shape ``(F, T)``, ...) and spelled out only
when asked (export, PuLP), so a model with a million columns costs no million strings.

Bad data is refused when the container is made: a NaN or infinity in the cost vector or the
matrix, a NaN in a bound, a lower bound of ``+inf`` or an upper bound of ``-inf`` raise
:class:`LPDataError`, naming the field, the position and the column/row name.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

__all__ = [
    "Block",
    "LPDataError",
    "LinearProgram",
    "ModelBuilder",
    "SolveParams",
    "SolveResult",
    "Status",
]

INF = math.inf
#: the LP algorithms :attr:`SolveParams.method` names (HiGHS's ``solver`` option)
LP_METHODS = ("simplex", "ipm", "pdlp")


class LPDataError(ValueError):
    """Invalid model data; the message names the field, the position and the name."""


class Status(str, enum.Enum):  # noqa: UP042 (StrEnum needs Python 3.11)
    """Outcome of a solve.

    - ``OPTIMAL``: proven optimal (MILP: within ``mip_rel_gap``);
    - ``FEASIBLE``: a feasible solution with a gap (stopped by the time limit or another limit);
    - ``INFEASIBLE``, ``UNBOUNDED``: proven;
    - ``TIME_LIMIT``: stopped by the time limit without a feasible solution;
    - ``ERROR``: the solver failed (exception, numerical trouble); ``message`` says why.
    """

    OPTIMAL = "optimal"
    FEASIBLE = "feasible"
    INFEASIBLE = "infeasible"
    UNBOUNDED = "unbounded"
    TIME_LIMIT = "time_limit"
    ERROR = "error"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class Block:
    """A named block of consecutive columns (or rows) ``start .. start + size - 1`` laid out in
    C order with ``shape``; element ``(i, j)`` is named ``name_i_j``."""

    name: str
    start: int
    shape: tuple[int, ...]

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) if self.shape else 1

    @property
    def stop(self) -> int:
        return self.start + self.size

    def names(self) -> list[str]:
        if self.shape == ():
            return [self.name]
        idx = np.indices(self.shape).reshape(len(self.shape), -1).T
        return [self.name + "_" + "_".join(map(str, row)) for row in idx.tolist()]

    def name_of(self, k: int) -> str:
        if self.shape == ():
            return self.name
        return self.name + "_" + "_".join(map(str, np.unravel_index(k - self.start, self.shape)))


def _as_float(values: Any, n: int, name: str, default: float) -> np.ndarray:
    if values is None:
        return np.full(n, default, dtype=np.float64)
    arr = np.asarray(values, dtype=np.float64)
    if arr.shape == ():
        return np.full(n, float(arr))
    if arr.shape != (n,):
        raise LPDataError(f"{name}: expected {n} values, got shape {arr.shape}")
    return arr.copy()


def _frozen(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    a.flags.writeable = False
    return a


@dataclass(frozen=True, eq=False)
class LinearProgram:
    """An LP or MILP as arrays (see the module docstring).

    Build it with :class:`ModelBuilder` or :meth:`from_arrays`; solve it with
    :func:`coflowopt.lp.solve`; export it with :meth:`write` (``.mps`` or ``.lp``).
    ``col_blocks`` / ``row_blocks`` name the columns and rows; :meth:`values` reads a block of a
    solution back in its shape.
    """

    cost: np.ndarray
    A: sp.csr_matrix
    row_lower: np.ndarray
    row_upper: np.ndarray
    col_lower: np.ndarray
    col_upper: np.ndarray
    integrality: np.ndarray
    sense: str = "min"
    offset: float = 0.0
    name: str = "model"
    col_blocks: tuple[Block, ...] = ()
    row_blocks: tuple[Block, ...] = ()
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        cost = np.asarray(self.cost, dtype=np.float64)
        if cost.ndim != 1:
            raise LPDataError(f"cost: expected a 1-d array, got shape {cost.shape}")
        n = cost.shape[0]
        A = self.A
        if not sp.issparse(A):
            A = np.asarray(A, dtype=np.float64)
            if A.ndim != 2:
                raise LPDataError(f"A: expected a 2-d matrix, got shape {A.shape}")
        A = sp.csr_matrix(A, dtype=np.float64)
        if A.shape[1] != n:
            raise LPDataError(f"A: has {A.shape[1]} columns, cost has {n}")
        m = A.shape[0]
        if self.sense not in ("min", "max"):
            raise LPDataError(f"sense: expected 'min' or 'max', got {self.sense!r}")
        if not math.isfinite(float(self.offset)):
            raise LPDataError(f"offset: not finite ({self.offset})")
        object.__setattr__(self, "cost", _frozen(cost))
        object.__setattr__(self, "A", A)
        for fname, size, default in (("row_lower", m, -INF), ("row_upper", m, INF),
                                     ("col_lower", n, 0.0), ("col_upper", n, INF)):
            object.__setattr__(self, fname, _frozen(_as_float(getattr(self, fname), size, fname,
                                                              default)))
        integ = np.zeros(n, dtype=bool) if self.integrality is None else \
            np.asarray(self.integrality).astype(bool)
        if integ.shape != (n,):
            raise LPDataError(f"integrality: expected {n} values, got shape {integ.shape}")
        object.__setattr__(self, "integrality", _frozen(integ))
        object.__setattr__(self, "offset", float(self.offset))
        if not self.col_blocks:
            object.__setattr__(self, "col_blocks", (Block("x", 0, (n,)),) if n else ())
        if not self.row_blocks:
            object.__setattr__(self, "row_blocks", (Block("r", 0, (m,)),) if m else ())
        self.check()

    # -- construction -----------------------------------------------------------------------

    @classmethod
    def from_arrays(
        cls,
        cost: Any,
        A: Any = None,
        row_lower: Any = None,
        row_upper: Any = None,
        col_lower: Any = None,
        col_upper: Any = None,
        integrality: Any = None,
        *,
        sense: str = "min",
        offset: float = 0.0,
        name: str = "model",
    ) -> LinearProgram:
        """From plain arrays (dense or sparse ``A``; ``None`` bounds are ``-inf``/``+inf`` for
        rows and ``0``/``+inf`` for columns)."""
        cost = np.asarray(cost, dtype=np.float64)
        if A is None:
            A = sp.csr_matrix((0, cost.shape[0]))
        return cls(cost, A, row_lower, row_upper, col_lower, col_upper, integrality,
                   sense=sense, offset=offset, name=name)

    # -- checks -----------------------------------------------------------------------------

    def check(self) -> None:
        """Raise :class:`LPDataError` on NaN/inf data, naming the field, position and name."""
        bad = np.flatnonzero(~np.isfinite(self.cost))
        if bad.size:
            k = int(bad[0])
            raise LPDataError(f"cost[{k}] (column {self.col_name(k)}): {self.cost[k]} is not "
                              "a finite number")
        data = self.A.data
        bad = np.flatnonzero(~np.isfinite(data))
        if bad.size:
            p = int(bad[0])
            row = int(np.searchsorted(self.A.indptr, p, side="right") - 1)
            col = int(self.A.indices[p])
            raise LPDataError(f"A[{row}, {col}] (row {self.row_name(row)}, column "
                              f"{self.col_name(col)}): {data[p]} is not a finite number")
        for fname, arr, forbidden, namer in (
            ("row_lower", self.row_lower, INF, self.row_name),
            ("row_upper", self.row_upper, -INF, self.row_name),
            ("col_lower", self.col_lower, INF, self.col_name),
            ("col_upper", self.col_upper, -INF, self.col_name),
        ):
            bad = np.flatnonzero(np.isnan(arr) | (arr == forbidden))
            if bad.size:
                k = int(bad[0])
                what = "row" if fname.startswith("row") else "column"
                raise LPDataError(f"{fname}[{k}] ({what} {namer(k)}): {arr[k]} is not a valid "
                                  "bound")

    # -- sizes and names --------------------------------------------------------------------

    @property
    def n_cols(self) -> int:
        return int(self.cost.shape[0])

    @property
    def n_rows(self) -> int:
        return int(self.A.shape[0])

    @property
    def nnz(self) -> int:
        return int(self.A.nnz)

    @property
    def is_mip(self) -> bool:
        return bool(self.integrality.any())

    def __repr__(self) -> str:
        kind = "MILP" if self.is_mip else "LP"
        return (f"LinearProgram({self.name!r}, {kind}, cols={self.n_cols}, rows={self.n_rows}, "
                f"nnz={self.nnz}, integer={int(self.integrality.sum())})")

    @staticmethod
    def _block_of(blocks: tuple[Block, ...], k: int) -> Block | None:
        for b in blocks:
            if b.start <= k < b.stop:
                return b
        return None

    def col_name(self, k: int) -> str:
        b = self._block_of(self.col_blocks, k)
        return b.name_of(k) if b is not None else f"c{k}"

    def row_name(self, k: int) -> str:
        b = self._block_of(self.row_blocks, k)
        return b.name_of(k) if b is not None else f"r{k}"

    def col_names(self) -> list[str]:
        return _expand(self.col_blocks, self.n_cols, "c")

    def row_names(self) -> list[str]:
        return _expand(self.row_blocks, self.n_rows, "r")

    def block(self, name: str) -> Block:
        """The column block called ``name``."""
        for b in self.col_blocks:
            if b.name == name:
                return b
        raise KeyError(f"{self.name}: no column block {name!r}; blocks: "
                       f"{[b.name for b in self.col_blocks]}")

    def values(self, x: np.ndarray, name: str) -> np.ndarray:
        """The entries of solution ``x`` in column block ``name``, in the block's shape."""
        b = self.block(name)
        return np.asarray(x)[b.start:b.stop].reshape(b.shape)

    # -- transformations --------------------------------------------------------------------

    def relax(self) -> LinearProgram:
        """The LP relaxation (every column continuous, same bounds)."""
        return replace(self, integrality=np.zeros(self.n_cols, dtype=bool),
                       name=self.name + "_relaxed", meta=dict(self.meta))

    def with_rows(self, A_rows: Any, lower: Any, upper: Any, name: str = "cut") -> LinearProgram:
        """A copy with extra rows ``lower <= A_rows x <= upper`` appended (a block ``name``)."""
        A_rows = sp.csr_matrix(A_rows, dtype=np.float64)
        k = A_rows.shape[0]
        blocks = (*self.row_blocks, Block(name, self.n_rows, (k,)))
        return replace(
            self,
            A=sp.vstack([self.A, A_rows], format="csr"),
            row_lower=np.r_[self.row_lower, _as_float(lower, k, "lower", -INF)],
            row_upper=np.r_[self.row_upper, _as_float(upper, k, "upper", INF)],
            row_blocks=blocks, meta=dict(self.meta),
        )

    def objective_value(self, x: np.ndarray) -> float:
        """``c^T x + offset``."""
        return float(self.cost @ np.asarray(x, dtype=np.float64) + self.offset)

    def violation(self, x: np.ndarray) -> float:
        """Largest violation of a row or column bound by ``x`` (0 when feasible)."""
        x = np.asarray(x, dtype=np.float64)
        ax = self.A @ x
        v = [0.0]
        if ax.size:
            v += [float(np.max(self.row_lower - ax)), float(np.max(ax - self.row_upper))]
        if x.size:
            v += [float(np.max(self.col_lower - x)), float(np.max(x - self.col_upper))]
        return max(v)

    # -- export -----------------------------------------------------------------------------

    def write(self, path: str | Path) -> Path:
        """Write the model to ``path``: ``.mps`` (free MPS) or ``.lp`` (CPLEX LP format), by
        extension, through HiGHS's writer.  Any solver can read these files."""
        from .highs import highs_model

        path = Path(path)
        if path.suffix.lower() not in (".mps", ".lp"):
            raise ValueError(f"write: {path}: extension must be .mps or .lp")
        h = highs_model(self, names=True)
        status = h.writeModel(str(path))
        if str(status) not in ("HighsStatus.kOk", "HighsStatus.kWarning"):
            raise OSError(f"write: HiGHS could not write {path} ({status})")
        return path


def _expand(blocks: Sequence[Block], n: int, prefix: str) -> list[str]:
    names = [f"{prefix}{k}" for k in range(n)] if n and not blocks else []
    if blocks:
        names = [""] * n
        for b in blocks:
            names[b.start:b.stop] = b.names()
        for k in range(n):
            if not names[k]:
                names[k] = f"{prefix}{k}"
    return names


# -- building ------------------------------------------------------------------------------


class ModelBuilder:
    """Assemble a :class:`LinearProgram` from blocks of columns and rows, all as arrays.

    ``add_columns`` returns the global column indices of a new block in its shape;
    ``add_rows`` takes a block of rows in COO form (local row, global column, value) with its
    bounds.  Nothing is per nonzero in Python.
    """

    def __init__(self, name: str = "model") -> None:
        self.name = name
        self._cost: list[np.ndarray] = []
        self._lb: list[np.ndarray] = []
        self._ub: list[np.ndarray] = []
        self._int: list[np.ndarray] = []
        self._cblocks: list[Block] = []
        self._rows: list[np.ndarray] = []
        self._cols: list[np.ndarray] = []
        self._vals: list[np.ndarray] = []
        self._rlo: list[np.ndarray] = []
        self._rup: list[np.ndarray] = []
        self._rblocks: list[Block] = []
        self.n_cols = 0
        self.n_rows = 0

    def add_columns(self, name: str, shape: int | tuple[int, ...], *, lb: Any = 0.0,
                    ub: Any = INF, cost: Any = 0.0, integer: bool = False) -> np.ndarray:
        """A block of ``prod(shape)`` columns; returns their indices with ``shape``."""
        shape = (shape,) if isinstance(shape, int | np.integer) else tuple(int(s) for s in shape)
        size = int(np.prod(shape, dtype=np.int64))
        for arr_list, v in ((self._cost, cost), (self._lb, lb), (self._ub, ub)):
            a = np.broadcast_to(np.asarray(v, dtype=np.float64), shape).reshape(-1)
            arr_list.append(np.array(a, dtype=np.float64))
        self._int.append(np.full(size, bool(integer)))
        self._cblocks.append(Block(name, self.n_cols, shape))
        idx = np.arange(self.n_cols, self.n_cols + size, dtype=np.int64).reshape(shape)
        self.n_cols += size
        return idx

    def add_rows(self, name: str, n: int, rows: Any, cols: Any, vals: Any, *,
                 lower: Any = -INF, upper: Any = INF) -> np.ndarray:
        """``n`` rows ``lower <= sum vals * x[cols] <= upper`` given in COO form (``rows`` local
        in ``0..n-1``); returns their global row indices."""
        rows = np.asarray(rows, dtype=np.int64).reshape(-1)
        cols = np.asarray(cols, dtype=np.int64).reshape(-1)
        vals = np.broadcast_to(np.asarray(vals, dtype=np.float64), rows.shape).reshape(-1)
        if rows.shape != cols.shape:
            raise LPDataError(f"{name}: {rows.size} row indices but {cols.size} column indices")
        if rows.size and (rows.min() < 0 or rows.max() >= n):
            raise LPDataError(f"{name}: local row index out of 0..{n - 1}")
        if cols.size and (cols.min() < 0 or cols.max() >= self.n_cols):
            raise LPDataError(f"{name}: column index out of 0..{self.n_cols - 1}")
        self._rows.append(rows + self.n_rows)
        self._cols.append(cols)
        self._vals.append(np.array(vals))
        self._rlo.append(np.broadcast_to(np.asarray(lower, dtype=np.float64), (n,)).copy())
        self._rup.append(np.broadcast_to(np.asarray(upper, dtype=np.float64), (n,)).copy())
        self._rblocks.append(Block(name, self.n_rows, (n,)))
        out = np.arange(self.n_rows, self.n_rows + n, dtype=np.int64)
        self.n_rows += n
        return out

    def build(self, *, sense: str = "min", offset: float = 0.0,
              meta: dict[str, Any] | None = None) -> LinearProgram:
        def cat(xs: list[np.ndarray], dt: Any) -> np.ndarray:
            return np.concatenate(xs).astype(dt) if xs else np.zeros(0, dt)

        rows, cols, vals = cat(self._rows, np.int64), cat(self._cols, np.int64), \
            cat(self._vals, np.float64)
        A = sp.csr_matrix((vals, (rows, cols)), shape=(self.n_rows, self.n_cols))
        A.sum_duplicates()
        return LinearProgram(
            cost=cat(self._cost, np.float64), A=A,
            row_lower=cat(self._rlo, np.float64), row_upper=cat(self._rup, np.float64),
            col_lower=cat(self._lb, np.float64), col_upper=cat(self._ub, np.float64),
            integrality=cat(self._int, bool), sense=sense, offset=offset, name=self.name,
            col_blocks=tuple(self._cblocks), row_blocks=tuple(self._rblocks),
            meta=dict(meta or {}),
        )


# -- solving: parameters and results --------------------------------------------------------


@dataclass(frozen=True)
class SolveParams:
    """Solver settings shared by all back-ends.

    ``time_limit`` in seconds (``inf``: none); ``mip_rel_gap``: relative gap at which a MILP
    counts as solved (HiGHS's default is 1e-4; exact checks want it tight); ``threads``:
    ``None`` leaves the solver's default; ``solver``: for the PuLP back-end, a PuLP solver
    object or name (``"PULP_CBC_CMD"``, ``"HiGHS"``, ``"GUROBI"``, ``"CPLEX_CMD"``, ...);
    ``options``: extra solver options by name, passed to HiGHS (``{"solver": "ipm"}``) or to
    ``scipy.optimize`` (its ``options`` dict); the PuLP back-end ignores them.

    LP algorithm (HiGHS back-end; ``None`` everywhere leaves HiGHS's defaults):

    - ``method``: ``"simplex"``, ``"ipm"`` (interior point) or ``"pdlp"`` (HiGHS's first-order
      primal-dual hybrid gradient solver, cuPDLP-C: matrix-vector products only, so it reaches
      models that simplex and interior point cannot factor in time; its answer is accurate to
      ``tolerance`` only, which is why a bound from it goes through
      :func:`coflowopt.lp.certify.certified_solve`);
    - ``tolerance``: the relative accuracy asked for: primal and dual feasibility tolerances, and
      for PDLP its KKT tolerances (``kkt_tolerance``, ``pdlp_optimality_tolerance``: relative
      residuals and duality gap), for IPM ``ipm_optimality_tolerance``;
    - ``iteration_limit``: stop after this many iterations of the chosen method (a stopped LP
      returns its current primal and dual vectors with status ``FEASIBLE``/``TIME_LIMIT``).
    """

    time_limit: float = INF
    mip_rel_gap: float = 1e-6
    threads: int | None = None
    verbose: bool = False
    presolve: bool = True
    solver: Any = None
    options: dict[str, Any] | None = None
    method: str | None = None
    tolerance: float | None = None
    iteration_limit: int | None = None

    def __post_init__(self) -> None:
        if not (self.time_limit > 0):
            raise ValueError(f"SolveParams.time_limit: must be > 0, got {self.time_limit}")
        if not (0 <= self.mip_rel_gap < 1):
            raise ValueError(f"SolveParams.mip_rel_gap: must be in [0, 1), got "
                             f"{self.mip_rel_gap}")
        if self.method is not None and self.method not in LP_METHODS:
            raise ValueError(f"SolveParams.method: expected one of {LP_METHODS}, got "
                             f"{self.method!r}")
        if self.tolerance is not None and not (0 < self.tolerance < 1):
            raise ValueError(f"SolveParams.tolerance: must be in (0, 1), got {self.tolerance}")
        if self.iteration_limit is not None and self.iteration_limit < 0:
            raise ValueError(f"SolveParams.iteration_limit: must be >= 0, got "
                             f"{self.iteration_limit}")

    def highs_options(self) -> dict[str, Any]:
        """The HiGHS options that ``method``, ``tolerance`` and ``iteration_limit`` stand for."""
        out: dict[str, Any] = {}
        method = self.method
        if method is not None:
            out["solver"] = method
        if self.tolerance is not None:
            tol = float(self.tolerance)
            out["primal_feasibility_tolerance"] = tol
            out["dual_feasibility_tolerance"] = tol
            if method == "pdlp":
                # HiGHS 1.16 names PDLP's stopping rule kkt_tolerance (feasibility and gap);
                # older releases called the gap part pdlp_d_gap_tol
                out["kkt_tolerance"] = tol
                out["pdlp_optimality_tolerance"] = tol
            elif method == "ipm":
                out["ipm_optimality_tolerance"] = tol
        if self.iteration_limit is not None:
            key = {"pdlp": "pdlp_iteration_limit", "ipm": "ipm_iteration_limit"}.get(
                method or "simplex", "simplex_iteration_limit")
            out[key] = int(self.iteration_limit)
        return out


@dataclass(frozen=True, eq=False)
class SolveResult:
    """What every solve returns (never an exception).

    ``objective``: value of the returned solution (NaN without one); ``bound``: the solver's
    proven bound on the optimum (a lower bound when minimizing; equal to ``objective`` at an
    LP optimum; NaN when unknown); ``gap``: ``|objective - bound| / max(|objective|, 1e-9)``
    (NaN when unknown); ``runtime`` in seconds (wall clock, including model hand-over);
    ``x``: the column values or ``None``; ``row_dual``: LP duals where the back-end gives
    them (HiGHS: also of an LP stopped at a limit, whose dual vector still yields a certified
    bound, :mod:`coflowopt.lp.certify`); ``iterations``: the LP algorithm's iteration count
    where known (simplex, IPM or PDLP iterations; 0 otherwise).
    """

    status: Status
    objective: float
    bound: float
    gap: float
    runtime: float
    x: np.ndarray | None
    backend: str
    message: str = ""
    row_dual: np.ndarray | None = None
    is_mip: bool = False
    iterations: int = 0

    @property
    def has_solution(self) -> bool:
        return self.x is not None and self.status in (Status.OPTIMAL, Status.FEASIBLE)

    @property
    def optimal(self) -> bool:
        return self.status is Status.OPTIMAL

    def __repr__(self) -> str:
        return (f"SolveResult({self.status.value}, objective={self.objective:.6g}, "
                f"bound={self.bound:.6g}, gap={self.gap:.3g}, runtime={self.runtime:.3f}s, "
                f"backend={self.backend!r})")
