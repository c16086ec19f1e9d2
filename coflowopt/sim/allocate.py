"""Shared rate allocators: every order-based scheduler turns its order into rates here.

All allocators work on the same layout (:class:`AllocState`): the instance's flows grouped by
coflow (``ptr``, ``order`` = :attr:`Instance.coflow_flow_order`), each flow's remaining volume
(a flow with ``remaining <= 0`` is finished and gets no rate), residual port capacities, and one
rate buffer of length ``F`` in which only the flows of the coflows passed in are written.  The
hot loops are compiled with numba; each is linear in the number of flows it visits and stops
early once every ingress or every egress port is saturated.

- :func:`greedy`: order-preserving, work-conserving (Sincronia's allocation, Agarwal et al.,
  SIGCOMM 2018).  Each
  coflow in turn splits each port's residual equally among its flows on that port
  (``min(Rem_src / n_src, Rem_dst / n_dst)``), then its flows, in list order, top up to
  ``min(Rem_src, Rem_dst)``.  ``split="ordered"`` skips the equal split (the first flow takes all
  it can, as in Sincronia's public simulator).
- :func:`madd`: Varys's MADD: each coflow in turn gets ``rate = remaining / Gamma_j(Rem)`` for all
  its flows, so they finish together at the pace of its bottleneck on the residual capacity;
  a coflow that needs a saturated port is skipped; then a work-conserving backfill pass.
- :func:`max_min_fair`: per-flow (weighted) max-min fair sharing by progressive filling.
- :func:`water_fill`: unweighted max-min fair levels over *port pairs* by water filling (the
  compiled engines' form of the same allocation: :mod:`coflowopt.sim.fastfair` and the
  static-progress leftover, :mod:`coflowopt.schedulers.fair.static_progress_kernel`).
- :func:`priority_queues`: strict priority across queues (greedy inside each) or weighted
  sharing of each port among the queues present on it, then a work-conserving top-up.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from coflowopt._jit import njit
from coflowopt.model import Instance
from coflowopt.sim.events import indexed_delete, indexed_set

__all__ = [
    "AllocState",
    "greedy",
    "hold",
    "madd",
    "max_min_fair",
    "priority_queues",
    "water_fill",
]

#: A port whose residual is at most this fraction of its capacity counts as saturated.
SATURATED = 1e-12


@dataclass
class AllocState:
    """Mutable per-run buffers shared by the allocators (one per simulation)."""

    ptr: np.ndarray
    order: np.ndarray
    src: np.ndarray
    dst: np.ndarray
    volume: np.ndarray
    remaining: np.ndarray
    rate: np.ndarray
    cap_in: np.ndarray
    cap_out: np.ndarray
    # scratch
    rem_in: np.ndarray
    rem_out: np.ndarray
    cnt_in: np.ndarray
    cnt_out: np.ndarray
    load_in: np.ndarray
    load_out: np.ndarray
    # distinct ingress / egress ports of each coflow (CSR), for skipping blocked coflows
    cin_ptr: np.ndarray
    cin: np.ndarray
    cout_ptr: np.ndarray
    cout: np.ndarray
    #: coflows with at least one flow at a positive rate in the current allocation
    has_rate: np.ndarray
    # each flow's slot in its coflow's port lists, and unfinished flows per slot
    fslot_in: np.ndarray
    fslot_out: np.ndarray
    slot_in: np.ndarray
    slot_out: np.ndarray

    @classmethod
    def for_instance(cls, inst: Instance) -> AllocState:
        m = inst.ports
        C = inst.n_coflows
        ports = {}
        live = np.asarray(inst.flow_volume) > 0
        for side, col in (("in", inst.flow_src), ("out", inst.flow_dst)):
            key, fslot = np.unique(inst.flow_coflow.astype(np.int64) * m + col,
                                   return_inverse=True)
            ptr = np.zeros(C + 1, dtype=np.int64)
            np.cumsum(np.bincount(key // m, minlength=C), out=ptr[1:])
            cnt = np.bincount(fslot[live], minlength=key.size).astype(np.int64)
            ports[side] = (ptr, (key % m).astype(np.int64), fslot.astype(np.int64), cnt)
        return cls(
            ptr=np.asarray(inst.coflow_flows_ptr, dtype=np.int64),
            order=np.asarray(inst.coflow_flow_order, dtype=np.int64),
            src=inst.flow_src.astype(np.int64),
            dst=inst.flow_dst.astype(np.int64),
            volume=np.asarray(inst.flow_volume, dtype=np.float64),
            remaining=np.array(inst.flow_volume, dtype=np.float64),
            rate=np.zeros(inst.n_flows),
            cap_in=np.array(inst.fabric.capacity_in, dtype=np.float64),
            cap_out=np.array(inst.fabric.capacity_out, dtype=np.float64),
            rem_in=np.zeros(m), rem_out=np.zeros(m),
            cnt_in=np.zeros(m, dtype=np.int64), cnt_out=np.zeros(m, dtype=np.int64),
            load_in=np.zeros(m), load_out=np.zeros(m),
            cin_ptr=ports["in"][0], cin=ports["in"][1],
            cout_ptr=ports["out"][0], cout=ports["out"][1],
            has_rate=np.zeros(C, dtype=np.bool_),
            fslot_in=ports["in"][2], fslot_out=ports["out"][2],
            slot_in=ports["in"][3], slot_out=ports["out"][3],
        )

    def reset(self, coflows: np.ndarray) -> None:
        """Zero the rates of ``coflows``' flows and restore full port capacity."""
        zero_rates(coflows, self.ptr, self.order, self.rate, self.has_rate)
        self.rem_in[:] = self.cap_in
        self.rem_out[:] = self.cap_out


