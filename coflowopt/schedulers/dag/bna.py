"""BNA, the Birkhoff-von Neumann algorithm for one coflow (Shafiee and Ghaderi,
*Scheduling Coflows with Dependency Graph*, IEEE/ACM ToN 2021, Sec. III-C, Algorithm 1).

Tags: [R] recovered from the paper, [C] reconstructed by us (legend: docs/families/index.md).

A coflow ``D = (d_sr)`` (integer ``m x m``, in slots) needs at least ``eff(D) = max(max_s
load_s, max_r load_r)`` slots (Definition 1, eq. (2)); BNA meets it exactly:

* Step A [C: the standard Birkhoff-von Neumann step, the paper's box was not recovered; the
  concrete rule is ours] -- north-west-corner augmentation to ``A >= D`` with
  every line sum ``E = eff(D)`` (the added amount is dummy traffic, never sent);
* Step B [C: standard Birkhoff-von Neumann peeling] -- peel perfect matchings ``L(k)`` on the
  positive entries of ``A``, each held ``dur_k = min_s A[s, perm_k[s]]`` slots; ``sum_k dur_k =
  eff(D)``, breakpoints ``tau(k+1) = tau(k) + dur_k``; at most ``m^2 - 2m + 2`` matchings (each step
  zeroes an entry; Marcus-Ree).

Matching rules [C: our choice, the paper names none]: ``"maxweight"``
(``scipy.optimize.linear_sum_assignment`` on ``-A`` over the support; fewer matchings, ``O(m^3)``
per matching) and ``"hk"``, our fast rule for big matrices: keep the previous perfect matching, drop
the edges whose entry reached zero and repair it with augmenting paths on the support (a compiled
kernel of this module).  ``"auto"``: ``"maxweight"`` up to :data:`AUTO_MAXWEIGHT_PORTS` active
ports, ``"hk"`` above (the scheduler default).

The ``"hk"`` path is sparse [C: our data structures; same matchings as a dense peel]: ``A`` is
held as its ``nnz`` positive entries per row (the fill adds at most ``2m - 1`` cells along a
staircase), the augmenting-path search walks per-row lists sorted by column, a min-heap of the
matched entries' expiry times gives each duration and the entries that reach zero, and matched
time goes to the items per interval a row stays on one entry.  A decomposition costs about
``O((nnz + changes) log m)`` (``changes``: rows rerouted by the repairs) instead of
``O(m^2 + m K)`` for ``K`` matchings; DMA resolves hundreds of thousands of such runs.

Real-first execution [C: our choice; dummy traffic is never sent]: each ``(s, r)`` pair's matched
time goes to its flows one after another in flow index order, and only while real data is left.

Units [C: the paper's slots are unit data]: slots of ``quantum / c`` time units
(:mod:`coflowopt.schedulers.dag.slots`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from coflowopt._jit import njit
from coflowopt.model import Instance
from coflowopt.params import Params
from coflowopt.schedulers.dag.slots import (
    SlotPlan,
    counting_sort,
    emit_segments,
    finishes_before_refusal,
    slot_demand,
    slot_length,
    timed_segments,
    uniform_fabric_refusal,
)
from coflowopt.sim.events import indexed_pop_min_all, indexed_set_many
from coflowopt.sim.sink import Outcome, RateSink

__all__ = [
    "AUTO_MAXWEIGHT_PORTS",
    "BNAParams",
    "augment",
    "birkhoff_von_neumann",
    "bna_items",
    "bna_plan",
    "effective_size",
    "items_hk",
    "merge_pieces",
    "repeat_runs_hk",
    "resolve_runs_hk",
    "run_bna",
    "sequential_order",
    "supports_bna",
]

_I64 = np.int64
RULES = ("maxweight", "hk", "auto")
#: ``rule="auto"`` takes ``"maxweight"`` up to this many active rows/columns, ``"hk"`` above.
AUTO_MAXWEIGHT_PORTS = 24


def effective_size(D: np.ndarray) -> int:
    """``eff(D)``: the largest row or column sum (Definition 1)."""
    D = np.asarray(D)
    if D.size == 0:
        return 0
    return int(max(D.sum(axis=1).max(), D.sum(axis=0).max()))


def _as_matrix(D: Any) -> np.ndarray:
    A = np.asarray(D)
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError(f"BNA: expected a square matrix, got shape {A.shape}")
    if A.dtype.kind == "f":
        if not np.all(np.isfinite(A)) or not np.array_equal(A, np.round(A)):
            raise ValueError("BNA: the matrix must hold integers (demands in slots)")
    elif A.dtype.kind not in "iub":
        raise ValueError(f"BNA: the matrix must hold integers, got dtype {A.dtype}")
    A = A.astype(_I64)
    if (A < 0).any():
        s, r = (int(x) for x in np.argwhere(A < 0)[0])
        raise ValueError(f"BNA: negative entry {A[s, r]} at ({s}, {r})")
    return A


@njit(cache=True)
def _nw_fill(rsum: np.ndarray, csum: np.ndarray, E: int
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The north-west-corner fill (Step A [C]) of a square matrix with row sums ``rsum`` and
    column sums ``csum`` up to line sums ``E``: the cells ``(row, col, amount)`` it adds
    (amounts ``> 0``), along a staircase (rows and columns nondecreasing, at most ``2m - 1``
    cells), so the fill costs ``O(m)`` and never the matrix."""
    m = rsum.size
    r = rsum.astype(np.int64)
    c = csum.astype(np.int64)
    fi = np.empty(2 * m, np.int64)
    fj = np.empty(2 * m, np.int64)
    fx = np.empty(2 * m, np.int64)
    n = 0
    i = 0
    j = 0
    while i < m and j < m:
        x = min(E - r[i], E - c[j])
        if x > 0:
            fi[n] = i
            fj[n] = j
            fx[n] = x
            n += 1
        r[i] += x
        c[j] += x
        if r[i] == E:
            i += 1
        if c[j] == E:
            j += 1
    return fi[:n], fj[:n], fx[:n]


