"""Problem data: the fabric and an immutable struct-of-arrays coflow instance.

The network is one non-blocking switch with ``m`` ingress (source) and ``m`` egress (destination)
ports; only ports are capacitated.  A *flow* moves ``volume`` from ingress ``src`` to egress
``dst``; a *coflow* is a set of flows with one completion time; a *job* is a DAG of coflows whose
edges are Starts-After dependencies (no byte of the successor before every flow of the
predecessor has finished).  Finishes-Before edges (the successor may not finish before the
predecessor) are recorded where given.

Units: volumes and capacities in any consistent unit; ``time_unit`` says which.  Trace work uses
MB and ms (a 1 Gb/s port is 0.125 MB/ms); theory work uses normalized units (capacity 1).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import networkx as nx
    import scipy.sparse as sp

__all__ = [
    "CoflowSpec",
    "Fabric",
    "Instance",
    "InstanceError",
    "JobSpec",
    "build_instance",
    "from_networkx",
]

TIME_UNITS = ("ms", "unit")


class InstanceError(ValueError):
    """Invalid problem data; the message names the offending field and id."""


def frozen_array(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    a.flags.writeable = False
    return a


@dataclass(frozen=True, eq=False)
class Fabric:
    """A non-blocking ``m x m`` switch.

    ``capacity_in[i]`` and ``capacity_out[i]`` are the rates (volume per time unit) of ingress
    port ``i`` and egress port ``i`` (the papers' ``B_l``).  Uniform 1.0 by default.
    """

    ports: int
    capacity_in: np.ndarray = field(default=None)  # type: ignore[assignment]
    capacity_out: np.ndarray = field(default=None)  # type: ignore[assignment]

    def __post_init__(self) -> None:
        if isinstance(self.ports, bool) or not isinstance(self.ports, int | np.integer):
            raise InstanceError(f"Fabric.ports: expected an integer, got {self.ports!r}")
        if self.ports < 1:
            raise InstanceError(f"Fabric.ports: need at least one port, got {self.ports}")
        object.__setattr__(self, "ports", int(self.ports))
        for name in ("capacity_in", "capacity_out"):
            value = getattr(self, name)
            arr = np.full(self.ports, 1.0) if value is None else value
            arr = np.broadcast_to(np.asarray(arr, dtype=np.float64), (self.ports,)).copy()
            bad = np.flatnonzero(~np.isfinite(arr) | (arr <= 0))
            if bad.size:
                i = int(bad[0])
                raise InstanceError(
                    f"Fabric.{name}[{i}]: capacity must be finite and > 0, got {arr[i]}"
                )
            object.__setattr__(self, name, frozen_array(arr))

    @classmethod
    def uniform(cls, ports: int, capacity: float = 1.0) -> Fabric:
        """``ports`` ingress and egress ports of the same ``capacity``."""
        return cls(ports, np.full(ports, float(capacity)), np.full(ports, float(capacity)))

    @property
    def is_uniform(self) -> bool:
        c = self.capacity_in[0]
        return bool(np.all(self.capacity_in == c) and np.all(self.capacity_out == c))

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Fabric)
            and self.ports == other.ports
            and np.array_equal(self.capacity_in, other.capacity_in)
            and np.array_equal(self.capacity_out, other.capacity_out)
        )

    __hash__ = None  # type: ignore[assignment]


def _labels(values: Any, n: int, name: str) -> np.ndarray:
    """User labels: default 0..n-1; must be unique."""
    if values is None:
        arr = np.arange(n, dtype=np.int64)
    else:
        arr = np.asarray(values)
        if arr.shape != (n,):
            raise InstanceError(f"{name}: expected {n} labels, got shape {arr.shape}")
        if arr.dtype == object:
            # keep plain ints as int64, everything else as str
            if all(isinstance(v, int | np.integer) and not isinstance(v, bool) for v in arr):
                arr = arr.astype(np.int64)
            else:
                arr = arr.astype(str)
    if n:
        uniq, counts = np.unique(arr, return_counts=True)
        if uniq.size != n:
            dup = uniq[np.argmax(counts)]
            raise InstanceError(f"{name}: duplicate id {_py(dup)!r}")
    return arr


def _float_column(values: Any, n: int, name: str, default: float, labels: np.ndarray,
                  allow_nan: bool = False, minimum: float | None = 0.0,
                  strict: bool = False) -> np.ndarray:
    if values is None:
        return np.full(n, default, dtype=np.float64)
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InstanceError(f"{name}: not numeric ({exc})") from None
    if arr.shape == ():
        arr = np.full(n, float(arr))
    if arr.shape != (n,):
        raise InstanceError(f"{name}: expected {n} values, got shape {arr.shape}")
    nan = np.isnan(arr)
    if not allow_nan and nan.any():
        i = int(np.flatnonzero(nan)[0])
        raise InstanceError(f"{name}: NaN for {labels[i]} (position {i})")
    if np.isinf(arr).any():
        i = int(np.flatnonzero(np.isinf(arr))[0])
        raise InstanceError(f"{name}: infinite value for {labels[i]} (position {i})")
    if minimum is not None:
        bad = np.flatnonzero(~nan & ((arr <= minimum) if strict else (arr < minimum)))
        if bad.size:
            i = int(bad[0])
            rel = ">" if strict else ">="
            raise InstanceError(
                f"{name}: value {arr[i]} for {labels[i]} (position {i}) must be {rel} {minimum}"
            )
    return arr


def _index_column(values: Any, n: int, name: str, upper: int, labels: np.ndarray,
                  what: str) -> np.ndarray:
    try:
        raw = np.asarray(values)
        arr = raw.astype(np.int64)
    except (TypeError, ValueError) as exc:
        raise InstanceError(f"{name}: not integer ({exc})") from None
    if arr.shape != (n,):
        raise InstanceError(f"{name}: expected {n} values, got shape {arr.shape}")
    if raw.dtype.kind == "f" and not np.array_equal(raw, arr):
        i = int(np.flatnonzero(raw != arr)[0])
        raise InstanceError(f"{name}: non-integer value {raw[i]} at position {i}")
    bad = np.flatnonzero((arr < 0) | (arr >= upper))
    if bad.size:
        i = int(bad[0])
        raise InstanceError(
            f"{name}: {what} {arr[i]} out of range 0..{upper - 1} for {labels[i]}"
        )
    return arr.astype(np.int32)


def _edges(values: Any, name: str, n_coflows: int, coflow_job: np.ndarray,
           coflow_id: np.ndarray) -> np.ndarray:
    if values is None:
        return np.zeros((0, 2), dtype=np.int32)
    arr = np.asarray(values, dtype=np.int64)
    if arr.size == 0:
        return np.zeros((0, 2), dtype=np.int32)
    if arr.ndim != 2 or arr.shape[1] != 2:
        raise InstanceError(f"{name}: expected pairs [pred, succ], got shape {arr.shape}")
    bad = np.flatnonzero(((arr < 0) | (arr >= n_coflows)).any(axis=1))
    if bad.size:
        e = arr[bad[0]]
        raise InstanceError(f"{name}[{bad[0]}]: coflow index out of range in edge {e.tolist()}")
    loops = np.flatnonzero(arr[:, 0] == arr[:, 1])
    if loops.size:
        c = int(arr[loops[0], 0])
        raise InstanceError(f"{name}[{loops[0]}]: self-loop on coflow {_py(coflow_id[c])!r}")
    cross = np.flatnonzero(coflow_job[arr[:, 0]] != coflow_job[arr[:, 1]])
    if cross.size:
        a, b = (int(x) for x in arr[cross[0]])
        raise InstanceError(
            f"{name}[{cross[0]}]: edge between coflow {_py(coflow_id[a])!r} (job position "
            f"{coflow_job[a]}) and coflow {_py(coflow_id[b])!r} (job position {coflow_job[b]}) "
            "crosses jobs"
        )
    return np.unique(arr, axis=0).astype(np.int32)


def topological_order(n: int, edges: np.ndarray) -> np.ndarray | None:
    """Kahn's algorithm by levels, smallest index first within a level; ``None`` on a cycle."""
    if edges.shape[0] == 0:
        return np.arange(n, dtype=np.int64)
    indeg = np.bincount(edges[:, 1], minlength=n)
    order_idx = np.argsort(edges[:, 0], kind="stable")
    succ = edges[order_idx, 1]
    ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(edges[:, 0], minlength=n), out=ptr[1:])
    frontier = np.flatnonzero(indeg == 0)
    out = []
    while frontier.size:
        out.append(frontier)
        # successors of the whole frontier at once
        starts, ends = ptr[frontier], ptr[frontier + 1]
        lens = ends - starts
        if lens.sum() == 0:
            break
        idx = np.repeat(starts - np.cumsum(np.r_[0, lens[:-1]]), lens) + np.arange(lens.sum())
        targets = succ[idx]
        np.subtract.at(indeg, targets, 1)
        cand = np.unique(targets)
        frontier = cand[indeg[cand] == 0]
    order = np.concatenate(out) if out else np.zeros(0, dtype=np.int64)
    return order if order.size == n else None