# -- kernels ---------------------------------------------------------------------------------


@njit(cache=True)
def zero_rates(coflows, ptr, order, rate, has_rate):
    for c in coflows:
        if has_rate[c]:
            for i in range(ptr[c], ptr[c + 1]):
                rate[order[i]] = 0.0
            has_rate[c] = False


@njit(cache=True)
def _blocked(c, need_all, rem_in, rem_out, cap_in, cap_out, cin_ptr, cin, cout_ptr, cout,
             slot_in, slot_out):
    """Decide from coflow ``c``'s port lists alone (not its flows) whether it can get rate.

    ``need_all=False``: blocked when every ingress or every egress port with unfinished flows is
    saturated (no flow can get a rate).  ``need_all=True`` (MADD): blocked when any such port
    is saturated (``Gamma_j(Rem)`` is infinite)."""
    free_in = False
    for i in range(cin_ptr[c], cin_ptr[c + 1]):
        if slot_in[i] > 0:
            p = cin[i]
            if rem_in[p] > SATURATED * cap_in[p]:
                free_in = True
            elif need_all:
                return True
    if not free_in:
        return True
    free_out = False
    for i in range(cout_ptr[c], cout_ptr[c + 1]):
        if slot_out[i] > 0:
            p = cout[i]
            if rem_out[p] > SATURATED * cap_out[p]:
                free_out = True
            elif need_all:
                return True
    return not free_out


@njit(cache=True)
def _unsaturated(rem, cap):
    n = 0
    for p in range(rem.shape[0]):
        if rem[p] > SATURATED * cap[p]:
            n += 1
    return n


@njit(cache=True)
def _take(f, r, src, dst, rate, rem_in, rem_out, cap_in, cap_out, unsat):
    """Give flow ``f`` extra rate ``r``; update residuals and the saturation counters."""
    rate[f] += r
    s, d = src[f], dst[f]
    before = rem_in[s] > SATURATED * cap_in[s]
    rem_in[s] = max(rem_in[s] - r, 0.0)
    if before and rem_in[s] <= SATURATED * cap_in[s]:
        unsat[0] -= 1
    before = rem_out[d] > SATURATED * cap_out[d]
    rem_out[d] = max(rem_out[d] - r, 0.0)
    if before and rem_out[d] <= SATURATED * cap_out[d]:
        unsat[1] -= 1