def augment(D: np.ndarray) -> np.ndarray:
    """Step A [C]: the north-west-corner augmentation ``A >= D`` of an integer square matrix,
    every row and column sum equal to ``eff(D)``."""
    A = _as_matrix(D).copy()
    if A.size:
        fi, fj, fx = _nw_fill(A.sum(axis=1), A.sum(axis=0), effective_size(A))
        A[fi, fj] += fx        # the cells are distinct
    return A


@njit(cache=True)
def _support(ri: np.ndarray, ci: np.ndarray, amt: np.ndarray, k: int):
    """The augmented matrix ``A`` (Step A) of the ``k x k`` matrix of the items (item ``i``:
    ``amt[i]`` on local pair ``(ri[i], ci[i])``), sparse: its entries sorted by (row, column),
    row ``s`` holding entries ``row_ptr[s]:row_ptr[s+1]`` with columns ``col`` and values
    ``val``; the entry of each item and ``E = eff``.  A counting sort by row, then each row by
    column: ``O(nnz + k)`` for rows of a few entries, no ``k x k`` array."""
    n = ri.size
    rs = np.zeros(k, np.int64)
    cs = np.zeros(k, np.int64)
    for i in range(n):
        rs[ri[i]] += amt[i]
        cs[ci[i]] += amt[i]
    E = 0
    for x in range(k):
        E = max(E, rs[x], cs[x])
    fi, fj, fx = _nw_fill(rs, cs, E)
    nt = n + fi.size
    # the cells (items, then fill) grouped by row
    ptr = np.zeros(k + 1, np.int64)
    for i in range(n):
        ptr[ri[i] + 1] += 1
    for i in range(fi.size):
        ptr[fi[i] + 1] += 1
    for x in range(k):
        ptr[x + 1] += ptr[x]
    at = ptr[:-1].copy()
    ckey = np.empty(nt, np.int64)        # column * nt + cell, sorted within each row
    for i in range(nt):
        r = ri[i] if i < n else fi[i - n]
        ckey[at[r]] = (ci[i] if i < n else fj[i - n]) * nt + i
        at[r] += 1
    col = np.empty(nt, np.int64)
    val = np.zeros(nt, np.int64)
    ent = np.empty(nt, np.int64)
    row_ptr = np.zeros(k + 1, np.int64)
    ne = 0
    for r in range(k):
        lo = ptr[r]
        hi = ptr[r + 1]
        _sort_ints(ckey, lo, hi)
        for q in range(lo, hi):
            c = ckey[q] // nt
            if q == lo or c != ckey[q - 1] // nt:
                col[ne] = c
                ne += 1
            x = ckey[q] % nt
            val[ne - 1] += amt[x] if x < n else fx[x - n]
            ent[x] = ne - 1
        row_ptr[r + 1] = ne
    return row_ptr, col[:ne], val[:ne], ent[:n], E