@dataclass(frozen=True, eq=False)
class Instance:
    """An immutable coflow scheduling instance, stored column-wise (struct of arrays).

    Flows (length ``F``): ``flow_src``, ``flow_dst`` (port indices), ``flow_volume`` (>= 0; a
    zero-volume flow completes at its coflow's start), ``flow_coflow`` (coflow position).
    Coflows (length ``C``): ``coflow_id`` (labels), ``coflow_release`` (``r_j``),
    ``coflow_weight`` (``w_j``), ``coflow_job`` (job position).
    Jobs (length ``J``): ``job_id``, ``job_release`` (``rho_j``), ``job_weight``, ``job_deadline``
    (absolute time; NaN when none).
    ``starts_after``: ``(E, 2)`` coflow positions ``[pred, succ]``; ``finishes_before`` likewise.

    Build it with :func:`build_instance`, :meth:`from_arrays` or :func:`from_networkx`; every
    constructor checks the data and names the offending id.
    """

    fabric: Fabric
    flow_src: np.ndarray
    flow_dst: np.ndarray
    flow_volume: np.ndarray
    flow_coflow: np.ndarray
    coflow_id: np.ndarray
    coflow_release: np.ndarray
    coflow_weight: np.ndarray
    coflow_job: np.ndarray
    job_id: np.ndarray
    job_release: np.ndarray
    job_weight: np.ndarray
    job_deadline: np.ndarray
    starts_after: np.ndarray
    finishes_before: np.ndarray
    time_unit: str = "unit"

    # -- construction -----------------------------------------------------------------------

    @classmethod
    def from_arrays(
        cls,
        fabric: Fabric | int,
        src: Any,
        dst: Any,
        volume: Any,
        coflow: Any,
        *,
        coflow_id: Any = None,
        coflow_release: Any = None,
        coflow_weight: Any = None,
        coflow_job: Any = None,
        n_coflows: int | None = None,
        job_id: Any = None,
        job_release: Any = None,
        job_weight: Any = None,
        job_deadline: Any = None,
        n_jobs: int | None = None,
        starts_after: Any = None,
        finishes_before: Any = None,
        time_unit: str = "unit",
    ) -> Instance:
        """Build from columns.  Omitted coflow columns default to release 0, weight 1 and one
        job per coflow; omitted job columns to release 0, weight 1, no deadline."""
        if not isinstance(fabric, Fabric):
            fabric = Fabric(fabric)
        if time_unit not in TIME_UNITS:
            raise InstanceError(f"time_unit: expected one of {TIME_UNITS}, got {time_unit!r}")
        m = fabric.ports
        coflow_arr = np.asarray(coflow)
        n_flows = int(coflow_arr.shape[0]) if coflow_arr.ndim else 0
        if n_coflows is None:
            if coflow_id is not None:
                n_coflows = len(coflow_id)
            elif coflow_release is not None and np.ndim(coflow_release):
                n_coflows = len(coflow_release)
            else:
                n_coflows = int(coflow_arr.max()) + 1 if n_flows else 0
        cid = _labels(coflow_id, n_coflows, "coflows.id")
        flow_coflow = _index_column(coflow_arr, n_flows, "flows.coflow", n_coflows,
                                    _LazyFlowLabels(), "coflow position")
        lbl = _LazyFlowLabels(flow_coflow, cid)
        src_arr = _index_column(src, n_flows, "flows.src", m, lbl, "port")
        dst_arr = _index_column(dst, n_flows, "flows.dst", m, lbl, "port")
        vol = _float_column(volume, n_flows, "flows.volume", 0.0, lbl)

        if coflow_job is None:
            n_jobs_eff = n_coflows if n_jobs is None else n_jobs
            if n_jobs_eff != n_coflows:
                raise InstanceError("coflows.job: required when the number of jobs differs "
                                    "from the number of coflows")
            cjob = np.arange(n_coflows, dtype=np.int32)
            if job_id is None:
                job_id = cid
        else:
            cj = np.asarray(coflow_job)
            if n_jobs is None:
                if job_id is not None:
                    n_jobs = len(job_id)
                elif job_release is not None and np.ndim(job_release):
                    n_jobs = len(job_release)
                else:
                    n_jobs = int(cj.max()) + 1 if cj.size else 0
            n_jobs_eff = n_jobs
            cjob = _index_column(cj, n_coflows, "coflows.job", n_jobs_eff,
                                 _PrefixLabels("coflow", cid), "job position")
        jid = _labels(job_id, n_jobs_eff, "jobs.id")
        crel = _float_column(coflow_release, n_coflows, "coflows.release", 0.0,
                             _PrefixLabels("coflow", cid))
        cw = _float_column(coflow_weight, n_coflows, "coflows.weight", 1.0,
                           _PrefixLabels("coflow", cid))
        jrel = _float_column(job_release, n_jobs_eff, "jobs.release", 0.0,
                             _PrefixLabels("job", jid))
        jw = _float_column(job_weight, n_jobs_eff, "jobs.weight", 1.0, _PrefixLabels("job", jid))
        jdl = _float_column(job_deadline, n_jobs_eff, "jobs.deadline", np.nan,
                            _PrefixLabels("job", jid), allow_nan=True, minimum=None)
        sa = _edges(starts_after, "starts_after", n_coflows, cjob, cid)
        fb = _edges(finishes_before, "finishes_before", n_coflows, cjob, cid)
        return cls(
            fabric=fabric,
            flow_src=src_arr, flow_dst=dst_arr, flow_volume=vol, flow_coflow=flow_coflow,
            coflow_id=cid, coflow_release=crel, coflow_weight=cw, coflow_job=cjob,
            job_id=jid, job_release=jrel, job_weight=jw, job_deadline=jdl,
            starts_after=sa, finishes_before=fb, time_unit=time_unit,
        )

    def __post_init__(self) -> None:
        for name in (
            "flow_src", "flow_dst", "flow_volume", "flow_coflow", "coflow_id", "coflow_release",
            "coflow_weight", "coflow_job", "job_id", "job_release", "job_weight", "job_deadline",
            "starts_after", "finishes_before",
        ):
            object.__setattr__(self, name, frozen_array(np.asarray(getattr(self, name))))
        if self.time_unit not in TIME_UNITS:
            raise InstanceError(f"time_unit: expected one of {TIME_UNITS}, got {self.time_unit!r}")
        n_f, n_c, n_j = self.n_flows, self.n_coflows, self.n_jobs
        shapes = {
            "flow_src": n_f, "flow_dst": n_f, "flow_volume": n_f, "flow_coflow": n_f,
            "coflow_release": n_c, "coflow_weight": n_c, "coflow_job": n_c,
            "job_release": n_j, "job_weight": n_j, "job_deadline": n_j,
        }
        for name, n in shapes.items():
            if getattr(self, name).shape != (n,):
                raise InstanceError(f"{name}: expected length {n}, got {getattr(self, name).shape}")
        if self.starts_after.size:
            order = topological_order(n_c, self.starts_after)
            if order is None:
                self._raise_cycle()
        if self.finishes_before.size:
            both = np.concatenate([self.starts_after, self.finishes_before])
            if topological_order(n_c, both) is None:
                self._raise_cycle(both, "starts_after/finishes_before")

    def _raise_cycle(self, edges: np.ndarray | None = None, name: str = "starts_after") -> None:
        import networkx as nx

        edges = self.starts_after if edges is None else edges
        g = nx.DiGraph()
        g.add_edges_from(edges.tolist())
        cyc = nx.find_cycle(g)
        ids = [_py(self.coflow_id[a]) for a, _ in cyc]
        job = _py(self.job_id[self.coflow_job[cyc[0][0]]])
        raise InstanceError(
            f"{name}: cycle through coflows {' -> '.join(map(repr, ids + ids[:1]))} "
            f"(job {job!r})"
        )

    # -- sizes ------------------------------------------------------------------------------

    @property
    def ports(self) -> int:
        return self.fabric.ports

    @property
    def n_flows(self) -> int:
        return int(self.flow_src.shape[0])

    @property
    def n_coflows(self) -> int:
        return int(self.coflow_release.shape[0])

    @property
    def n_jobs(self) -> int:
        return int(self.job_release.shape[0])

    def __repr__(self) -> str:
        return (
            f"Instance(ports={self.ports}, flows={self.n_flows}, coflows={self.n_coflows}, "
            f"jobs={self.n_jobs}, starts_after={len(self.starts_after)}, "
            f"time_unit={self.time_unit!r})"
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Instance):
            return NotImplemented
        if self.time_unit != other.time_unit or self.fabric != other.fabric:
            return False
        names = (
            "flow_src", "flow_dst", "flow_volume", "flow_coflow", "coflow_id", "coflow_release",
            "coflow_weight", "coflow_job", "job_id", "job_release", "job_weight",
            "starts_after", "finishes_before",
        )
        return all(np.array_equal(getattr(self, n), getattr(other, n)) for n in names) and (
            np.array_equal(self.job_deadline, other.job_deadline, equal_nan=True)
        )

    __hash__ = None  # type: ignore[assignment]

    # -- derived data (cached) --------------------------------------------------------------

    @cached_property
    def release(self) -> np.ndarray:
        """Effective release of each coflow: ``max(r_c, rho_job(c))``."""
        return frozen_array(np.maximum(self.coflow_release, self.job_release[self.coflow_job]))

    @cached_property
    def coflow_flows_ptr(self) -> np.ndarray:
        """CSR pointer over :attr:`coflow_flow_order`: flows of coflow ``c`` are
        ``coflow_flow_order[ptr[c]:ptr[c+1]]``."""
        ptr = np.zeros(self.n_coflows + 1, dtype=np.int64)
        np.cumsum(np.bincount(self.flow_coflow, minlength=self.n_coflows), out=ptr[1:])
        return frozen_array(ptr)

    @cached_property
    def coflow_flow_order(self) -> np.ndarray:
        """Flow positions sorted (stably) by coflow."""
        fc = self.flow_coflow
        if fc.size < 2 or bool(np.all(fc[1:] >= fc[:-1])):
            return frozen_array(np.arange(self.n_flows, dtype=np.int64))
        return frozen_array(np.argsort(fc, kind="stable"))

    def flows_of(self, c: int) -> np.ndarray:
        """Flow positions of coflow position ``c``."""
        p = self.coflow_flows_ptr
        return self.coflow_flow_order[p[c]:p[c + 1]]

    @cached_property
    def coflow_width(self) -> np.ndarray:
        """Number of flows per coflow."""
        return frozen_array(np.diff(self.coflow_flows_ptr))

    @cached_property
    def coflow_size(self) -> np.ndarray:
        """Total volume ``V_j`` of each coflow."""
        return frozen_array(np.bincount(self.flow_coflow, weights=self.flow_volume,
                                   minlength=self.n_coflows))

    @cached_property
    def coflow_length(self) -> np.ndarray:
        """Largest flow volume of each coflow (the heuristics' *length*)."""
        out = np.zeros(self.n_coflows)
        np.maximum.at(out, self.flow_coflow, self.flow_volume)
        return frozen_array(out)

    def _loads(self, group: np.ndarray, n_groups: int) -> tuple[sp.csr_matrix, sp.csr_matrix]:
        import scipy.sparse as sp  # lazily: importing scipy costs ~25 MB the simulators skip

        m = self.ports
        shape = (n_groups, m)
        li = sp.csr_matrix((self.flow_volume, (group, self.flow_src)), shape=shape)
        lo = sp.csr_matrix((self.flow_volume, (group, self.flow_dst)), shape=shape)
        li.sum_duplicates()
        lo.sum_duplicates()
        return li, lo

    @cached_property
    def port_loads(self) -> tuple[sp.csr_matrix, sp.csr_matrix]:
        """Per-coflow port loads ``p_lj`` as sparse ``(C, m)`` matrices (ingress, egress)."""
        return self._loads(self.flow_coflow, self.n_coflows)

    @cached_property
    def job_port_loads(self) -> tuple[sp.csr_matrix, sp.csr_matrix]:
        """Per-job aggregate port loads ``d_i^j = load_i(A^j)`` (ingress, egress)."""
        return self._loads(self.coflow_job[self.flow_coflow], self.n_jobs)

    @staticmethod
    def _row_max(mat: sp.csr_matrix) -> np.ndarray:
        out = np.zeros(mat.shape[0])
        nz = np.diff(mat.indptr) > 0
        if nz.any():
            out[nz] = np.maximum.reduceat(mat.data, mat.indptr[:-1][nz])
        return out

    def _bottleneck(self, loads: tuple[sp.csr_matrix, sp.csr_matrix],
                    normalize: bool) -> np.ndarray:
        li, lo = loads
        if normalize and not self.fabric.is_uniform:
            import scipy.sparse as sp

            li = sp.csr_matrix(li.multiply(1.0 / self.fabric.capacity_in[None, :]))
            lo = sp.csr_matrix(lo.multiply(1.0 / self.fabric.capacity_out[None, :]))
            return np.maximum(self._row_max(li), self._row_max(lo))
        out = np.maximum(self._row_max(li), self._row_max(lo))
        if normalize:
            out = out / self.fabric.capacity_in[0]
        return out

    @cached_property
    def effective_size(self) -> np.ndarray:
        """Effective size ``eff(D)`` (Definition 1): the largest load any one port of a coflow
        must send or receive, in volume units."""
        return frozen_array(self._bottleneck(self.port_loads, normalize=False))

    @cached_property
    def isolation_time(self) -> np.ndarray:
        """Isolation CCT ``C_j^0 = max_l p_lj / B_l``: the minimum CCT of a coflow alone on the
        fabric (achieved by MADD / BvN), in time units."""
        return frozen_array(self._bottleneck(self.port_loads, normalize=True))

    @cached_property
    def aggregate_size(self) -> np.ndarray:
        """Job aggregate size ``Delta_j = eff(A^j)`` (Definition 2), in time units (divided by
        capacity; equal to the volume figure on a unit-capacity fabric)."""
        return frozen_array(self._bottleneck(self.job_port_loads, normalize=True))

    @cached_property
    def topological_order(self) -> np.ndarray:
        """Coflow positions in a topological order of the Starts-After edges (Kahn, smallest
        position first among ready coflows of one level)."""
        order = topological_order(self.n_coflows, self.starts_after)
        assert order is not None  # checked on creation
        return frozen_array(order)

    @cached_property
    def predecessors_ptr(self) -> tuple[np.ndarray, np.ndarray]:
        """CSR ``(ptr, pred)`` of Starts-After predecessors of each coflow."""
        e = self.starts_after
        order = np.argsort(e[:, 1], kind="stable")
        ptr = np.zeros(self.n_coflows + 1, dtype=np.int64)
        np.cumsum(np.bincount(e[:, 1], minlength=self.n_coflows), out=ptr[1:])
        return frozen_array(ptr), frozen_array(e[order, 0].astype(np.int64))

    @cached_property
    def successors_ptr(self) -> tuple[np.ndarray, np.ndarray]:
        """CSR ``(ptr, succ)`` of Starts-After successors of each coflow."""
        e = self.starts_after
        order = np.argsort(e[:, 0], kind="stable")
        ptr = np.zeros(self.n_coflows + 1, dtype=np.int64)
        np.cumsum(np.bincount(e[:, 0], minlength=self.n_coflows), out=ptr[1:])
        return frozen_array(ptr), frozen_array(e[order, 1].astype(np.int64))

    def _longest_path(self, node_weight: np.ndarray, start: np.ndarray) -> np.ndarray:
        """``finish[c] = max(start[c], max_pred finish[p]) + node_weight[c]`` over the DAG."""
        finish = start + node_weight
        if not self.starts_after.size:
            return finish
        ptr, pred = self.predecessors_ptr
        begin = start.copy()
        for c in self.topological_order:
            a, b = ptr[c], ptr[c + 1]
            if b > a:
                begin[c] = max(begin[c], finish[pred[a:b]].max())
                finish[c] = begin[c] + node_weight[c]
        return finish

    @cached_property
    def critical_path(self) -> np.ndarray:
        """Critical-path size ``T_j`` of each job (Definition 3): the longest Starts-After path
        with node weights ``C_c^0`` (isolation times), in time units."""
        finish = self._longest_path(self.isolation_time, np.zeros(self.n_coflows))
        out = np.zeros(self.n_jobs)
        np.maximum.at(out, self.coflow_job, finish)
        return frozen_array(out)

    @cached_property
    def earliest_completion(self) -> np.ndarray:
        """Lower bound on each coflow's absolute completion: releases and isolation times
        propagated along Starts-After edges."""
        return frozen_array(self._longest_path(self.isolation_time,
                                               self.release.astype(np.float64)))

    def demand_matrix(self, c: int, *, dense: bool = True) -> np.ndarray | sp.csr_matrix:
        """The ``m x m`` demand matrix ``D = (d_sr)`` of coflow position ``c`` (flows with the
        same pair summed)."""
        f = self.flows_of(c)
        m = self.ports
        import scipy.sparse as sp

        mat = sp.csr_matrix((self.flow_volume[f], (self.flow_src[f], self.flow_dst[f])),
                            shape=(m, m))
        mat.sum_duplicates()
        return mat.toarray() if dense else mat

    def coflow_index(self, coflow_id: Any) -> int:
        """Position of the coflow labelled ``coflow_id``."""
        hits = np.flatnonzero(self.coflow_id == coflow_id)
        if not hits.size:
            raise KeyError(f"no coflow with id {coflow_id!r}")
        return int(hits[0])

    # -- transformations --------------------------------------------------------------------

    def merge_parallel_flows(self) -> Instance:
        """Merge flows of one coflow that share a ``(src, dst)`` pair.

        An explicit step, never applied silently: per-flow fairness can tell such flows apart,
        a demand-matrix algorithm cannot.
        """
        m = self.ports
        key = (self.flow_coflow.astype(np.int64) * m + self.flow_src) * m + self.flow_dst
        uniq, inv = np.unique(key, return_inverse=True)
        if uniq.size == self.n_flows:
            return self
        vol = np.bincount(inv, weights=self.flow_volume, minlength=uniq.size)
        dst = uniq % m
        src = (uniq // m) % m
        cof = uniq // (m * m)
        return self.replace_flows(src, dst, vol, cof)

    def replace_flows(self, src: Any, dst: Any, volume: Any, coflow: Any) -> Instance:
        """A copy with new flow columns and everything else unchanged."""
        return Instance.from_arrays(
            self.fabric, src, dst, volume, coflow,
            coflow_id=self.coflow_id, coflow_release=self.coflow_release,
            coflow_weight=self.coflow_weight, coflow_job=self.coflow_job, job_id=self.job_id,
            job_release=self.job_release, job_weight=self.job_weight,
            job_deadline=self.job_deadline, starts_after=self.starts_after,
            finishes_before=self.finishes_before, time_unit=self.time_unit,
        )

    def to_networkx(self, job: int | None = None) -> nx.DiGraph:
        """The coflow DAG (all jobs, or job position ``job``) as a networkx ``DiGraph``.

        Nodes are coflow positions with attributes ``id``, ``job``, ``release``, ``weight``,
        ``flows`` (list of ``(src, dst, volume)``), ``effective_size``; edges carry
        ``kind="starts_after"`` or ``"finishes_before"``.  Graph attributes: ``ports``,
        ``capacity_in``, ``capacity_out``, ``time_unit`` and, per job, ``jobs``.
        """
        import networkx as nx

        g = nx.DiGraph(ports=self.ports, capacity_in=self.fabric.capacity_in.tolist(),
                       capacity_out=self.fabric.capacity_out.tolist(), time_unit=self.time_unit)
        coflows = range(self.n_coflows) if job is None else np.flatnonzero(self.coflow_job == job)
        keep = set(int(c) for c in coflows)
        jobs = sorted({int(self.coflow_job[c]) for c in keep}) if job is None else [job]
        g.graph["jobs"] = {
            _py(self.job_id[j]): {
                "release": float(self.job_release[j]), "weight": float(self.job_weight[j]),
                "deadline": None if math.isnan(self.job_deadline[j])
                else float(self.job_deadline[j]),
            }
            for j in jobs
        }
        for c in sorted(keep):
            f = self.flows_of(c)
            g.add_node(
                c, id=_py(self.coflow_id[c]), job=_py(self.job_id[self.coflow_job[c]]),
                release=float(self.coflow_release[c]), weight=float(self.coflow_weight[c]),
                flows=list(zip(self.flow_src[f].tolist(), self.flow_dst[f].tolist(),
                               self.flow_volume[f].tolist(), strict=True)),
                effective_size=float(self.effective_size[c]),
            )
        for kind, edges in (("starts_after", self.starts_after),
                            ("finishes_before", self.finishes_before)):
            for a, b in edges.tolist():
                if a in keep:
                    g.add_edge(a, b, kind=kind)
        return g


def _py(v: Any) -> Any:
    return v.item() if isinstance(v, np.generic) else v


class _LazyFlowLabels:
    """Names a flow in error messages without building F strings up front."""

    def __init__(self, flow_coflow: np.ndarray | None = None, cid: np.ndarray | None = None):
        self.fc, self.cid = flow_coflow, cid

    def __getitem__(self, i: int) -> str:
        if self.fc is None:
            return f"flow {i}"
        return f"flow {i} of coflow {_py(self.cid[self.fc[i]])!r}"


class _PrefixLabels:
    def __init__(self, what: str, ids: np.ndarray):
        self.what, self.ids = what, ids

    def __getitem__(self, i: int) -> str:
        return f"{self.what} {_py(self.ids[i])!r}"


# -- builders from plain Python objects ------------------------------------------------------


@dataclass(frozen=True)
class CoflowSpec:
    """One coflow for :func:`build_instance`.

    ``flows`` is either a sequence of ``(src, dst, volume)`` or an ``m x m`` demand matrix
    (zero entries are dropped; the matrix form cannot express parallel flows).
    """

    flows: Any
    id: Any = None
    release: float = 0.0
    weight: float = 1.0


@dataclass(frozen=True)
class JobSpec:
    """A job: its coflows and Starts-After edges ``(a, b)`` between positions in ``coflows``."""

    coflows: Sequence[CoflowSpec]
    starts_after: Sequence[tuple[int, int]] = ()
    finishes_before: Sequence[tuple[int, int]] = ()
    id: Any = None
    release: float = 0.0
    weight: float = 1.0
    deadline: float | None = None


def _flows_of_spec(spec: CoflowSpec, ports: int, label: str) -> tuple[list, list, list]:
    f = spec.flows
    if isinstance(f, np.ndarray) and f.ndim == 2 and f.shape == (ports, ports):
        s, d = np.nonzero(f)
        return s.tolist(), d.tolist(), f[s, d].astype(float).tolist()
    if isinstance(f, Mapping):
        items = [(s, d, v) for (s, d), v in f.items()]
    else:
        items = list(f)
        if items and isinstance(items[0], list | tuple | np.ndarray) and len(items) == ports and \
                all(len(r) == ports for r in items) and not all(len(r) == 3 for r in items):
            return _flows_of_spec(CoflowSpec(np.asarray(items, dtype=float)), ports, label)
    src, dst, vol = [], [], []
    for k, item in enumerate(items):
        try:
            s, d, v = item
        except (TypeError, ValueError):
            raise InstanceError(
                f"{label}: flow {k}: expected (src, dst, volume), got {item!r}"
            ) from None
        src.append(s)
        dst.append(d)
        vol.append(v)
    return src, dst, vol


def build_instance(
    ports: int | Fabric,
    *,
    coflows: Iterable[CoflowSpec | Any] | None = None,
    jobs: Iterable[JobSpec] | None = None,
    time_unit: str = "unit",
) -> Instance:
    """Build an :class:`Instance` from plain Python objects.

    Give either ``coflows`` (single-stage: one job per coflow; an item may also be a bare flow
    list or demand matrix) or ``jobs`` (multi-stage).
    """
    fabric = ports if isinstance(ports, Fabric) else Fabric(ports)
    if (coflows is None) == (jobs is None):
        raise InstanceError("build_instance: give exactly one of coflows= or jobs=")
    if coflows is not None:
        specs = [c if isinstance(c, CoflowSpec) else CoflowSpec(c) for c in coflows]
        jobs = [JobSpec([c], id=c.id) for c in specs]
        single = True
    else:
        single = False
    src: list = []
    dst: list = []
    vol: list = []
    fco: list = []
    cid, crel, cw, cj = [], [], [], []
    jid, jrel, jw, jdl = [], [], [], []
    sa, fb = [], []
    assert jobs is not None
    for j, job in enumerate(jobs):
        base = len(cid)
        for k, spec in enumerate(job.coflows):
            label = f"coflow {spec.id!r}" if spec.id is not None else f"job {j} coflow {k}"
            s, d, v = _flows_of_spec(spec, fabric.ports, label)
            src += s
            dst += d
            vol += v
            fco += [base + k] * len(s)
            cid.append(spec.id if spec.id is not None else base + k)
            crel.append(spec.release)
            cw.append(spec.weight)
            cj.append(j)
        n = len(job.coflows)
        for name, edges, out in (("starts_after", job.starts_after, sa),
                                 ("finishes_before", job.finishes_before, fb)):
            for e in edges:
                a, b = e
                if not (0 <= a < n and 0 <= b < n):
                    raise InstanceError(
                        f"job {job.id if job.id is not None else j!r}: {name} edge {tuple(e)} "
                        f"refers to a coflow outside 0..{n - 1}"
                    )
                out.append((base + a, base + b))
        jid.append(job.id if job.id is not None else j)
        jrel.append(job.release)
        jw.append(job.weight)
        jdl.append(np.nan if job.deadline is None else job.deadline)
    if single:
        jrel = crel
        jw = cw
    return Instance.from_arrays(
        fabric, np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64),
        np.asarray(vol, dtype=np.float64), np.asarray(fco, dtype=np.int64),
        coflow_id=np.asarray(cid, dtype=object), coflow_release=crel, coflow_weight=cw,
        coflow_job=cj, n_coflows=len(cid), job_id=np.asarray(jid, dtype=object),
        job_release=jrel, job_weight=jw, job_deadline=jdl, n_jobs=len(jid),
        starts_after=sa, finishes_before=fb, time_unit=time_unit,
    )