@njit(cache=True)
def greedy_kernel(coflows, equal, ptr, order, src, dst, remaining, rate, rem_in, rem_out, cap_in,
            cap_out, cnt_in, cnt_out, cin_ptr, cin, cout_ptr, cout, has_rate, slot_in,
            slot_out):
    unsat = np.empty(2, dtype=np.int64)
    unsat[0] = _unsaturated(rem_in, cap_in)
    unsat[1] = _unsaturated(rem_out, cap_out)
    for c in coflows:
        if unsat[0] == 0 or unsat[1] == 0:
            break
        if _blocked(c, False, rem_in, rem_out, cap_in, cap_out, cin_ptr, cin, cout_ptr, cout,
                    slot_in, slot_out):
            continue
        a, b = ptr[c], ptr[c + 1]
        if equal:
            for i in range(a, b):
                f = order[i]
                if remaining[f] > 0.0:
                    cnt_in[src[f]] += 1
                    cnt_out[dst[f]] += 1
            # shares are fixed on the residual the coflow found (kept in rate[f]), then taken
            for i in range(a, b):
                f = order[i]
                if remaining[f] > 0.0:
                    s, d = src[f], dst[f]
                    rate[f] = min(rem_in[s] / cnt_in[s], rem_out[d] / cnt_out[d])
            for i in range(a, b):
                f = order[i]
                if remaining[f] > 0.0:
                    r = rate[f]
                    rate[f] = 0.0
                    if r > 0.0:
                        _take(f, r, src, dst, rate, rem_in, rem_out, cap_in, cap_out, unsat)
                        has_rate[c] = True
                    cnt_in[src[f]] = 0
                    cnt_out[dst[f]] = 0
        for i in range(a, b):
            f = order[i]
            if remaining[f] > 0.0:
                r = min(rem_in[src[f]], rem_out[dst[f]])
                if r > 0.0:
                    _take(f, r, src, dst, rate, rem_in, rem_out, cap_in, cap_out, unsat)
                    has_rate[c] = True


@njit(cache=True)
def _madd(coflows, ptr, order, src, dst, remaining, rate, rem_in, rem_out, cap_in, cap_out,
          load_in, load_out, cin_ptr, cin, cout_ptr, cout, has_rate, slot_in, slot_out):
    unsat = np.empty(2, dtype=np.int64)
    unsat[0] = _unsaturated(rem_in, cap_in)
    unsat[1] = _unsaturated(rem_out, cap_out)
    for c in coflows:
        if unsat[0] == 0 or unsat[1] == 0:
            break
        if _blocked(c, True, rem_in, rem_out, cap_in, cap_out, cin_ptr, cin, cout_ptr, cout,
                    slot_in, slot_out):
            continue
        a, b = ptr[c], ptr[c + 1]
        for i in range(a, b):
            f = order[i]
            if remaining[f] > 0.0:
                load_in[src[f]] += remaining[f]
                load_out[dst[f]] += remaining[f]
        # Gamma_j(Rem): the coflow's bottleneck time on the residual capacity
        gamma = 0.0
        for i in range(cin_ptr[c], cin_ptr[c + 1]):
            p = cin[i]
            if load_in[p] > 0.0:
                if rem_in[p] <= SATURATED * cap_in[p]:
                    gamma = np.inf
                else:
                    gamma = max(gamma, load_in[p] / rem_in[p])
            load_in[p] = 0.0
        for i in range(cout_ptr[c], cout_ptr[c + 1]):
            p = cout[i]
            if load_out[p] > 0.0:
                if rem_out[p] <= SATURATED * cap_out[p]:
                    gamma = np.inf
                else:
                    gamma = max(gamma, load_out[p] / rem_out[p])
            load_out[p] = 0.0
        if gamma == np.inf or gamma == 0.0:
            continue
        for i in range(a, b):
            f = order[i]
            if remaining[f] > 0.0:
                _take(f, remaining[f] / gamma, src, dst, rate, rem_in, rem_out, cap_in, cap_out,
                      unsat)
                has_rate[c] = True