@njit(cache=True, inline="always")
def _find_path(s0, row_ptr, rend, adj, col, val, dead, mc, seen, stamp, prow, pcol, pent, pptr):
    """Augmenting path (iterative DFS) from the free row ``s0`` on the positive entries; row
    ``s``'s entries are ``adj[row_ptr[s]:rend[s]]`` sorted by column.  At each row a free
    unseen column first (the shortest path), in increasing column order, else the unseen
    columns in increasing order from the saved place (``pptr``; ``-1``: not yet scanned).
    Entries that reached 0 are dropped from a row's list when they are half of it.  Returns
    the depth of the path (rows ``prow``, columns ``pcol``, entries ``pent`` of ``0..depth``)
    or ``-1``."""
    depth = 0
    prow[0] = s0
    pptr[0] = -1
    while depth >= 0:
        s = prow[depth]
        p = pptr[depth]
        lo = row_ptr[s]
        hi = rend[s]
        found = -1
        if p < 0:
            if dead[s] > 0 and 2 * dead[s] >= hi - lo:
                w = lo
                for q in range(lo, hi):
                    if val[adj[q]] > 0:
                        adj[w] = adj[q]
                        w += 1
                rend[s] = w
                dead[s] = 0
                hi = w
            for q in range(lo, hi):
                e = adj[q]
                x = col[e]
                if val[e] > 0 and mc[x] < 0 and seen[x] != stamp:
                    found = q
                    break
            p = lo
        if found < 0:
            while p < hi:
                e = adj[p]
                if val[e] > 0 and seen[col[e]] != stamp:
                    found = p
                    break
                p += 1
        if found < 0:
            depth -= 1
            continue
        pptr[depth] = found + 1
        e = adj[found]
        x = col[e]
        seen[x] = stamp
        pcol[depth] = x
        pent[depth] = e
        if mc[x] < 0:
            return depth
        depth += 1
        prow[depth] = mc[x]
        pptr[depth] = -1
    return -1


@njit(cache=True, inline="always")
def _sort_ints(x: np.ndarray, lo: int, hi: int) -> None:
    """Sort ``x[lo:hi]`` in place: insertion sort when short (most rows and repairs), else
    ``np.sort``.  Inlined, with the range as bounds: a compiled call on a slice made a view
    per row of every BNA matrix, two atomic reference counts each."""
    if hi - lo > 16:
        x[lo:hi].sort()
        return
    for i in range(lo + 1, hi):
        v = x[i]
        j = i - 1
        while j >= lo and x[j] > v:
            x[j + 1] = x[j]
            j -= 1
        x[j + 1] = v


@njit(cache=True)
def _sort_rows(x, n, flag):
    """Sort the distinct rows ``x[:n]`` in place: a pass over the ``k`` flags (all 0) when
    they are at least ``k / 8`` (``O(k) <= O(8n)``), else :func:`_sort_ints`."""
    if n > 16 and 8 * n >= flag.size:
        for i in range(n):
            flag[x[i]] = 1
        j = 0
        for s in range(flag.size):
            if flag[s]:
                flag[s] = 0
                x[j] = s
                j += 1
    else:
        _sort_ints(x, 0, n)


