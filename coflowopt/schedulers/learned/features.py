"""DeepWeave's input: one job DAG as arrays (Sun et al., IJCAI 2020, Sec. 2 and 3.3).

Graph.  DeepWeave's job DAG has computation stages as nodes and coflows as edges, every node
with at most one outgoing edge, so a coflow is identified with its source node [R].  Here one
node is one coflow of the job (its position in the instance) and the node's *children* are its
successors along Starts-After edges (the coflows that wait for it).  Message passing runs from
the descendants towards each node, one level at a time, leaves (coflows nothing waits for)
first: ``level(i) = 0`` for a leaf, else ``1 + max level(child)``.

Node features ``x_i`` [C] (the paper names only "e.g. its computation cost"; the list is ours;
the instance model has no computation stages, so
"computation time" is left out), each scaled to ``[0, 1]`` within its job:

====  ======================================================  ============================
col   feature                                                 scaled by
====  ======================================================  ============================
0     total volume ``V_i`` of the coflow                      the job's largest ``V``
1     number of flows (width)                                 the job's largest width
2     largest flow size (length)                              the job's largest ``V``
3     isolation CCT ``C_i^0``                                 the job's largest ``C^0``
4     remaining volume                                        the job's largest ``V``
5     number of unfinished children                           the job's largest out-degree
6-9   status flags: waiting / ready / running / done          (0 or 1, exactly one set)
====  ======================================================  ============================

Feature set ``"v2"`` [C] (issue 30: give the network the heuristics' own scores) appends four
columns, each normalised over the whole *instance* (all jobs), so that priorities of different
jobs are on one scale and a policy can order the ready coflows of every job at once:

====  ======================================================  ============================
col   feature                                                 scaled by
====  ======================================================  ============================
10    BSSI rank among the ready coflows on their remaining    number of ready coflows - 1
      volumes (Sincronia, Agarwal et al., SIGCOMM 2018:       (1 for a coflow not ready)
      its online order at this epoch; 0 = served first)
11    G-DM-BF's backfilling rank (Shafiee and Ghaderi, ToN    number of coflows - 1
      2021: primal-dual job order, then topological order)
12    remaining bottleneck: largest remaining port load       the instance's largest
      ``max_l p_il / cap_l`` of the coflow                    bottleneck
13    critical-path remainder: the bottleneck plus the        the instance's largest
      largest remainder among its children                    remainder
====  ======================================================  ============================

Scaling within the job [C] makes the features independent of the time and volume units of
the workload (ms and MB for traces, normalised units for theory instances), so one checkpoint
serves both; a checkpoint may add an affine normalisation on top (``norm.shift``,
``norm.scale`` in :mod:`.network`).  *waiting*: not done and not ready (a predecessor is
unfinished or the coflow is not released); *ready*: released, every predecessor done,
nothing sent yet; *running*: ready with some volume sent; *done*: every flow complete.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from coflowopt._jit import njit
from coflowopt.model import Instance

__all__ = ["FEATURE_NAMES", "FEATURE_SETS", "HEURISTIC_NAMES", "N_FEATURES", "CoflowTotals",
           "DagBatch", "DagState", "PortLoads", "as_state", "coflow_features", "coflow_totals",
           "gdm_positions", "heuristic_features", "instance_batch", "instance_features",
           "job_batches", "n_features", "node_levels"]

FEATURE_NAMES: tuple[str, ...] = (
    "volume", "width", "length", "isolation_cct", "remaining", "unfinished_children",
    "waiting", "ready", "running", "done",
)
N_FEATURES: int = len(FEATURE_NAMES)
HEURISTIC_NAMES: tuple[str, ...] = ("bssi_rank", "gdm_position", "bottleneck", "critical_path")
#: The feature sets by name: ``"v1"`` (the first ten columns), ``"v2"`` (with the heuristics').
FEATURE_SETS: dict[str, tuple[str, ...]] = {"v1": FEATURE_NAMES,
                                            "v2": FEATURE_NAMES + HEURISTIC_NAMES}


def n_features(feature_set: str) -> int:
    """Number of columns of ``feature_set``; :class:`ValueError` naming an unknown one."""
    if feature_set not in FEATURE_SETS:
        raise ValueError(f"feature_set: must be one of {', '.join(FEATURE_SETS)}, got "
                         f"{feature_set!r}")
    return len(FEATURE_SETS[feature_set])


@dataclass(frozen=True)
class DagState:
    """The dynamic part of the features at one instant.

    ``time``: the current time; ``remaining``: ``(F,)`` remaining volume per flow; ``done``:
    ``(C,)`` coflow complete; ``ready``: ``(C,)`` coflow active (released, every Starts-After
    predecessor complete, not done).  A coflow is *running* when it is ready and has sent
    something (remaining below its volume).
    """

    time: float
    remaining: np.ndarray
    done: np.ndarray
    ready: np.ndarray

    @classmethod
    def initial(cls, instance: Instance, time: float | None = None) -> DagState:
        """Nothing sent, nothing done; ready = no Starts-After predecessor and released by
        ``time``, or with ``time=None`` [C] each job as at its own arrival (released by its
        job's release), so a job's initial features do not depend on when it arrives."""
        inst = instance
        has_pred = np.zeros(inst.n_coflows, dtype=bool)
        has_pred[inst.starts_after[:, 1]] = True
        at = inst.job_release[inst.coflow_job] if time is None else time
        ready = (inst.release <= at) & ~has_pred
        t = float(inst.job_release.min()) if time is None and inst.n_jobs else float(time or 0)
        return cls(t, np.asarray(inst.flow_volume, dtype=np.float64).copy(),
                   np.zeros(inst.n_coflows, dtype=bool), ready)

    @classmethod
    def from_view(cls, view: Any, *, copy: bool = True) -> DagState:
        """The state a clairvoyant policy sees in the simulator (a
        :class:`~coflowopt.sim.engine.SimView`): active coflows are ready; a coflow admitted
        earlier and no longer active is done.  ``copy=False``: the view's remaining volumes
        themselves (for a caller that reads them before the simulator moves on)."""
        n = view.admitted.shape[0]
        ready = np.zeros(n, dtype=bool)
        ready[view.coflows] = True
        done = ~np.isnan(view.admitted) & ~ready
        rem = np.asarray(view.remaining, dtype=np.float64)
        return cls(float(view.t), rem.copy() if copy else rem, done, ready)

    def check(self, instance: Instance) -> None:
        """Shapes against ``instance``; a one-line :class:`ValueError` naming the field."""
        for name, n in (("remaining", instance.n_flows), ("done", instance.n_coflows),
                        ("ready", instance.n_coflows)):
            a = np.asarray(getattr(self, name))
            if a.shape != (n,):
                raise ValueError(f"DagState.{name}: expected shape ({n},), got {a.shape}")


@dataclass(frozen=True)
class DagBatch:
    """One job DAG as arrays (one node = one coflow of the job; module docstring).

    ``x``: ``(V, F)`` float64 node features (normalised, see the module docstring);
    ``children_ptr``, ``children``: CSR of each node's children (local node ids, the successors
    along Starts-After edges), children sorted by id; ``level_ptr``, ``level_nodes``: node ids
    grouped by level, leaves (level 0) first, ids ascending inside a level;
    ``level_edge_ptr``, ``edge_child``: the children of the nodes of each level, concatenated
    in ``level_nodes`` order (level ``l``'s are ``edge_child[level_edge_ptr[l]:
    level_edge_ptr[l+1]]``), for message passing; ``coflows``: ``(V,)`` coflow positions in
    the instance (ascending); ``job``: the job position.
    """

    x: np.ndarray
    children_ptr: np.ndarray
    children: np.ndarray
    level_ptr: np.ndarray
    level_nodes: np.ndarray
    level_edge_ptr: np.ndarray
    edge_child: np.ndarray
    coflows: np.ndarray
    job: int = 0

    @property
    def n_nodes(self) -> int:
        return int(self.x.shape[0])

    @property
    def n_levels(self) -> int:
        """Number of levels (0 for an empty DAG; 1 when every node is a leaf)."""
        return int(self.level_ptr.shape[0] - 1)

    @property
    def levels(self) -> list[np.ndarray]:
        """``level_nodes`` split by level, leaves first."""
        p = self.level_ptr
        return [self.level_nodes[p[k]:p[k + 1]] for k in range(self.n_levels)]

    @property
    def n_children(self) -> np.ndarray:
        return np.diff(self.children_ptr)

    @classmethod
    def from_edges(cls, x: Any, edges: Any, coflows: Any = None, job: int = 0) -> DagBatch:
        """A batch from features ``x`` ``(V, F)`` and parent -> child edges ``(E, 2)`` in local
        ids (for tests and hand-built DAGs).  The edges must be acyclic."""
        x = np.atleast_2d(np.asarray(x, dtype=np.float64))
        v = x.shape[0]
        e = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
        if e.size and (e.min() < 0 or e.max() >= v):
            raise ValueError(f"DagBatch.from_edges: edge endpoints must be in 0..{v - 1}")
        cof = np.arange(v, dtype=np.int64) if coflows is None else np.asarray(coflows,
                                                                             dtype=np.int64)
        return _batch(x, e[:, 0], e[:, 1], node_levels(v, e[:, 0], e[:, 1]), cof, job)


def node_levels(n: int, parent: np.ndarray, child: np.ndarray) -> np.ndarray:
    """``level(i) = 0`` for a node without children, else ``1 + max level(child)``, by
    relaxation over the edges (as many rounds as the DAG is deep); :class:`ValueError` on a
    cycle."""
    level = np.zeros(n, dtype=np.int64)
    if not parent.size:
        return level
    for _ in range(n + 1):
        new = np.zeros(n, dtype=np.int64)
        np.maximum.at(new, parent, level[child] + 1)
        new = np.maximum(new, level)
        if np.array_equal(new, level):
            return level
        level = new
    raise ValueError("the coflow DAG has a cycle")


def _batch(x: np.ndarray, parent: np.ndarray, child: np.ndarray, level: np.ndarray,
           coflows: np.ndarray, job: int) -> DagBatch:
    v = x.shape[0]
    o = np.lexsort((child, parent))
    parent, child = parent[o], child[o]
    children_ptr = np.zeros(v + 1, dtype=np.int64)
    np.cumsum(np.bincount(parent, minlength=v), out=children_ptr[1:])
    n_levels = int(level.max()) + 1 if v else 0
    level_nodes = np.lexsort((np.arange(v), level)).astype(np.int64)
    level_ptr = np.zeros(n_levels + 1, dtype=np.int64)
    np.cumsum(np.bincount(level, minlength=n_levels), out=level_ptr[1:])
    # the children of level_nodes, in that order: edges sorted by (level of parent, parent)
    oe = np.lexsort((child, parent, level[parent]))
    edge_child = child[oe].astype(np.int64)
    level_edge_ptr = np.zeros(n_levels + 1, dtype=np.int64)
    np.cumsum(np.bincount(level[parent], minlength=n_levels), out=level_edge_ptr[1:])
    return DagBatch(x=x, children_ptr=children_ptr, children=child.astype(np.int64),
                    level_ptr=level_ptr, level_nodes=level_nodes,
                    level_edge_ptr=level_edge_ptr, edge_child=edge_child,
                    coflows=coflows.astype(np.int64), job=int(job))


def as_state(state: Any) -> DagState:
    """A :class:`DagState`, or any object with ``time``, ``remaining`` and ``done``/``ready``
    or ``coflow_done``/``coflow_ready`` (the stepper's state) as one."""
    if isinstance(state, DagState):
        return state
    done = getattr(state, "done", None)
    ready = getattr(state, "ready", None)
    if done is None:
        done, ready = state.coflow_done, state.coflow_ready
    return DagState(float(state.time), np.asarray(state.remaining, dtype=np.float64),
                    np.asarray(done, dtype=bool), np.asarray(ready, dtype=bool))


def _job_max(values: np.ndarray, job: np.ndarray, n_jobs: int) -> np.ndarray:
    """Per-coflow maximum of ``values`` over its job, 1 where that maximum is not positive."""
    m = np.zeros(n_jobs)
    np.maximum.at(m, job, values)
    m[m <= 0] = 1.0
    return m[job]


class PortLoads(NamedTuple):
    """Sparse remaining port loads of some coflows: row ``k`` is coflow ``coflows[k]``, its
    nonzero loads ``val[ptr[k]:ptr[k + 1]]`` on ports ``col`` (ingress ``0..m-1``, egress
    ``m..2m-1``; the ports in the order its flows first reach them), each added in the order
    of :func:`coflowopt.orders.port_loads`, so the same floats as its dense rows."""

    coflows: np.ndarray
    ptr: np.ndarray
    col: np.ndarray
    val: np.ndarray


class CoflowTotals(NamedTuple):
    """The per-coflow sums of a state's remaining flow volumes that the features read: the
    only part of them that costs time in the number of flows (the rest is per coflow or per
    edge), so a caller that follows a run (:class:`.live.LiveFeatures`) can keep them up to
    date for the coflows that changed only.

    ``remaining``: ``(C,)`` remaining volume per coflow (its flows summed in flow order);
    ``bottleneck``: ``(C,)`` largest remaining port load over capacity,
    ``max_l p_il / cap_l`` (feature 12 before scaling; done coflows not yet zeroed);
    ``loads``: the port loads of the coflows asked for in the same pass (``loads_of`` of
    :func:`coflow_totals`: BSSI's input, feature 10), or ``None``."""

    remaining: np.ndarray
    bottleneck: np.ndarray
    loads: PortLoads | None = None


@njit(cache=True)
def _totals(cof, ptr, order, src, dst, rem, cap_in, cap_out, want):
    """Per coflow of ``cof``: its remaining volume, its flows added in flow order from 0 (as
    ``np.bincount`` adds them), and ``max_l p_il / cap_l`` with each port load added in the
    same order as :func:`coflowopt.orders.port_loads` (only the ports it touches: the others
    are 0, and every quotient is at least 0); for the coflows flagged in ``want`` (in the
    order of ``cof``) those port loads too, as sparse rows ``(ptr, col, val)``."""
    m = cap_in.size
    tot = np.zeros(cof.size)
    bn = np.zeros(cof.size)
    load = np.zeros(2 * m)
    touched = np.empty(2 * m, dtype=np.int64)
    nrow = 0
    room = 0
    for k in range(cof.size):
        c = cof[k]
        if want[c]:
            nrow += 1
            room += min(2 * (ptr[c + 1] - ptr[c]), 2 * m)
    rows = np.empty(nrow, dtype=np.int64)
    lptr = np.zeros(nrow + 1, dtype=np.int64)
    lcol = np.empty(room, dtype=np.int64)
    lval = np.empty(room)
    nrow = 0
    ne = 0
    for k in range(cof.size):
        c = cof[k]
        nt = 0
        acc = 0.0
        for i in range(ptr[c], ptr[c + 1]):
            f = order[i]
            v = rem[f]
            acc += v
            if v > 0.0:
                a = np.int64(src[f])
                b = m + np.int64(dst[f])
                if load[a] == 0.0:
                    touched[nt] = a
                    nt += 1
                load[a] += v
                if load[b] == 0.0:
                    touched[nt] = b
                    nt += 1
                load[b] += v
        tot[k] = acc
        best = 0.0
        keep = want[c]
        for j in range(nt):
            q = touched[j]
            r = load[q] / (cap_in[q] if q < m else cap_out[q - m])
            if r > best:
                best = r
            if keep:
                lcol[ne] = q
                lval[ne] = load[q]
                ne += 1
            load[q] = 0.0
        bn[k] = best
        if keep:
            rows[nrow] = c
            nrow += 1
            lptr[nrow] = ne
    return tot, bn, rows, lptr, lcol[:ne], lval[:ne]


def coflow_totals(instance: Instance, remaining: np.ndarray,
                  coflows: np.ndarray | None = None, *,
                  loads_of: np.ndarray | None = None) -> CoflowTotals:
    """:class:`CoflowTotals` of ``coflows`` (default all, in position order) at the flows'
    ``remaining`` volumes; row ``k`` is that of ``coflows[k]``, the same floats whichever
    coflows are asked for (each coflow's flows summed in flow order).  ``loads_of``: coflows
    (among ``coflows``) whose sparse port loads to keep, read off the same pass (rows in the
    order of ``coflows``).  Costs the flows of ``coflows``."""
    inst = instance
    cof = (np.arange(inst.n_coflows, dtype=np.int64) if coflows is None
           else np.ascontiguousarray(coflows, dtype=np.int64))
    want = np.zeros(inst.n_coflows, dtype=np.bool_)
    if loads_of is not None:
        want[np.asarray(loads_of, dtype=np.int64)] = True
    fab = inst.fabric
    tot, bn, rows, lptr, lcol, lval = _totals(
        cof, np.asarray(inst.coflow_flows_ptr, dtype=np.int64),
        np.asarray(inst.coflow_flow_order, dtype=np.int64), inst.flow_src, inst.flow_dst,
        np.ascontiguousarray(remaining, dtype=np.float64),
        np.asarray(fab.capacity_in, dtype=np.float64),
        np.asarray(fab.capacity_out, dtype=np.float64), want)
    loads = PortLoads(rows, lptr, lcol, lval) if loads_of is not None else None
    return CoflowTotals(tot, bn, loads)


def coflow_features(instance: Instance, state: DagState | None = None, *,
                    totals: CoflowTotals | None = None) -> np.ndarray:
    """``(C, N_FEATURES)`` features of every coflow of ``instance`` (module docstring);
    ``totals``: :func:`coflow_totals` of ``state``, when the caller has them."""
    inst = instance
    st = DagState.initial(inst) if state is None else as_state(state)
    st.check(inst)
    c, j = inst.n_coflows, inst.coflow_job
    size = np.asarray(inst.coflow_size, dtype=np.float64)
    width = inst.coflow_width.astype(np.float64)
    remaining = (np.bincount(inst.flow_coflow, weights=st.remaining, minlength=c)
                 if totals is None else totals.remaining)
    done = np.asarray(st.done, dtype=bool)
    ready = np.asarray(st.ready, dtype=bool) & ~done
    e = inst.starts_after
    unfinished_children = np.bincount(e[:, 0], weights=(~done[e[:, 1]]).astype(np.float64),
                                      minlength=c)
    outdeg = np.bincount(e[:, 0], minlength=c).astype(np.float64)
    vscale = _job_max(size, j, inst.n_jobs)
    x = np.empty((c, N_FEATURES), dtype=np.float64)
    x[:, 0] = size / vscale
    x[:, 1] = width / _job_max(width, j, inst.n_jobs)
    x[:, 2] = np.asarray(inst.coflow_length) / vscale
    x[:, 3] = np.asarray(inst.isolation_time) / _job_max(np.asarray(inst.isolation_time), j,
                                                         inst.n_jobs)
    x[:, 4] = np.clip(remaining / vscale, 0.0, None)
    x[:, 5] = unfinished_children / _job_max(outdeg, j, inst.n_jobs)
    running = ready & (remaining < size)
    x[:, 6] = ~done & ~ready
    x[:, 7] = ready & ~running
    x[:, 8] = running
    x[:, 9] = done
    return x


def gdm_positions(instance: Instance) -> np.ndarray:
    """``(C,)`` G-DM-BF's backfilling rank of every coflow (Shafiee and Ghaderi, ToN 2021:
    the primal-dual job order ``sigma``, then topological order; 0 = first), over ``C - 1``.
    Static (it costs a primal-dual pass): a caller that builds features at many instants
    computes it once and passes it as ``gdm`` to :func:`heuristic_features` and the batches."""
    from coflowopt.lp import primal_dual_job_order

    inst = instance
    c = inst.n_coflows
    sigma = (primal_dual_job_order(inst).order if inst.n_jobs else np.zeros(0, dtype=np.int64))
    # the backfilling rule (G-DM-BF): job position in sigma, then topological position
    job_pos = np.empty(inst.n_jobs, dtype=np.int64)
    job_pos[np.asarray(sigma, dtype=np.int64)] = np.arange(inst.n_jobs)
    topo = np.empty(c, dtype=np.int64)
    topo[inst.topological_order] = np.arange(c)
    rank = np.empty(c, dtype=np.float64)
    rank[np.lexsort((topo, job_pos[inst.coflow_job]))] = np.arange(c)
    return rank / max(c - 1, 1)


@njit(cache=True)
def _critical_path(bn, level, sptr, succ):
    """Feature 13 before scaling: ``cp_i = bn_i + max(0, max_j cp_j)`` over the children
    ``j`` of ``i`` (its Starts-After successors, CSR ``sptr``, ``succ``), the nodes taken by
    increasing ``level`` (a counting sort) so that the children are final first; a leaf keeps
    ``bn_i``.  A maximum is exact, so the same floats as the same recurrence level by level
    over the edges."""
    c = bn.size
    nl = 1
    for i in range(c):
        nl = max(nl, level[i] + 1)
    cnt = np.zeros(nl + 1, dtype=np.int64)
    for i in range(c):
        cnt[level[i] + 1] += 1
    for lv in range(nl):
        cnt[lv + 1] += cnt[lv]
    order = np.empty(c, dtype=np.int64)
    for i in range(c):
        order[cnt[level[i]]] = i
        cnt[level[i]] += 1
    cp = bn.copy()
    for k in range(c):
        i = order[k]
        if level[i] == 0:
            continue
        best = 0.0
        for e in range(sptr[i], sptr[i + 1]):
            x = cp[succ[e]]
            if x > best:
                best = x
        cp[i] = bn[i] + best
    return cp


def heuristic_features(instance: Instance, state: DagState | None = None,
                       level: np.ndarray | None = None, gdm: np.ndarray | None = None, *,
                       totals: CoflowTotals | None = None) -> np.ndarray:
    """``(C, 4)``: the heuristics' scores of feature set ``"v2"`` (module docstring) at
    ``state`` (``None``: :meth:`DagState.initial`); ``level``: :func:`node_levels` of the
    instance's Starts-After DAG, ``gdm``: :func:`gdm_positions`, ``totals``:
    :func:`coflow_totals` of ``state``, when the caller has them."""
    from coflowopt.orders import bssi_sparse_order

    inst = instance
    st = DagState.initial(inst) if state is None else as_state(state)
    c = inst.n_coflows
    done = np.asarray(st.done, dtype=bool)
    ready = np.flatnonzero(np.asarray(st.ready, dtype=bool) & ~done)
    out = np.zeros((c, 4))
    cap = np.concatenate([inst.fabric.capacity_in, inst.fabric.capacity_out])
    out[:, 0] = 1.0
    if totals is None:
        totals = coflow_totals(inst, st.remaining, loads_of=ready)
    if ready.size:
        pl = totals.loads
        if pl is None or not np.array_equal(pl.coflows, ready):
            pl = coflow_totals(inst, st.remaining, ready, loads_of=ready).loads
        assert pl is not None
        # BSSI on the sparse loads (the dense order bit for bit, each load divided by its
        # port's rate as the dense form divides): a state costs the ready coflows' flows
        # and ports, not (ready coflows) x (ports)
        sigma = bssi_sparse_order(pl.ptr, pl.col, pl.val / cap[pl.col], cap.size,
                                  np.asarray(inst.coflow_weight, dtype=np.float64)[ready])
        out[ready[sigma], 0] = np.arange(ready.size) / max(ready.size - 1, 1)
    out[:, 1] = gdm_positions(inst) if gdm is None else gdm
    bn = totals.bottleneck.copy()
    bn[done] = 0.0
    e = inst.starts_after
    if level is None:
        level = node_levels(c, e[:, 0].astype(np.int64), e[:, 1].astype(np.int64))
    sptr, succ = inst.successors_ptr
    cp = _critical_path(bn, np.asarray(level, dtype=np.int64), sptr, succ)
    out[:, 2] = bn / (bn.max() if c and bn.max() > 0 else 1.0)
    out[:, 3] = cp / (cp.max() if c and cp.max() > 0 else 1.0)
    return out


def job_batches(instance: Instance, *, state: DagState | None = None,
                feature_set: str = "v1", gdm: np.ndarray | None = None,
                totals: CoflowTotals | None = None, level: np.ndarray | None = None
                ) -> list[DagBatch]:
    """One :class:`DagBatch` per job of ``instance``, in job order.

    ``state`` (a :class:`DagState`, or the stepper's state with ``coflow_done`` /
    ``coflow_ready``) gives the dynamic features (remaining volume, status flags, unfinished
    children); ``None`` is :meth:`DagState.initial` (nothing sent; each job as at its
    arrival).  ``feature_set``: ``"v1"`` or ``"v2"`` (with :func:`heuristic_features`;
    ``gdm``: its :func:`gdm_positions`, computed here when ``None``).  ``totals``
    (:func:`coflow_totals` of ``state``) and ``level`` (:func:`node_levels` of the
    instance's DAG): when the caller has them.
    """
    inst = instance
    e = inst.starts_after
    if level is None:
        level = node_levels(inst.n_coflows, e[:, 0].astype(np.int64), e[:, 1].astype(np.int64))
    x_all = instance_features(inst, state=state, feature_set=feature_set, gdm=gdm,
                              totals=totals, level=level)
    order = np.argsort(inst.coflow_job, kind="stable")
    ptr = np.zeros(inst.n_jobs + 1, dtype=np.int64)
    np.cumsum(np.bincount(inst.coflow_job, minlength=inst.n_jobs), out=ptr[1:])
    local = np.empty(inst.n_coflows, dtype=np.int64)
    for jb in range(inst.n_jobs):
        cof = order[ptr[jb]:ptr[jb + 1]]
        local[cof] = np.arange(cof.size)
    edge_job = inst.coflow_job[e[:, 0]] if e.size else np.zeros(0, dtype=np.int64)
    eo = np.argsort(edge_job, kind="stable")
    eptr = np.zeros(inst.n_jobs + 1, dtype=np.int64)
    np.cumsum(np.bincount(edge_job, minlength=inst.n_jobs), out=eptr[1:])
    out = []
    for jb in range(inst.n_jobs):
        cof = order[ptr[jb]:ptr[jb + 1]].astype(np.int64)
        ej = e[eo[eptr[jb]:eptr[jb + 1]]]
        out.append(_batch(x_all[cof], local[ej[:, 0]], local[ej[:, 1]], level[cof], cof, jb))
    return out


def instance_features(instance: Instance, *, state: DagState | None = None,
                      feature_set: str = "v1", gdm: np.ndarray | None = None,
                      totals: CoflowTotals | None = None, level: np.ndarray | None = None
                      ) -> np.ndarray:
    """The ``(C, F)`` features of every coflow, in position order: the ``x`` of
    :func:`instance_batch` (the same arguments), without the DAG's arrays (a caller that
    follows a run builds those once, :class:`.live.LiveFeatures`)."""
    n_features(feature_set)
    x = coflow_features(instance, state, totals=totals)
    if feature_set == "v2":
        x = np.concatenate([x, heuristic_features(instance, state, level, gdm, totals=totals)],
                           axis=1)
    return x


def instance_batch(instance: Instance, *, state: DagState | None = None,
                   feature_set: str = "v1", gdm: np.ndarray | None = None,
                   totals: CoflowTotals | None = None, level: np.ndarray | None = None
                   ) -> DagBatch:
    """All coflows of ``instance`` as one :class:`DagBatch` (the disjoint union of its job
    DAGs; ``coflows`` = every position, ``job = -1``), features as :func:`job_batches`
    (``gdm``, ``totals`` likewise; ``level``: :func:`node_levels` of the instance's DAG).

    Message passing never crosses a job (no edge does), so a network whose priority is a
    per-node output (``head="attr"``) gives on it what it gives job by job, in one pass
    instead of one per job (the same values to rounding: numpy's matrix-vector product for
    the width-1 output layer can round a row differently with the row count)."""
    inst = instance
    e = inst.starts_after
    parent, child = e[:, 0].astype(np.int64), e[:, 1].astype(np.int64)
    if level is None:
        level = node_levels(inst.n_coflows, parent, child)
    x = instance_features(inst, state=state, feature_set=feature_set, gdm=gdm, totals=totals,
                          level=level)
    return _batch(x, parent, child, level, np.arange(inst.n_coflows, dtype=np.int64), -1)