@njit(cache=True)
def water_fill(n_busy, busy, cap, kport, R, K, plev, pord, live, deg, adjw, adjc, pkey, pheap,
               pwhere):
    """Max-min fair levels by water filling over ports (Bertsekas and Gallager, "Data
    Networks", 2nd ed., 1992, Ch. 6, max-min flow control: the bottleneck port, the one with
    the smallest share ``R_u / K_u`` of residual capacity over unfrozen flows, freezes its
    flows at that level, which lowers the residual and the count of the ports they also
    cross).

    Flows with the same two ports are alike, so the filling runs over *pairs*: port ``u``
    (of ``deg.size``, ingress and egress numbered together) has ``deg[u]`` pairs, the other
    port ``adjw[u, j]`` and the flow count ``adjc[u, j]`` of each; ``busy[:n_busy]``, the
    ports that have pairs, start with residual ``cap[u]`` and count ``kport[u]``.  A pair's
    level is that of the first of its two ports to freeze (a port freezes all its pairs not
    yet frozen), so the filling records each port's level ``plev`` and freeze number ``pord``
    (``deg.size`` for a port that never froze) and writes nothing per pair: pair ``(u, w)``'s
    level is ``plev[u] if pord[u] < pord[w] else plev[w]``.  ``R``, ``K``, ``live`` are
    scratch per port, ``pkey``, ``pheap``, ``pwhere`` an indexed heap over ports
    (:func:`coflowopt.sim.events.indexed_set`, ``pwhere`` all -1).  Returns whether the ports
    froze at nondecreasing levels (as they do in exact arithmetic), and the pair slots it
    read."""
    m2 = deg.size
    nh = 0
    for j in range(n_busy):
        u = busy[j]
        R[u] = cap[u]
        K[u] = kport[u]
        plev[u] = np.inf
        pord[u] = m2
        live[u] = 1.0
        nh = indexed_set(pkey, pheap, pwhere, nh, u, R[u] / K[u])
    n_frozen = 0
    n_read = 0
    top = -np.inf
    mono = True
    while nh > 0:
        # keys are lower bounds (a port's share only rises as pairs freeze elsewhere), so the
        # top is re-keyed until its key is exact: the same ports, in the same order, at the
        # same levels as updating every key at every freeze, with far fewer heap moves
        u = pheap[0]
        if K[u] < 0.5:  # every flow through it is frozen
            live[u] = 0.0
            nh = indexed_delete(pkey, pheap, pwhere, nh, u)
            continue
        lev = max(R[u], 0.0) / K[u]
        if lev > pkey[0]:
            nh = indexed_set(pkey, pheap, pwhere, nh, u, lev)
            continue
        nh = indexed_delete(pkey, pheap, pwhere, nh, u)
        live[u] = 0.0
        plev[u] = lev
        pord[u] = n_frozen
        if lev < top:  # only by rounding (levels rise in exact arithmetic)
            mono = False
        top = max(top, lev)
        n_frozen += 1
        n_read += deg[u]
        # the pairs whose other port w is still in the heap freeze here; a pair whose w froze
        # first is subtracted times 0 (exactly nothing, lev being finite) in place of a branch
        # taken about half the time (fastfair on FB2010: 619 M visits; the filling measured
        # 2.6-2.9 s against 2.9-3.1 s with the branch)
        for j in range(deg[u]):
            w = adjw[u, j]
            c = adjc[u, j] * live[w]
            K[w] -= c
            R[w] -= lev * c
    return mono, n_read