@njit(cache=True)
def _peel_sparse(row_ptr: np.ndarray, col: np.ndarray, val: np.ndarray, E: int):
    """Step B with the ``"hk"`` rule on the sparse augmented matrix (:func:`_support`; ``val``
    is consumed): keep the perfect matching, drop the edges that reach 0, repair it with
    augmenting paths from the free rows in increasing row order.

    Work proportional to what changes: a matched entry keeps its value at the time ``t0`` it
    was matched, and a min-heap of the rows keeps its expiry ``t0 + value`` (the time it
    reaches 0), so the duration of a matching and the entries that reach 0 come from the
    heap (:mod:`coflowopt.sim.events`' indexed heap: its bulk set and its pop of every
    minimum); only the rows an augmenting path rerouted are touched after a repair.  Returns the
    durations ``(K,)`` and the intervals ``(row, entry, start, end)`` in which a row stays
    matched to one entry (maximal, in order of start)."""
    k = row_ptr.size - 1
    ne = col.size
    adj = np.arange(ne)
    rend = row_ptr[1:].copy()
    iw = np.zeros((12, k), np.int64)        # one allocation for the per-row columns
    dead, mc, me, t0, seen, hpos, hkey, heap, opened, mark, dirty, flag = (
        iw[0], iw[1], iw[2], iw[3], iw[4], iw[5], iw[6], iw[7], iw[8], iw[9], iw[10], iw[11])
    mc[:] = -1
    me[:] = -1                           # matched entry of each row, matched at t0
    hpos[:] = -1
    opened[:] = -1                       # open interval of each row
    mark[:] = -1
    pw = np.empty((6, k + 1), np.int64)
    prow, pcol, pent, pptr, pend, place = pw[0], pw[1], pw[2], pw[3], pw[4], pw[5]
    hn = 0
    cap = max(1, k * k - 2 * k + 2)
    durs = np.empty(max(1, min(cap, ne)), np.int64)
    vw = np.empty((4, 2 * k + 8), np.int64)
    nv = 0
    for s in range(k):
        pend[s] = s
    npend = k
    stamp = 0
    n = 0
    done = 0
    while done < E:
        _sort_rows(pend, npend, flag)
        nd = 0
        for q in range(npend):
            stamp += 1
            depth = _find_path(pend[q], row_ptr, rend, adj, col, val, dead, mc, seen, stamp,
                               prow, pcol, pent, pptr)
            if depth < 0:
                raise ValueError("BNA: no perfect matching on the support (line sums differ)")
            for d in range(depth + 1):
                s = prow[d]
                old = me[s]
                if old >= 0:
                    val[old] -= done - t0[s]     # the rerouted entry's value now
                me[s] = pent[d]
                mc[pcol[d]] = s
                t0[s] = done
                if mark[s] != n:
                    mark[s] = n
                    dirty[nd] = s
                    nd += 1
        if nv + nd > vw.shape[1]:
            vw2 = np.empty((4, 2 * (nv + nd)), np.int64)
            vw2[:, :nv] = vw[:, :nv]
            vw = vw2
        for q in range(nd):
            s = dirty[q]
            e = me[s]
            place[q] = done + val[e]         # its new expiry
            if opened[s] < 0 or vw[1, opened[s]] != e:
                if opened[s] >= 0:
                    vw[3, opened[s]] = done
                vw[0, nv] = s
                vw[1, nv] = e
                vw[2, nv] = done
                opened[s] = nv
                nv += 1
        hn = indexed_set_many(hkey, heap, hpos, hn, dirty, place, nd)
        if n >= cap:
            raise ValueError("BNA: more than m^2 - 2m + 2 matchings")
        nxt = hkey[0]
        durs[n] = nxt - done
        n += 1
        done = nxt
        npend = 0
        if done == E:                    # the last matching: every entry left reaches 0
            break
        hn, npend = indexed_pop_min_all(hkey, heap, hpos, hn, pend, place)
        for q in range(npend):
            s = pend[q]
            e = me[s]
            val[e] = 0
            dead[s] += 1
            mc[col[e]] = -1
            me[s] = -1
            vw[3, opened[s]] = done
            opened[s] = -1
    for s in range(k):
        if opened[s] >= 0:
            vw[3, opened[s]] = E
    return durs[:n], vw[0, :nv], vw[1, :nv], vw[2, :nv], vw[3, :nv]


@njit(cache=True)
def _expand_perms(k, durs, v_row, v_ent, v_start, v_end, col):
    """The matchings as ``(K, k)`` permutations from the intervals of :func:`_peel_sparse`."""
    K = durs.size
    begins = np.empty(K, np.int64)
    t = 0
    for i in range(K):
        begins[i] = t
        t += durs[i]
    perms = np.empty((K, k), np.int64)
    for v in range(v_row.size):
        a = np.searchsorted(begins, v_start[v])
        b = np.searchsorted(begins, v_end[v])
        for i in range(a, b):
            perms[i, v_row[v]] = col[v_ent[v]]
    return perms