def from_networkx(
    graphs: nx.DiGraph | Sequence[nx.DiGraph],
    ports: int | Fabric | None = None,
    *,
    time_unit: str | None = None,
) -> Instance:
    """Build an instance from one coflow DAG per job.

    Each node needs ``flows`` (``(src, dst, volume)`` triples or an ``m x m`` matrix) and may
    carry ``id``, ``release``, ``weight``; each edge is a Starts-After dependency unless its
    ``kind`` is ``"finishes_before"``.  Graph attributes ``job_id``, ``release``, ``weight``,
    ``deadline`` describe the job.  A graph from :meth:`Instance.to_networkx` (with its
    ``jobs`` attribute) is split back into its jobs.
    """
    import networkx as nx

    if isinstance(graphs, nx.DiGraph):
        graphs = [graphs]
    graphs = list(graphs)
    if ports is None:
        if not graphs or "ports" not in graphs[0].graph:
            raise InstanceError("from_networkx: give ports= (the graph has no 'ports' attribute)")
        g0 = graphs[0].graph
        ports = Fabric(g0["ports"], g0.get("capacity_in"), g0.get("capacity_out"))
    if time_unit is None:
        time_unit = graphs[0].graph.get("time_unit", "unit") if graphs else "unit"
    jobs: list[JobSpec] = []
    for gi, g in enumerate(graphs):
        if g.graph.get("jobs"):
            parts = [(jid, info, [n for n, d in g.nodes(data=True) if d.get("job") == jid])
                     for jid, info in g.graph["jobs"].items()]
        else:
            parts = [(g.graph.get("job_id", None), g.graph, list(g.nodes))]
        for jid, info, nodes in parts:
            pos = {n: k for k, n in enumerate(nodes)}
            specs = []
            for n in nodes:
                d = g.nodes[n]
                if "flows" not in d:
                    raise InstanceError(f"from_networkx: graph {gi} node {n!r} has no 'flows'")
                specs.append(CoflowSpec(d["flows"], id=d.get("id", n),
                                        release=d.get("release", 0.0),
                                        weight=d.get("weight", 1.0)))
            sa, fb = [], []
            for a, b, ed in g.subgraph(nodes).edges(data=True):
                (fb if ed.get("kind") == "finishes_before" else sa).append((pos[a], pos[b]))
            jobs.append(JobSpec(specs, sa, fb, id=jid if jid is not None else len(jobs),
                                release=info.get("release", 0.0), weight=info.get("weight", 1.0),
                                deadline=info.get("deadline")))
    return build_instance(ports, jobs=jobs, time_unit=time_unit)