@njit(cache=True)
def _max_min(coflows, weight, ptr, order, src, dst, remaining, rate, rem_in, rem_out, cap_in,
             cap_out, load_in, load_out, has_rate):
    """Progressive filling: raise all unfrozen flows at speed ``weight`` until a port fills.

    Kept apart from :func:`water_fill`, whose semantics differ: flows here carry weights (IAOA,
    Yosemite and the static-progress reference pass theirs), a port counts as full within
    :data:`SATURATED` of its capacity, and each rate is the sum of its steps, as the textbook
    procedure computes it; this is the reference engine's, the executable specification the
    pair-wise water filling of the compiled engines is checked against
    (``tests/schedulers/test_single.py``).  Its cost is one pass over the flows per bottleneck,
    paid only on the reference engine."""
    n = 0
    for c in coflows:
        for i in range(ptr[c], ptr[c + 1]):
            if remaining[order[i]] > 0.0:
                n += 1
    flows = np.empty(n, dtype=np.int64)
    k = 0
    for c in coflows:
        for i in range(ptr[c], ptr[c + 1]):
            f = order[i]
            if remaining[f] > 0.0:
                flows[k] = f
                k += 1
                has_rate[c] = True
    alive = n
    frozen = np.zeros(n, dtype=np.bool_)
    while alive > 0:
        # load_* holds the total weight of unfrozen flows per port
        for j in range(n):
            if not frozen[j]:
                f = flows[j]
                load_in[src[f]] += weight[f]
                load_out[dst[f]] += weight[f]
        step = np.inf
        for j in range(n):
            if not frozen[j]:
                f = flows[j]
                s, d = src[f], dst[f]
                step = min(step, rem_in[s] / load_in[s], rem_out[d] / load_out[d])
        for j in range(n):
            if not frozen[j]:
                f = flows[j]
                s, d = src[f], dst[f]
                if load_in[s] > 0.0:
                    rem_in[s] = max(rem_in[s] - step * load_in[s], 0.0)
                    load_in[s] = 0.0
                if load_out[d] > 0.0:
                    rem_out[d] = max(rem_out[d] - step * load_out[d], 0.0)
                    load_out[d] = 0.0
                rate[f] += step * weight[f]
        for j in range(n):
            if not frozen[j]:
                f = flows[j]
                s, d = src[f], dst[f]
                if rem_in[s] <= SATURATED * cap_in[s] or rem_out[d] <= SATURATED * cap_out[d]:
                    frozen[j] = True
                    alive -= 1


@njit(cache=True)
def _hold(coflows, ptr, order, src, dst, remaining, held, rate, rem_in, rem_out, has_rate):
    for c in coflows:
        for i in range(ptr[c], ptr[c + 1]):
            f = order[i]
            if remaining[f] > 0.0 and held[f] > 0.0:
                rate[f] = held[f]
                rem_in[src[f]] = max(rem_in[src[f]] - held[f], 0.0)
                rem_out[dst[f]] = max(rem_out[dst[f]] - held[f], 0.0)
                has_rate[c] = True


# -- public wrappers ---------------------------------------------------------------------------


def _arr(coflows: np.ndarray | list[int]) -> np.ndarray:
    return np.ascontiguousarray(coflows, dtype=np.int64)


def _run_greedy(st: AllocState, coflows: np.ndarray, equal: bool, rem_in: np.ndarray,
                rem_out: np.ndarray) -> None:
    greedy_kernel(coflows, equal, st.ptr, st.order, st.src, st.dst, st.remaining, st.rate, rem_in,
            rem_out, st.cap_in, st.cap_out, st.cnt_in, st.cnt_out, st.cin_ptr, st.cin,
            st.cout_ptr, st.cout, st.has_rate, st.slot_in, st.slot_out)


def greedy(st: AllocState, coflows: np.ndarray, *, split: str = "equal",
           fresh: bool = True) -> np.ndarray:
    """Order-preserving work-conserving allocation over ``coflows`` (highest priority first).

    ``fresh``: start from full capacity and zero rates (else continue on the residual left by a
    previous call).  Returns the rate buffer.
    """
    co = _arr(coflows)
    if split not in ("equal", "ordered"):
        raise ValueError(f"greedy: split must be 'equal' or 'ordered', got {split!r}")
    if fresh:
        st.reset(co)
    _run_greedy(st, co, split == "equal", st.rem_in, st.rem_out)
    return st.rate