def _peel_maxweight(A: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Step B with the ``"maxweight"`` rule (Step B [C])."""
    from scipy.optimize import linear_sum_assignment

    A = A.copy()
    k = A.shape[0]
    rows = np.arange(k)
    perms, durs = [], []
    left = int(A[0].sum())
    while left > 0:
        big = float(A.sum()) + 1.0
        cost = np.where(A > 0, -A.astype(np.float64), big)
        _, perm = linear_sum_assignment(cost)
        vals = A[rows, perm]
        if (vals <= 0).any():
            raise ValueError("BNA: no perfect matching on the support (line sums differ)")
        dur = int(vals.min())
        A[rows, perm] -= dur
        perms.append(perm.astype(_I64))
        durs.append(dur)
        left -= dur
    if not perms:
        return np.zeros((0, k), _I64), np.zeros(0, _I64)
    return np.vstack(perms), np.asarray(durs, dtype=_I64)


def _pick_rule(rule: str, k: int) -> str:
    if rule not in RULES:
        raise ValueError(f"BNA rule: expected one of {RULES}, got {rule!r}")
    if rule == "auto":
        return "maxweight" if k <= AUTO_MAXWEIGHT_PORTS else "hk"
    return rule


def birkhoff_von_neumann(D: np.ndarray, rule: str = "maxweight"
                         ) -> tuple[np.ndarray, np.ndarray]:
    """Algorithm 1 on an integer square matrix ``D``: ``perms`` ``(K, m)`` int64 (row ``s`` ->
    column ``perms[k, s]``) and ``durations`` ``(K,)`` int64 (each ``>= 1``, summing to
    ``eff(D)``; ``K <= m^2 - 2m + 2``), from the north-west-corner augmentation (Step A)
    peeled with ``rule`` (Step B; ``"maxweight"``, ``"hk"`` or ``"auto"``).  An empty or zero
    matrix gives no matching."""
    A = augment(D)
    k = A.shape[0]
    rule = _pick_rule(rule, k)
    if k == 0 or not A.any():
        return np.zeros((0, k), _I64), np.zeros(0, _I64)
    if rule == "maxweight":
        return _peel_maxweight(A)
    ri, ci = np.nonzero(A)          # A's line sums are all E: its support adds no fill
    row_ptr, col, val, _, E = _support(ri.astype(_I64), ci.astype(_I64), A[ri, ci], k)
    durs, v_row, v_ent, v_start, v_end = _peel_sparse(row_ptr, col, val, E)
    return _expand_perms(k, durs, v_row, v_ent, v_start, v_end, col), durs


@njit(cache=True)
def _perm_intervals(perms, durs, row_ptr, col):
    """The intervals ``(row, entry, start, end)`` of a dense decomposition (each row's runs of
    one column over consecutive matchings, in time order), on the entries of :func:`_support`."""
    K, k = perms.shape
    cap = k + K * k
    v_row = np.empty(cap, np.int64)
    v_ent = np.empty(cap, np.int64)
    v_start = np.empty(cap, np.int64)
    v_end = np.empty(cap, np.int64)
    nv = 0
    for s in range(k):
        t = 0
        for i in range(K):
            c = perms[i, s]
            if i == 0 or c != perms[i - 1, s]:
                e = row_ptr[s] + np.searchsorted(col[row_ptr[s]:row_ptr[s + 1]], c)
                if e >= row_ptr[s + 1] or col[e] != c:
                    raise ValueError("BNA: a matching uses an entry off the support")
                v_row[nv] = s
                v_ent[nv] = e
                v_start[nv] = t
                nv += 1
            t += durs[i]
            v_end[nv - 1] = t
    return v_row[:nv].copy(), v_ent[:nv].copy(), v_start[:nv].copy(), v_end[:nv].copy()


@njit(cache=True)
def _assign_real_first(item_ent, amt, n_ent, v_ent, v_start, v_end):
    """Real-first execution of a decomposition given as intervals ``(entry, start, end)`` in
    which an entry (a pair) is matched, in time order per entry: the items (entry
    ``item_ent``, ``amt`` slots, in priority order) of each pair take its matched time one
    after another; pieces ``(item, start, length)``, consecutive pieces of one item joined.
    ``O(items + intervals + entries)``."""
    n = item_ent.size
    iptr, items = counting_sort(item_ent, n_ent)
    vptr, ivs = counting_sort(v_ent, n_ent)
    cap = n + v_ent.size
    o_item = np.empty(cap, np.int64)
    o_start = np.empty(cap, np.int64)
    o_len = np.empty(cap, np.int64)
    last = np.full(n, -1, np.int64)
    m = 0
    for p in range(n_ent):
        cur = iptr[p]
        end = iptr[p + 1]
        if cur == end:
            continue
        rem = amt[items[cur]]              # slots left of the current item
        for q in range(vptr[p], vptr[p + 1]):
            v = ivs[q]
            off = v_start[v]
            left = v_end[v] - off
            while left > 0 and cur < end:
                it = items[cur]
                take = min(left, rem)
                j = last[it]
                if j >= 0 and o_start[j] + o_len[j] == off:
                    o_len[j] += take
                else:
                    o_item[m] = it
                    o_start[m] = off
                    o_len[m] = take
                    last[it] = m
                    m += 1
                left -= take
                off += take
                rem -= take
                if rem == 0:
                    cur += 1
                    if cur < end:
                        rem = amt[items[cur]]
            if cur == end:
                break
    return o_item[:m], o_start[:m], o_len[:m]


@njit(cache=True)
def _ranks(x: np.ndarray) -> tuple[np.ndarray, int]:
    """The rank of each value among the distinct values of ``x`` (as ``np.unique``'s inverse;
    values ``>= 0``) and their number: a pass over the value range when it is below
    ``16 n + 64``, else one sort of ``value * n + position`` (``O(min(range, n log n))``).  A
    DMA run at ten times FB2010 has about 200 members on 1,500 ports: the pass over the ports
    costs less than the sort (which took 9% of the run when the bound was ``4 n``)."""
    n = x.size
    r = np.empty(n, np.int64)
    if n == 0:
        return r, 0
    lo = x[0]
    hi = x[0]
    for i in range(n):
        lo = min(lo, x[i])
        hi = max(hi, x[i])
    if hi - lo < 16 * n + 64:
        rank = np.zeros(hi - lo + 1, np.int64)
        for i in range(n):
            rank[x[i] - lo] = 1
        nr = 0
        for v in range(hi - lo + 1):
            if rank[v]:
                rank[v] = nr
                nr += 1
        for i in range(n):
            r[i] = rank[x[i] - lo]
        return r, nr
    key = np.empty(n, np.int64)
    for i in range(n):
        key[i] = x[i] * n + i
    key.sort()
    nr = 0
    for q in range(n):
        if q > 0 and key[q] // n != key[q - 1] // n:
            nr += 1
        r[key[q] % n] = nr
    return r, nr + 1


@njit(cache=True)
def _compress(src, dst):
    """Local row and column indices of the active ports (numbered in increasing port order),
    and the square size ``k``; independent of the fabric's size."""
    ri, nr = _ranks(src)
    ci, nc = _ranks(dst)
    return ri, ci, max(nr, nc)


@njit(cache=True)
def items_hk(src, dst, amt):
    """:func:`bna_items` with the ``"hk"`` rule, compiled end to end and sparse:
    ``O((nnz + changes) log k)`` for ``nnz`` entries of the augmented matrix."""
    ri, ci, k = _compress(src, dst)
    return _items_ranked(ri, ci, k, amt)


@njit(cache=True)
def _items_ranked(ri, ci, k, amt):
    """:func:`items_hk` on items already in local row and column indices (:func:`_compress`:
    ``ri``, ``ci``, the square size ``k``)."""
    row_ptr, col, val, ent, E = _support(ri, ci, amt, k)
    _durs, _v_row, v_ent, v_start, v_end = _peel_sparse(row_ptr, col, val, E)
    item, start, length = _assign_real_first(ent, amt, col.size, v_ent, v_start, v_end)
    return item, start, length, E


@njit(cache=True)
def resolve_runs_hk(src: np.ndarray, dst: np.ndarray, member: np.ndarray, ptr: np.ndarray,
                    rlen: np.ndarray, begin: np.ndarray, flow: np.ndarray, g0: int, cap: int,
                    like: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, int]:
    """DMA step 4 for many runs at once (rule ``"hk"``), a block at a time: run ``g`` has
    members ``member[ptr[g]:ptr[g+1]]`` (indices into ``src``, ``dst``, ``flow``, in priority
    order), each needing ``rlen[g]`` slots, and starts at slot ``begin[g]``.  From run ``g0``
    on, the pieces ``(flow, start, length)`` are written into fresh columns of ``like``'s
    dtype and capacity ``cap`` (grown only for a single run larger than that), stopping
    before the first run whose pieces do not fit; returns the columns, the number of pieces
    written and the next run.  (No gathered port columns, no growth copies: the caller holds
    one block of ``cap`` pieces beyond its members.)"""
    n_runs = ptr.size - 1
    o_f = np.empty(cap, like.dtype)
    o_s = np.empty(cap, like.dtype)
    o_n = np.empty(cap, like.dtype)
    m = 0
    g = g0
    while g < n_runs:
        a = ptr[g]
        b = ptr[g + 1]
        sub_s = np.empty(b - a, np.int64)
        sub_d = np.empty(b - a, np.int64)
        for x in range(b - a):
            sub_s[x] = src[member[a + x]]
            sub_d[x] = dst[member[a + x]]
        amt = np.full(b - a, rlen[g], np.int64)
        item, start, length, _ = items_hk(sub_s, sub_d, amt)
        if m + item.size > cap:
            if m > 0:
                break           # this run starts the next block (computed again there)
            cap = item.size
            o_f = np.empty(cap, like.dtype)
            o_s = np.empty(cap, like.dtype)
            o_n = np.empty(cap, like.dtype)
        for i in range(item.size):
            o_f[m] = flow[member[a + item[i]]]
            o_s[m] = begin[g] + start[i]
            o_n[m] = length[i]
            m += 1
        g += 1
    return o_f, o_s, o_n, m, g


@njit(cache=True)
def repeat_runs_hk(src: np.ndarray, dst: np.ndarray, member: np.ndarray, ptr: np.ndarray,
                   runs: np.ndarray, rlen: np.ndarray, begin: np.ndarray, flow: np.ndarray,
                   amount: np.ndarray, small: int
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, np.ndarray, int]:
    """DMA-SRT's step 6 for many runs of intervals at once (rule ``"hk"``): run ``g`` has
    items ``member[ptr[g]:ptr[g+1]]`` (indices into ``src``, ``dst``, ``flow``), each
    needing ``amount[i]`` slots (1 when ``amount`` is empty) in every one of the
    ``L = rlen[runs[g]]`` intervals of run ``runs[g]``, which starts at slot
    ``begin[runs[g]]``; its ``BNA(D)`` (:func:`items_hk` on the items of positive amount,
    ``eff`` slots) is computed once and its pieces repeated ``L`` times, ``eff`` slots
    apart.  A run whose matrix has at most ``small`` active ports (``"auto"`` takes
    ``"maxweight"`` there) is left to the caller.  Returns the pieces ``(flow, start,
    length)`` and their number (not joined: the caller's :func:`merge_pieces` joins them,
    as it joins ``bna_items``' pieces), and the runs left and their number."""
    n_runs = ptr.size - 1
    cap = 1024
    o_f = np.empty(cap, np.int64)
    o_s = np.empty(cap, np.int64)
    o_n = np.empty(cap, np.int64)
    left = np.empty(n_runs, np.int64)
    n_left = 0
    m = 0
    ones = amount.size == 0
    for g in range(n_runs):
        a = ptr[g]
        b = ptr[g + 1]
        live = np.empty(b - a, np.int64)
        nl = 0
        for x in range(a, b):
            if ones or amount[member[x]] > 0:
                live[nl] = member[x]
                nl += 1
        if nl == 0:
            continue
        sub_s = np.empty(nl, np.int64)
        sub_d = np.empty(nl, np.int64)
        amt = np.empty(nl, np.int64)
        for x in range(nl):
            sub_s[x] = src[live[x]]
            sub_d[x] = dst[live[x]]
            amt[x] = 1 if ones else amount[live[x]]
        ri, ci, k = _compress(sub_s, sub_d)   # once: it decides the rule and feeds the peel
        if k <= small:
            left[n_left] = g
            n_left += 1
            continue
        item, start, length, eff = _items_ranked(ri, ci, k, amt)
        r = runs[g]
        L = rlen[r]
        need = m + L * item.size
        if need > cap:
            while cap < need:
                cap *= 2
            o_f2 = np.empty(cap, np.int64)
            o_s2 = np.empty(cap, np.int64)
            o_n2 = np.empty(cap, np.int64)
            o_f2[:m] = o_f[:m]
            o_s2[:m] = o_s[:m]
            o_n2[:m] = o_n[:m]
            o_f, o_s, o_n = o_f2, o_s2, o_n2
        for q in range(L):
            at = begin[r] + eff * q
            for i in range(item.size):
                o_f[m] = flow[live[item[i]]]
                o_s[m] = at + start[i]
                o_n[m] = length[i]
                m += 1
    return o_f, o_s, o_n, m, left, n_left


def bna_items(src: np.ndarray, dst: np.ndarray, amount: np.ndarray, *,
              rule: str = "maxweight") -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """BNA of the matrix of ``items`` (item ``i`` needs ``amount[i]`` slots on pair
    ``(src[i], dst[i])``), executed real-first: each pair's matched time goes to its items one
    after another in array order.  Returns pieces ``(item, start, length)`` (slots from 0;
    consecutive pieces of one item merged) and ``eff`` (the block length).  Only the active
    rows and columns enter the matrix (padded square with zero lines: same ``eff``)."""
    src = np.asarray(src, dtype=_I64)
    dst = np.asarray(dst, dtype=_I64)
    amount = np.asarray(amount, dtype=_I64)
    live = np.flatnonzero(amount > 0)
    z = np.zeros(0, _I64)
    if live.size == 0:
        return z, z, z, 0
    s_, d_, a_ = src[live], dst[live], amount[live]
    ri, ci, k = _compress(s_, d_)
    if _pick_rule(rule, k) == "hk":
        item, start, length, eff = items_hk(s_, d_, a_)
    else:
        D = np.zeros((k, k), _I64)
        np.add.at(D, (ri, ci), a_)
        perms, durs = birkhoff_von_neumann(D, "maxweight")
        row_ptr, col, _, ent, eff = _support(ri, ci, a_, k)
        _, v_ent, v_start, v_end = _perm_intervals(perms, durs, row_ptr, col)
        item, start, length = _assign_real_first(ent, a_, col.size, v_ent, v_start, v_end)
    item, start, length = merge_pieces(live[item], start, length)
    return item, start, length, int(eff)


def merge_pieces(item: np.ndarray, start: np.ndarray, length: np.ndarray
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Pieces ordered by (item, start), consecutive pieces of one item joined.  (One argsort
    of a combined int64 key where it fits: pieces of one item never share a start, so the
    order is that of the two-key lexsort, several times faster on millions of pieces.)"""
    item = np.asarray(item, dtype=_I64)
    start = np.asarray(start, dtype=_I64)
    span = int(start.max()) - int(start.min()) + 1 if start.size else 1
    if item.size and (int(item.max()) + 1) * span < 2 ** 62 and int(item.min()) >= 0:
        o = np.argsort(item * span + (start - int(start.min())), kind="stable")
    else:
        o = np.lexsort((start, item))
    item, start, length = item[o], start[o], length[o]
    if item.size > 1:
        join = (item[1:] == item[:-1]) & (start[1:] == start[:-1] + length[:-1])
        if join.any():
            head = np.r_[True, ~join]
            gid = np.cumsum(head) - 1
            length = np.bincount(gid, weights=length).astype(_I64)
            item, start = item[head], start[head]
    return item, start, length


def bna_plan(instance: Instance, coflows: np.ndarray, demand: np.ndarray, *,
             rule: str = "maxweight") -> SlotPlan:
    """BNA of one coflow (or of the sum of several coflows' flows treated as one matrix) from
    slot 0, in ``eff`` slots of the summed integer demand matrix; real-first: each ``(s, r)``
    pair's matched time goes to its flows one after another in flow index order.
    ``demand``: integer slots per flow of the instance (:func:`slots.slot_demand`)."""
    cof = np.atleast_1d(np.asarray(coflows, dtype=_I64))
    if cof.size == 1:
        flows = instance.flows_of(int(cof[0]))
    else:
        flows = np.flatnonzero(np.isin(instance.flow_coflow, cof))
    flows = np.sort(flows)
    item, start, length, _ = bna_items(instance.flow_src[flows], instance.flow_dst[flows],
                                       np.asarray(demand)[flows], rule=rule)
    return SlotPlan(flows[item], start, length)


# -- the scheduler ----------------------------------------------------------------------------


@dataclass(frozen=True)
class BNAParams(Params):
    """``rule``: the matching rule of Step B (``"auto"``: ``"maxweight"`` up to
    :data:`AUTO_MAXWEIGHT_PORTS` active ports, ``"hk"`` above); ``quantum``: volume per slot
    [C] (a flow needs ``ceil(volume / quantum)`` slots of ``quantum / c`` time units)."""

    rule: Literal["maxweight", "hk", "auto"] = "auto"
    quantum: float = 1.0

    def check(self) -> None:
        if not self.quantum > 0 or self.quantum == float("inf"):
            raise ValueError(f"BNAParams.quantum: must be finite and > 0, got {self.quantum}")


def supports_bna(instance: Instance) -> str | None:
    """Why ``bna`` cannot run ``instance`` (a non-uniform fabric, Finishes-Before edges),
    else ``None``."""
    return uniform_fabric_refusal(instance) or finishes_before_refusal(instance)


def sequential_order(instance: Instance) -> np.ndarray:
    """Coflows by earliest possible start (releases and isolation times propagated along the
    Starts-After edges), then by topological position: every predecessor comes first."""
    topo_pos = np.empty(instance.n_coflows, dtype=_I64)
    topo_pos[instance.topological_order] = np.arange(instance.n_coflows)
    est = instance.earliest_completion - instance.isolation_time
    return np.lexsort((topo_pos, est))


def run_bna(instance: Instance, params: BNAParams, sink: RateSink, *, seed: Any = None,
            progress: Any = None) -> Outcome:
    """BNA one coflow at a time: coflows in order of earliest possible start, then topological
    position (:func:`sequential_order`); each runs alone in its ``eff`` slots (slots of
    ``quantum / c``), starting when the previous one, its release and its predecessors are
    done (real completion times).  Optimal for a path job and exact on one coflow (theory
    units).  Deterministic (``seed`` unused)."""
    why = supports_bna(instance)
    if why is not None:
        raise ValueError(f"bna: {why}")
    q = params.quantum
    demand = slot_demand(instance, q)
    ptr, pred = instance.predecessors_ptr
    done = np.zeros(instance.n_coflows)
    rel = instance.release
    now = 0.0
    fs, t0s, t1s = [], [], []
    order = sequential_order(instance)
    total = len(order)
    for n_done, c in enumerate(order.tolist()):
        begin = max(now, float(rel[c]))
        a, b = ptr[c], ptr[c + 1]
        if b > a:
            begin = max(begin, float(done[pred[a:b]].max()))
        plan = bna_plan(instance, np.array([c]), demand, rule=params.rule)
        f, t0, t1 = timed_segments(instance, plan, q, begin)
        end = float(t1.max()) if f.size else begin
        done[c] = end
        now = end
        fs.append(f)
        t0s.append(t0)
        t1s.append(t1)
        if progress is not None:
            progress(n_done + 1, total)
    meta = {"scheduler": "bna", "params": {"rule": params.rule, "quantum": q},
            "slot_length": slot_length(instance, q)}
    return emit_segments(instance, _cat(fs, _I64), _cat(t0s, float), _cat(t1s, float),
                         sink=sink, meta=meta)


def _cat(xs: list[np.ndarray], dtype: Any) -> np.ndarray:
    return np.concatenate(xs) if xs else np.zeros(0, dtype)