def madd(st: AllocState, coflows: np.ndarray, *, backfill: np.ndarray | None = None,
         fresh: bool = True) -> np.ndarray:
    """MADD over ``coflows`` in order, then a work-conserving backfill pass over ``backfill``
    (default: the same order; pass an empty array for none).  Returns the rate buffer."""
    co = _arr(coflows)
    if fresh:
        st.reset(co)
    _madd(co, st.ptr, st.order, st.src, st.dst, st.remaining, st.rate, st.rem_in, st.rem_out,
          st.cap_in, st.cap_out, st.load_in, st.load_out, st.cin_ptr, st.cin, st.cout_ptr,
          st.cout, st.has_rate, st.slot_in, st.slot_out)
    bf = co if backfill is None else _arr(backfill)
    if bf.size:
        _run_greedy(st, bf, False, st.rem_in, st.rem_out)
    return st.rate


def hold(st: AllocState, coflows: np.ndarray, held: np.ndarray) -> np.ndarray:
    """Start from full capacity and give the unfinished flows of ``coflows`` the rates
    ``held`` (a length-``F`` array, e.g. reservations made at the last reschedule); further
    allocators continue on the residual (``fresh=False``)."""
    co = _arr(coflows)
    st.reset(co)
    _hold(co, st.ptr, st.order, st.src, st.dst, st.remaining, held, st.rate, st.rem_in,
          st.rem_out, st.has_rate)
    return st.rate


def max_min_fair(st: AllocState, coflows: np.ndarray, *, weight: np.ndarray | None = None,
                 fresh: bool = True) -> np.ndarray:
    """Per-flow max-min fair rates for the unfinished flows of ``coflows`` (weighted by
    ``weight``, a length-``F`` array, when given).  Work conserving: every flow ends with a
    saturated port."""
    co = _arr(coflows)
    if fresh:
        st.reset(co)
    w = np.ones(st.rate.size) if weight is None else np.ascontiguousarray(weight, dtype=float)
    _max_min(co, w, st.ptr, st.order, st.src, st.dst, st.remaining, st.rate, st.rem_in,
             st.rem_out, st.cap_in, st.cap_out, st.load_in, st.load_out, st.has_rate)
    return st.rate


def priority_queues(st: AllocState, queues: list[np.ndarray], *,
                    weights: np.ndarray | None = None, split: str = "equal") -> np.ndarray:
    """Coflows in priority queues (``queues[0]`` highest; FIFO order inside each).

    ``weights=None``: strict priority, i.e. :func:`greedy` over the concatenated queues.
    Otherwise each non-empty queue ``k`` first gets ``weights[k] / sum(weights of non-empty
    queues)`` of every port's capacity (greedy inside the queue), and a final greedy pass in
    strict priority order hands out what is left, so the allocation stays work conserving.
    """
    queues = [_arr(q) for q in queues]
    allq = np.concatenate(queues) if queues else np.zeros(0, np.int64)
    st.reset(allq)
    if weights is None:
        return greedy(st, allq, split=split, fresh=False)
    w = np.asarray(weights, dtype=float)
    live = [k for k, q in enumerate(queues) if q.size]
    total = float(sum(w[k] for k in live))
    if total > 0:
        eq = split == "equal"
        for k in live:
            share = w[k] / total
            rem_in, rem_out = st.cap_in * share, st.cap_out * share
            used_in, used_out = rem_in.copy(), rem_out.copy()
            _run_greedy(st, queues[k], eq, rem_in, rem_out)
            st.rem_in -= used_in - rem_in
            st.rem_out -= used_out - rem_out
        np.maximum(st.rem_in, 0.0, out=st.rem_in)
        np.maximum(st.rem_out, 0.0, out=st.rem_out)
    _run_greedy(st, allq, False, st.rem_in, st.rem_out)
    return st.rate
