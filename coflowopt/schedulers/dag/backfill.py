"""Backfilling of a slot plan: the "BF" of G-DM-BF and G-DM-RT-BF (Shafiee and Ghaderi,
"Scheduling Coflows with Dependency Graph", IEEE/ACM ToN 2021, arXiv 2012.11702: the variants
of its simulations, Section VII; G-DM is its Algorithm 4, Section VI).

The paper names the BF variants and reports their spread over seeds but does not define BF; the
rule here is our reconstruction [C] with our tie rules [C].  Simulate the base plan slot by
slot; in slot ``t``:

1. serve the pairs the base plan assigns to slot ``t``, but only for flows with data left (a
   flow already finished by earlier backfilling frees its ports);
2. then, on the ports still idle, add flows greedily in priority order -- the coflow's rank
   (G-DM: job position in ``sigma``, then the coflow's topological index), then ``(s, r)``
   lexicographic, then flow position [C] -- if the flow has data left, its coflow and job are
   released (release slot ``<= t``) and every Starts-After predecessor coflow is complete by the
   start of slot ``t``;
3. completion times come from this simulation, which stops when every unit is sent.

Step 2 is the shared order-preserving greedy allocator of :mod:`coflowopt.sim.allocate`
(:func:`~coflowopt.sim.allocate.greedy` with ``split="ordered"``, continuing on the residual
capacity the base pairs leave) restricted to whole slots: with one capacity ``c`` on every port,
a residual is ``0`` or ``c`` and every flow the greedy serves gets the full port.
``engine="reference"`` runs exactly that, slot by slot (:func:`backfill_reference`).

``engine="fast"`` (default) is event driven: between two events (a base piece starts or ends, a
flow runs out of data, a release) nothing changes, so a whole run of slots is served at once.
The greedy result is kept up to date by local repair instead of being recomputed: it is the
unique matching in which a candidate is served iff no port of it is held by the base plan or by
a served candidate of higher priority; of the flows on one pair only the best ready one can
ever be served (a heap of ready flows per pair).  When ports change, they are repaired best
candidate first (a heap of ports keyed by their best candidate), so a flow placed within an
event is not evicted again in it; each port keeps its pairs with a candidate ordered by
priority, and a scan stops at the first that fits.  Nothing is done per port and slot: a
port's holder is served lazily (the hold's start is recorded, and ``rem`` and the output piece
are settled when the hold ends), and each ingress port's next event (its base piece's end, its
holder's last slot) sits in a table of blocks of 64 ports with each block's minimum, so the
next event is a minimum over ``m / 64`` blocks and only the blocks with a port due or changed
are read.  Cost per event ``O(m / 64 + 64 k)`` for ``k`` changed ports, plus the repairs,
instead of four passes over the ``m`` ingress ports (an indexed heap of ports, ``O(k log m)``,
was measured slower: on these plans about a fifth of the ports change at every event, most
base pieces being one slot long).  A numba kernel of this module (of other modules it calls
only the shared heap and array helpers of :mod:`coflowopt.sim.events`); the plan it returns
carries the run's events, repairs and scanned entries (:attr:`SlotPlan.counters`).  The
pieces come out in the order of a slot-by-slot pass (by start, then ingress port), each a
maximal run of one flow.  The base can come a chunk at a time (:class:`BackfillRun`), each
chunk's pieces starting after all of the chunks before: the loop stops after the event that
starts a chunk's last piece and goes on with the next, so that G-DM-BF holds one chunk of one
group's base at a time.

BF only adds service to the base plan (step 1 serves every base pair whose flow has data), so no
flow, coflow or job completes later than in the base plan, and the guarantee of the base
algorithm is kept.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from coflowopt._jit import njit
from coflowopt.model import Instance
from coflowopt.schedulers.dag.slots import SlotPlan
from coflowopt.sim.events import grow, iheap_pop, iheap_pop_at, iheap_push, iheap_push_at

__all__ = ["BackfillRun", "backfill", "backfill_ordered", "backfill_reference",
           "ordered_pieces"]

_I64 = np.int64
NONE = np.int64(2**62)  # key of a port without a candidate
FREE, BASE = -1, -2  # holder of a port: nobody, the base plan (else the backfilled flow)
# the kernel's status entries: infeasible base (flow, slot), a flow never served, counters,
# the repair heap's size between calls of the repair step
_BAD_FLOW, _BAD_SLOT, _UNSERVED, _EVENTS, _REPAIRS, _SCANS, _HEAP = range(7)
# the repair heap's first size, in keys per port (the listed ports, at most 2m, are keyed once
# each, and a pop is followed by at most two pushes; it never held more than 2m keys on
# FB2010's jobs or the 1x and 2x synthetic ones); tests set it to 0 to grow it at every event
_HEAP_ROOM = 8


def _check_inputs(instance: Instance, base: SlotPlan, priority: np.ndarray,
                  demand: np.ndarray, release_slot: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    inst = instance
    pr, d, rel = _check_rules(inst, priority, demand, release_slot)
    if base.flow.size and ((base.flow < 0) | (base.flow >= inst.n_flows)).any():
        i = int(np.flatnonzero((base.flow < 0) | (base.flow >= inst.n_flows))[0])
        raise ValueError(f"backfill: base piece {i} names flow {base.flow[i]}, out of range")
    if base.start.size and int(base.start.min()) < 0:
        i = int(np.argmin(base.start))
        raise ValueError(f"backfill: base piece {i} starts at slot {base.start[i]}, before 0")
    served = np.bincount(base.flow, weights=base.length, minlength=inst.n_flows)
    short = np.flatnonzero(served < d)
    if short.size:
        _short(inst, int(short[0]), int(served[short[0]]), d)
    return pr, d, rel


def _check_rules(instance: Instance, priority: np.ndarray, demand: np.ndarray,
                 release_slot: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``priority``, ``demand`` and ``release_slot`` checked and typed (float64, int64,
    int64)."""
    inst = instance
    pr = np.asarray(priority)
    if pr.shape != (inst.n_coflows,):
        raise ValueError(f"backfill: priority needs one rank per coflow ({inst.n_coflows}), "
                         f"got shape {pr.shape}")
    d = np.asarray(demand, dtype=_I64)
    if d.shape != (inst.n_flows,):
        raise ValueError(f"backfill: demand needs one entry per flow ({inst.n_flows}), got "
                         f"shape {d.shape}")
    if (d < 0).any():
        f = int(np.flatnonzero(d < 0)[0])
        raise ValueError(f"backfill: demand of flow {f} is negative ({d[f]})")
    rel = np.asarray(release_slot, dtype=_I64)
    if rel.shape != (inst.n_coflows,):
        raise ValueError(f"backfill: release_slot needs one entry per coflow "
                         f"({inst.n_coflows}), got shape {rel.shape}")
    return np.asarray(pr, dtype=np.float64), d, rel


def _short(instance: Instance, f: int, served: int, d: np.ndarray) -> None:
    raise ValueError(f"backfill: the base plan gives flow {f} (coflow "
                     f"{instance.coflow_id[instance.flow_coflow[f]]!s}) {served} slots, "
                     f"it needs {int(d[f])}")


@njit(cache=True)
def _start_flow_order(flow, start, length, n_flows, top, like):
    """The pieces with ``length > 0`` ordered by (start, flow), ties in their given order: a
    stable counting sort by flow, then one by start (``O(P + F + top)``; ``top`` bounds the
    starts).  The order in ``like``'s dtype.  Not ``slots.counting_sort`` twice: that one
    sorts a key array, so the kept pieces' flows and starts would first be gathered into two
    more arrays of the plan's size (the memory this saves), and its order is int32 only."""
    cnt = np.zeros(n_flows + 1, np.int64)
    n = 0
    for i in range(flow.size):
        if length[i] > 0:
            cnt[flow[i] + 1] += 1
            n += 1
    for f in range(n_flows):
        cnt[f + 1] += cnt[f]
    by_flow = np.empty(n, like.dtype)
    for i in range(flow.size):
        if length[i] > 0:
            by_flow[cnt[flow[i]]] = i
            cnt[flow[i]] += 1
    cnt = np.zeros(top + 1, np.int64)
    for j in range(n):
        cnt[start[by_flow[j]] + 1] += 1
    for t in range(top):
        cnt[t + 1] += cnt[t]
    out = np.empty(n, like.dtype)
    for j in range(n):
        i = by_flow[j]
        out[cnt[start[i]]] = i
        cnt[start[i]] += 1
    return out


@njit(cache=True)
def _gather(col, order, shift, like):
    """``col[order] + shift`` in ``like``'s dtype, without an int64 temporary."""
    out = np.empty(order.size, like.dtype)
    for j in range(order.size):
        out[j] = col[order[j]] + shift
    return out


def _flow_rank(instance: Instance, cprio: np.ndarray) -> np.ndarray:
    """Rank of every flow: coflow priority, then ``(src, dst)``, then position."""
    inst = instance
    F = inst.n_flows
    o = np.lexsort((np.arange(F), inst.flow_dst, inst.flow_src, cprio[inst.flow_coflow]))
    rank = np.empty(F, dtype=_I64)
    rank[o] = np.arange(F, dtype=_I64)
    return rank


def backfill(instance: Instance, base: SlotPlan, priority: np.ndarray, demand: np.ndarray,
             release_slot: np.ndarray, *, engine: Literal["fast", "reference"] = "fast"
             ) -> SlotPlan:
    """The backfilled plan of ``base`` (BF of G-DM-BF, reconstructed [C]; see the module
    docstring).

    ``priority``: one rank per coflow, smaller served first (ties: ``(s, r)``, then flow
    position); ``demand``: each flow's slots (``base`` must give every flow at least that many);
    ``release_slot``: first slot of each coflow.  ``base`` must be feasible (pieces on one
    port disjoint, every coflow served only after its release and its predecessors).
    Returns the plan actually served: each flow exactly ``demand`` slots, no port used twice in
    a slot, no flow completing later than in ``base``.
    """
    if engine not in ("fast", "reference"):
        raise ValueError(f"backfill: engine must be 'fast' or 'reference', got {engine!r}")
    cprio, d, rel = _check_inputs(instance, base, priority, demand, release_slot)
    if engine == "reference":
        return backfill_reference(instance, base, cprio, d, rel)
    # the base pieces by (start, flow), ties in plan order, each column freed once gathered
    # (tens of millions of pieces on a full trace; a combined-key argsort held the key, its
    # order and its scratch beside the whole plan: the run's peak memory)
    box = [base]
    del base  # freed in ordered_pieces when the caller handed over its only reference
    run = BackfillRun(instance, cprio, d, rel)
    run.feed(ordered_pieces(box.pop(), instance.n_flows))
    return run.finish()


def ordered_pieces(plan: SlotPlan, n_flows: int, shift: int = 0
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The pieces of ``plan`` with ``length > 0`` ordered by (start, flow), ``shift`` slots
    later, as three columns, int32 where every value fits (half the memory; the backfill
    widens on use): what :func:`backfill_ordered` reads.  Two stable counting sorts (by
    flow, then by start), then one gather per column, each of the plan's columns freed once
    gathered when the caller handed over its only reference."""
    flow_c, start_c, len_c = plan.flow, plan.start, plan.length
    del plan
    n = flow_c.size
    top = int(start_c.max()) + 1 if n else 1
    # an empty plan in int32 too: concatenated with other groups' int32 pieces, one int64
    # part would widen them all
    small = not n or (shift + top - 1 + int(len_c.max()) < 2 ** 31 - 1
                      and n_flows < 2 ** 31 and n < 2 ** 31)
    bt = np.int32 if small else _I64
    like = np.zeros(0, bt)
    if top <= 4 * n + (1 << 20):
        o = _start_flow_order(flow_c, start_c, len_c, n_flows, top, like)
    else:  # starts spread far apart: a lexsort instead of a count per slot
        o = np.flatnonzero(len_c > 0)
        o = o[np.lexsort((flow_c[o], start_c[o]))].astype(bt)
    b_flow = _gather(flow_c, o, 0, like)
    del flow_c
    b_start = _gather(start_c, o, shift, like)
    del start_c
    b_len = _gather(len_c, o, 0, like)
    del len_c, o
    return b_flow, b_start, b_len


def backfill_ordered(instance: Instance, pieces: tuple[np.ndarray, np.ndarray, np.ndarray],
                     priority: np.ndarray, demand: np.ndarray, release_slot: np.ndarray
                     ) -> SlotPlan:
    """:func:`backfill` (``engine="fast"``) of a base plan given as its pieces ``(flow,
    start, length)`` already in the order the backfill reads them: by (start, flow), each of
    positive length (:func:`ordered_pieces`).  The columns are read in place; handed over as
    the only reference (``pieces`` popped from a list), they are freed when the backfill
    returns.  :class:`BackfillRun` takes them a chunk at a time."""
    run = BackfillRun(instance, priority, demand, release_slot)
    run.feed(pieces)
    del pieces
    return run.finish()


class BackfillRun:
    """:func:`backfill` (``engine="fast"``) of a base plan handed over a chunk at a time, each
    chunk's pieces ``(flow, start, length)`` by (start, flow), of positive length, and
    starting after every piece of the chunks before (:func:`ordered_pieces` of G-DM's
    groups, which follow each other in time): the event loop goes as far as a chunk takes it
    and keeps its state, so that only one chunk is held at a time.  :meth:`finish` runs it to
    the end and returns the served plan (the same as from the chunks joined).

    ``priority``, ``demand``, ``release_slot``: as :func:`backfill`."""

    def __init__(self, instance: Instance, priority: np.ndarray, demand: np.ndarray,
                 release_slot: np.ndarray) -> None:
        cprio, d, rel = _check_rules(instance, priority, demand, release_slot)
        inst = self.instance = instance
        self.demand = d
        m, C = inst.ports, inst.n_coflows
        # the instance's own columns (int32 where it holds them so: no int64 copies of the
        # flows' ports and coflows beside the plan)
        src = np.ascontiguousarray(inst.flow_src)
        dst = np.ascontiguousarray(inst.flow_dst)
        fcof = np.ascontiguousarray(inst.flow_coflow)
        prio = _flow_rank(inst, cprio)
        # pairs present, each with its flows by rank
        pkey = src.astype(_I64) * m + dst
        upair, pair_of = np.unique(pkey, return_inverse=True)
        del pkey
        pair_of = pair_of.astype(np.int32 if upair.size < 2 ** 31 else _I64)
        P = upair.size
        pair_flows = np.lexsort((prio, pair_of)).astype(_I64)
        pair_ptr = np.zeros(P + 1, dtype=_I64)
        np.cumsum(np.bincount(pair_of, minlength=P), out=pair_ptr[1:])
        pair_src, pair_dst = (upair // m).astype(_I64), (upair % m).astype(_I64)
        inp_ptr = np.zeros(m + 1, dtype=_I64)
        np.cumsum(np.bincount(pair_src, minlength=m), out=inp_ptr[1:])
        inp_pairs = np.arange(P, dtype=_I64)  # upair is sorted by src
        outp_pairs = np.argsort(pair_dst, kind="stable").astype(_I64)
        outp_ptr = np.zeros(m + 1, dtype=_I64)
        np.cumsum(np.bincount(pair_dst, minlength=m), out=outp_ptr[1:])
        sptr, succ = inst.successors_ptr
        npred = np.bincount(inst.starts_after[:, 1].astype(_I64), minlength=C).astype(_I64) \
            if inst.starts_after.size else np.zeros(C, dtype=_I64)
        # the kernel's arguments before the state, and the state (_bf_init's blocks)
        self._static = (
            m, src, dst, fcof, prio, pair_of, pair_ptr, inp_ptr, inp_pairs, outp_ptr,
            outp_pairs, np.asarray(inst.coflow_flows_ptr, dtype=_I64),
            np.asarray(inst.coflow_flow_order, dtype=_I64), np.asarray(sptr, dtype=_I64),
            np.asarray(succ, dtype=_I64), rel, np.argsort(rel, kind="stable").astype(_I64))
        like = np.zeros(0, np.int32 if inst.n_flows < 2 ** 31 and P < 2 ** 31 else _I64)
        self._state = list(_bf_init(m, src, dst, d, fcof, prio, pair_ptr, pair_flows, inp_ptr,
                                    inp_pairs, outp_ptr, outp_pairs, npred, C, _HEAP_ROOM * m,
                                    like))
        self._out: list[np.ndarray] | None = None
        self._served = np.zeros(inst.n_flows, _I64)
        self._last = (-1, -1)    # the last piece fed: (start, flow)
        self._fed = 0            # pieces fed

    def feed(self, pieces: tuple[np.ndarray, np.ndarray, np.ndarray]) -> None:
        """Run the event loop through ``pieces`` (checked first: one-line errors naming the
        piece, numbered across chunks); an empty chunk is skipped."""
        b_flow, b_start, b_len = pieces
        del pieces
        if not (b_flow.shape == b_start.shape == b_len.shape and b_flow.ndim == 1):
            raise ValueError(f"backfill: flow/start/length columns differ in shape: "
                             f"{b_flow.shape}, {b_start.shape}, {b_len.shape}")
        n = b_flow.size
        if n == 0:
            return
        code, i = _check_ordered(b_flow, b_start, b_len, self._served)
        at = self._fed + i
        if code:
            what = {1: f"names flow {b_flow[i]}, out of range",
                    2: f"starts at slot {b_start[i]}, before 0",
                    3: f"has length {b_len[i]} (positive lengths only)",
                    4: f"(flow {b_flow[i]}, slot {b_start[i]}) is not after piece {at - 1} "
                       f"(flow {b_flow[i - 1]}, slot {b_start[i - 1]}): pieces by (start, "
                       f"flow)"}[code]
            raise ValueError(f"backfill: base piece {at} {what}")
        if self._fed and int(b_start[0]) <= self._last[0]:
            raise ValueError(f"backfill: base piece {self._fed} (flow {b_flow[0]}, slot "
                             f"{b_start[0]}) starts no later than piece {self._fed - 1} (flow "
                             f"{self._last[1]}, slot {self._last[0]}), the last of the chunk "
                             f"before: each chunk starts after the one before")
        self._fed += n
        self._last = (int(b_start[-1]), int(b_flow[-1]))
        if self._state[_SC][_PHASE] != _DONE:
            self._run(b_flow, b_start, b_len, False)

    def _run(self, b_flow: np.ndarray, b_start: np.ndarray, b_len: np.ndarray,
             last: bool) -> None:
        st = self._state
        wide = b_start.dtype != np.int32 or self.instance.n_flows >= 2 ** 31
        if self._out is None:
            # room for four pieces a flow (about three on the synthetic jobs), twice the
            # first chunk's if more: untouched room costs no memory, and a growth touches
            # the copy whole (grown when full); int32 while the slots fit (the chunks' dtype)
            cap = max(16, 2 * b_flow.size, 4 * self.instance.n_flows)
            self._out = [np.empty(cap, _I64 if wide else np.int32) for _ in range(3)]
        elif wide and self._out[0].dtype != _I64:   # a chunk past 2^31 slots: widened
            n = int(st[_SC][_NOUT])
            for c in range(3):
                w = np.empty(self._out[c].size, _I64)
                w[:n] = self._out[c][:n]
                self._out[c] = w
        hp, *out = _bf_kernel(*self._static, *st, *self._out,
                              b_flow, b_start, b_len, last)
        st[_HP] = hp
        self._out = out

    def finish(self) -> SlotPlan:
        """The served plan, after the event loop has run to the end; its refusals (a flow
        the base plan gives fewer slots than it needs, a base piece served before its coflow
        may start, a flow never served in full)."""
        inst, d = self.instance, self.demand
        short = np.flatnonzero(self._served < d)
        if short.size:
            _short(inst, int(short[0]), int(self._served[short[0]]), d)
        st = self._state
        if st[_SC][_PHASE] != _DONE:
            z = np.zeros(0, np.int32 if self._out is None else self._out[0].dtype)
            self._run(z, z, z, True)
        status, sc = st[_STATUS], st[_SC]
        out = self._out or [np.zeros(0, _I64)] * 3
        st.clear()          # the state's blocks freed before the plan is made
        self._out = None
        fcof = inst.flow_coflow
        if status[_BAD_FLOW] >= 0:
            f = int(status[_BAD_FLOW])
            raise ValueError(f"backfill: the base plan serves flow {f} (coflow "
                             f"{inst.coflow_id[fcof[f]]!s}) at slot {int(status[_BAD_SLOT])}, "
                             f"before its coflow is released or its predecessors complete "
                             f"(infeasible base)")
        if status[_UNSERVED] >= 0:
            f = int(status[_UNSERVED])
            raise ValueError(f"backfill: flow {f} (coflow {inst.coflow_id[fcof[f]]!s}) was never "
                             f"served in full (its coflow never became ready)")
        n = int(sc[_NOUT])
        cols = []
        for c in range(3):  # widened to the plan's int64 a column at a time
            cols.append(out[c][:n].astype(_I64))
            out[c] = None   # type: ignore[call-overload]
        return SlotPlan(cols[0], cols[1], cols[2], counters={
            "events": int(status[_EVENTS]), "port_repairs": int(status[_REPAIRS]),
            "pair_scans": int(status[_SCANS])})


@njit(cache=True)
def _check_ordered(flow, start, length, served):
    """``(0, -1)`` when every piece names a flow, starts at 0 or later, has a positive length
    and comes after the piece before it by (start, flow); else ``(code, piece)`` of the first
    that does not (1 flow, 2 start, 3 length, 4 order).  ``served`` gets each flow's slots."""
    F = served.size
    for i in range(flow.size):
        f = np.int64(flow[i])
        if f < 0 or f >= F:
            return 1, i
        if start[i] < 0:
            return 2, i
        if length[i] <= 0:
            return 3, i
        if i and (start[i] < start[i - 1] or (start[i] == start[i - 1] and f <= flow[i - 1])):
            return 4, i
        served[f] += length[i]
    return 0, -1


@njit(cache=True, inline="always")
def _push(u, wl, inwl, nwl):
    """Put port ``u`` on the repair list (once); its key is recomputed before use."""
    if inwl[u] == 0:
        wl[nwl] = u
        nwl += 1
    inwl[u] = 2  # 2: listed, key stale; 1: listed, key fresh
    return nwl


@njit(cache=True, inline="always")
def _scan_list(bestp, a0, n, act, akey, aoth, op_o, status):
    """:func:`_scan` on one port's list: its holder's priority ``bestp``, its entries
    ``a0 .. a0 + n`` of ``act`` / ``akey`` / ``aoth``, the other side's holders ``op_o``."""
    if bestp < 0:
        return NONE, -1  # held by the base plan
    for k in range(a0, a0 + n):
        x = akey[k]
        if x >= bestp:
            break  # ordered: nothing better than the holder is left
        if x < op_o[aoth[k]]:
            status[_SCANS] += k - a0 + 1
            return x, act[k]
    status[_SCANS] += n
    return NONE, -1


@njit(cache=True, inline="always")
def _scan(u, m, op_in, op_out, inp_ptr, outp_ptr, act_in, akey_in, aoth_in, acnt_in, act_out,
          akey_out, aoth_out, acnt_out, status):
    """The best candidate at port ``u`` (``u >= m``: egress ``u - m``): the smallest pair
    priority below the holder of ``u`` and below the holder of the pair's other port (the base
    plan holds with -1, a free port with F), over the pairs of ``u`` that have a candidate
    (``act_*``, ordered by priority, with the priority and the other port inline so the scan
    reads contiguous memory).  ``(priority, list entry)``; ``(NONE, -1)`` if none.  Each side
    passes its own arrays: chosen in a branch, each array was one variable whose reference
    counts took eight atomic operations a scan."""
    if u < m:
        return _scan_list(op_in[u], inp_ptr[u], acnt_in[u], act_in, akey_in, aoth_in, op_out,
                          status)
    return _scan_list(op_out[u - m], outp_ptr[u - m], acnt_out[u - m], act_out, akey_out,
                      aoth_out, op_in, status)


@njit(cache=True, inline="always")
def _put(k, y, act, akey, aoth, apos, key, oth):
    act[k] = y
    akey[k] = key[y]
    aoth[k] = oth[y]


@njit(cache=True, inline="always")
def _resort(e, a0, cnt, act, akey, aoth, apos, key, oth):
    """Move entry ``e`` (at ``apos[e]`` of the list ``act[a0:a0+cnt]``) to its place in the
    list ordered by ``key`` (insertion step after ``key[e]`` changed)."""
    k = apos[e]
    x = key[e]
    while k > 0 and akey[a0 + k - 1] > x:
        y = act[a0 + k - 1]
        _put(a0 + k, y, act, akey, aoth, apos, key, oth)
        apos[y] = k
        k -= 1
    while k + 1 < cnt and akey[a0 + k + 1] < x:
        y = act[a0 + k + 1]
        _put(a0 + k, y, act, akey, aoth, apos, key, oth)
        apos[y] = k
        k += 1
    _put(a0 + k, e, act, akey, aoth, apos, key, oth)
    apos[e] = k


@njit(cache=True, inline="always")
def _drop(e, a0, cnt, act, akey, aoth, apos, key, oth):
    """Remove entry ``e`` from the ordered list ``act[a0:a0+cnt]`` (keeps the order)."""
    for k in range(apos[e], cnt - 1):
        y = act[a0 + k + 1]
        _put(a0 + k, y, act, akey, aoth, apos, key, oth)
        apos[y] = k
    apos[e] = -1


@njit(cache=True, inline="always")
def _set_best(p, f, prio, pair_best, pbp_in, pbp_out, pos_out, inp_src, out_dst, inp_ptr,
              outp_ptr, act_in, akey_in, aoth_in, acnt_in, apos_in, act_out, akey_out,
              aoth_out, acnt_out, apos_out, odst, osrc, F):
    """Pair ``p``'s best candidate becomes ``f`` (-1: none); each port keeps its pairs that
    have a candidate in a list ordered by the candidate's priority."""
    was = pair_best[p] >= 0
    pair_best[p] = f
    x = prio[f] if f >= 0 else F
    q = pos_out[p]
    pbp_in[p] = x
    pbp_out[q] = x
    u = inp_src[p]
    r = out_dst[q]
    if f >= 0:
        if not was:
            apos_in[p] = acnt_in[u]
            _put(inp_ptr[u] + acnt_in[u], p, act_in, akey_in, aoth_in, apos_in, pbp_in, odst)
            acnt_in[u] += 1
            apos_out[q] = acnt_out[r]
            _put(outp_ptr[r] + acnt_out[r], q, act_out, akey_out, aoth_out, apos_out, pbp_out,
                 osrc)
            acnt_out[r] += 1
        _resort(p, inp_ptr[u], acnt_in[u], act_in, akey_in, aoth_in, apos_in, pbp_in, odst)
        _resort(q, outp_ptr[r], acnt_out[r], act_out, akey_out, aoth_out, apos_out, pbp_out,
                osrc)
    elif was:
        _drop(p, inp_ptr[u], acnt_in[u], act_in, akey_in, aoth_in, apos_in, pbp_in, odst)
        acnt_in[u] -= 1
        _drop(q, outp_ptr[r], acnt_out[r], act_out, akey_out, aoth_out, apos_out, pbp_out,
              osrc)
        acnt_out[r] -= 1


@njit(cache=True, inline="always")
def _next_best(p, pair_ptr, heap, hcnt, rem, by_rank):
    """The best candidate of pair ``p``: the top of its heap of ready flows, after dropping
    the finished ones (a flow the base plan finished may sit below the top: lazy removal).

    The heap holds flow ranks (``prio``, a permutation of the flows, so no two keys tie) on
    the shared integer heap of :mod:`coflowopt.sim.events`; ``by_rank`` maps a rank back to
    its flow.  With distinct keys the shared sift steps move exactly what the former private
    heap keyed by ``prio[f]`` moved, so the pops (and the plans) are the same."""
    a0 = pair_ptr[p]
    while hcnt[p] > 0 and rem[by_rank[heap[a0]]] == 0:
        hcnt[p] = iheap_pop_at(heap, a0, hcnt[p])
    return by_rank[heap[a0]] if hcnt[p] > 0 else -1


# -- the event loop's steps: plain compiled functions, one call per event; their per-port and
# per-repair helpers (_push, _holder, _free, _key_port, _changed, _scan, _set_best, _next_best) are
# inlined, so that no call costs an atomic reference-count pair per array argument (half the
# kernel's samples were NRT_incref/NRT_decref with _scan and _set_best plain: FB2010 jobs,
# kernel CPU 4.4 -> 3.9 s).  A step inlined in turn would keep the array copies of the helpers
# it inlines (coflowopt._jit forwards a copy only when its source is defined outside the loop):
# measured here, all steps inlined: 4.4 s again; on the static-progress kernel split the same
# way (FB2010): over 440 s of CPU in NRT_incref (gdb) and unfinished, against 167 s for the
# whole run with plain steps.


@njit(cache=True, inline="always")
def _holder(s, own_in, base_f):
    """The flow on ingress port ``s`` (backfilled or the base plan's), -1 if it is free."""
    o = own_in[s]
    if o >= 0:
        return o
    if o == BASE:
        return base_f[s]
    return np.int64(-1)


@njit(cache=True, inline="always")
def _free(s, r, own_in, op_in, own_out, op_out, F):
    """Ingress ``s`` and egress ``r`` become free (priority F: anyone may take them)."""
    own_in[s] = FREE
    op_in[s] = F
    own_out[r] = FREE
    op_out[r] = F


_BLK = 64  # ports per block of the port event table (one contiguous min per block)


@njit(cache=True, inline="always")
def _changed(chg, m, s):
    """Ingress port ``s``'s holder or base piece may have changed in this event: flag it and
    its block for :func:`_step_hold` (``chg``: the port flags, then one flag per block of
    ``_BLK`` ports; one array so that the repair step stays under 30 arguments)."""
    chg[s] = 1
    chg[(m + _BLK - 1) // _BLK * _BLK + s // _BLK] = 1


@njit(cache=True)
def _step_due(t, m, pkey, bmin, chg, due):
    """Step 0: the ingress ports whose event (base piece end, holder out of data) is at ``t``,
    in port order, from the blocks whose minimum is ``t``; they are flagged changed (keyed
    again by :func:`_step_hold`).  Returns their number."""
    nd = 0
    for b in range(bmin.size):
        if bmin[b] != t:
            continue
        for s in range(b * _BLK, min(m, (b + 1) * _BLK)):
            if pkey[s] == t:
                due[nd] = s
                nd += 1
                _changed(chg, m, s)
    return nd


@njit(cache=True)
def _step_finished(t, m, F, dst, fcof, pair_of, rem, own_in, own_out, op_in, op_out, wl,
                   inwl, pair_best, cf_left, cq, fix, nwl, left, due, nd, hold, out_s, out_n,
                   last_idx):
    """Step 1: flows that ran out at ``t`` (on the due ports of :func:`_step_due`, the first
    ``nd`` ports of ``due``) end their hold (settled: ``rem`` 0, their piece's length)
    and free their ports; the pairs they were best of go on ``fix`` (refreshed by the caller: a
    pair has one ingress, so it is listed at most once); their coflows, when complete, go on
    the opening queue ``cq``.  Returns ``(nwl, nq, left, nfix)``."""
    nq = 0
    nfix = 0
    for k in range(nd):
        s = due[k]
        g = hold[s]
        if g < 0 or out_s[last_idx[g]] + rem[g] != t:
            continue
        out_n[last_idx[g]] = rem[g]
        rem[g] = 0
        hold[s] = -1
        _free(s, dst[g], own_in, op_in, own_out, op_out, F)
        nwl = _push(s, wl, inwl, nwl)
        nwl = _push(m + dst[g], wl, inwl, nwl)
        p = pair_of[g]
        if pair_best[p] == g:
            fix[nfix] = p
            nfix += 1
        c = fcof[g]
        cf_left[c] -= 1
        left -= 1
        if cf_left[c] == 0:
            cq[nq] = c
            nq += 1
    return nwl, nq, left, nfix


@njit(cache=True)
def _step_base_ends(t, m, F, dst, own_in, own_out, op_in, op_out, base_f, base_end, wl,
                    inwl, nwl, due, nd):
    """Step 2: base pieces ending at ``t`` (on the ``nd`` due ports of ``due``) free their
    ports.  Returns ``nwl``."""
    for k in range(nd):
        s = due[k]
        f = base_f[s]
        if f >= 0 and base_end[s] == t:
            if own_in[s] == BASE:
                r = dst[f]
                _free(s, r, own_in, op_in, own_out, op_out, F)
                nwl = _push(s, wl, inwl, nwl)
                nwl = _push(m + r, wl, inwl, nwl)
            base_f[s] = -1
    return nwl


@njit(cache=True)
def _step_open(t, rel, rel_order, npred, sptr, succ, cf_left, is_open, cq, nq, rp, newc):
    """Step 3: coflows released by ``t``, and successors of completed coflows, open; those
    with data go on ``newc`` (their flows join their pairs' heaps in the caller).  Admission
    keeps its own skeleton: releases are integer slots known up front, so a pointer into them
    sorted (``rel_order``) stands for the shared admission heap (float keys), and a successor
    released by ``t`` opens in this event's cascade (``cq``).  Returns ``(rp, nnew)``."""
    C = rel.size
    while rp < C and rel[rel_order[rp]] <= t:
        c = rel_order[rp]
        rp += 1
        if npred[c] == 0:
            cq[nq] = c
            nq += 1
    nnew = 0
    k = 0
    while k < nq:
        c = cq[k]
        k += 1
        if cf_left[c] == 0 and not is_open[c]:
            # a coflow without data completes as soon as it may start
            is_open[c] = True
        if cf_left[c] == 0:
            for e in range(sptr[c], sptr[c + 1]):
                v = succ[e]
                npred[v] -= 1
                if npred[v] == 0 and rel[v] <= t:
                    cq[nq] = v
                    nq += 1
            continue
        if is_open[c]:
            continue
        is_open[c] = True
        newc[nnew] = c
        nnew += 1
    return rp, nnew


@njit(cache=True)
def _step_base_starts(t, m, F, src, dst, fcof, b_flow, b_start, b_len, rem, is_open, own_in,
                      own_out, op_in, op_out, base_f, base_end, wl, inwl, nwl, bp, status, chg):
    """Step 4: base pieces starting at ``t`` take their ports, evicting backfilled flows (a
    piece of a coflow not yet open marks the base infeasible); each port keeps its piece's
    flow and end (``base_f``, ``base_end``: the chunk of pieces it came from may be gone when
    the piece ends); the ingress ports touched go on the change list ``chg``.  Returns
    ``(bp, nwl)``."""
    NB = b_flow.size
    while bp < NB and b_start[bp] <= t:
        i = bp
        bp += 1
        f = np.int64(b_flow[i])
        s = src[f]
        r = dst[f]
        base_f[s] = f
        base_end[s] = np.int64(b_start[i]) + b_len[i]
        _changed(chg, m, s)  # a new base end, maybe a new holder
        if rem[f] == 0:
            continue
        if not is_open[fcof[f]] and status[_BAD_FLOW] < 0:
            status[_BAD_FLOW] = f
            status[_BAD_SLOT] = t
        g = own_in[s]
        if g >= 0:
            _free(s, dst[g], own_in, op_in, own_out, op_out, F)
            nwl = _push(m + dst[g], wl, inwl, nwl)
        g = own_out[r]
        if g >= 0:
            _free(src[g], r, own_in, op_in, own_out, op_out, F)
            nwl = _push(src[g], wl, inwl, nwl)
            _changed(chg, m, src[g])
        own_in[s] = BASE
        op_in[s] = -1
        own_out[r] = BASE
        op_out[r] = -1
    return bp, nwl


@njit(cache=True, inline="always")
def _key_port(hp, nh, kcur, u, x, M2):
    """Port ``u``'s best candidate is now ``x``: record it and push ``(x, u)`` on the repair
    heap (one integer key ``x * 2m + u``) when there is one (the caller has made room).
    Returns ``nh``."""
    kcur[u] = x
    if x < NONE:
        nh = iheap_push(hp, nh, x * M2 + u)
    return nh


@njit(cache=True)
def _step_repair(m, src, dst, prio, inp_pairs, outp_pairs, own_in, own_out, op_in, op_out,
                 pair_best, inp_ptr, outp_ptr, act_in, akey_in, aoth_in, acnt_in, act_out,
                 akey_out, aoth_out, acnt_out, wl, inwl, nwl, kcur, hp, freed, status, chg):
    """Step 5: repair the greedy matching at the ports that changed, best candidate first (a
    candidate placed in priority order is not evicted again within the event).  A heap of
    ``(key, port)``, key = the port's best candidate; entries are checked again when popped
    (lazy: a stale one is dropped or pushed back with its new key).  The ingress ports that
    get a new holder go on the change list ``chg``.  The heap's size is kept in
    ``status[_HEAP]``; when the heap is full the step stops, the caller grows ``hp`` and
    calls again with the ports still to key (``hp`` is never rebound here: each rebinding
    of an array costs two atomic reference-count operations).  Returns the number of listed
    ports not yet keyed (``status[_HEAP]`` is 0 when the repair is done)."""
    F = src.size
    M2 = np.int64(2 * m)
    nh = status[_HEAP]
    # the listed ports from the last (keys are distinct but for a port's stale copies, so
    # the pops do not depend on the order of the pushes)
    while nwl > 0:
        if nh + 1 > hp.size:
            status[_HEAP] = nh
            return nwl  # full before every listed port is keyed: grown and called again
        nwl -= 1
        u = wl[nwl]
        inwl[u] = 0
        x, _ = _scan(u, m, op_in, op_out, inp_ptr, outp_ptr, act_in, akey_in, aoth_in,
                     acnt_in, act_out, akey_out, aoth_out, acnt_out, status)
        nh = _key_port(hp, nh, kcur, u, x, M2)
    while nh > 0:
        if nh + 1 > hp.size:
            break  # a pop is followed by at most two pushes: grown and called again
        top = hp[0]
        nh = iheap_pop(hp, nh)
        u = top % M2
        if top // M2 != kcur[u]:
            continue  # superseded
        x, e = _scan(u, m, op_in, op_out, inp_ptr, outp_ptr, act_in, akey_in, aoth_in,
                     acnt_in, act_out, akey_out, aoth_out, acnt_out, status)
        if x != kcur[u]:
            nh = _key_port(hp, nh, kcur, u, x, M2)
            continue
        kcur[u] = NONE
        best = pair_best[inp_pairs[e]] if u < m else pair_best[outp_pairs[e]]
        status[_REPAIRS] += 1
        s = src[best]
        r = dst[best]
        nv = 0
        g = own_in[s]
        if g >= 0:
            own_out[dst[g]] = FREE
            op_out[dst[g]] = F
            if dst[g] != r:
                freed[nv] = m + dst[g]
                nv += 1
        g = own_out[r]
        if g >= 0:
            own_in[src[g]] = FREE
            op_in[src[g]] = F
            _changed(chg, m, src[g])
            if src[g] != s:
                freed[nv] = src[g]
                nv += 1
        _changed(chg, m, s)
        own_in[s] = best
        op_in[s] = prio[best]
        own_out[r] = best
        op_out[r] = prio[best]
        for k in range(nv):
            v = freed[k]
            x, _ = _scan(v, m, op_in, op_out, inp_ptr, outp_ptr, act_in, akey_in, aoth_in,
                         acnt_in, act_out, akey_out, aoth_out, acnt_out, status)
            if x < kcur[v] or kcur[v] >= NONE:
                nh = _key_port(hp, nh, kcur, v, x, M2)
    status[_HEAP] = nh
    return 0


@njit(cache=True)
def _step_next(b_start, rel, rel_order, rp, bp, bmin):
    """Step 6: the next event: a base piece starts, a release, or the first port event (a
    base piece ends, a holder runs out of data: the smallest block minimum); -1 if none."""
    t_next = np.int64(-1)
    if bp < b_start.size:
        t_next = np.int64(b_start[bp])
    if rp < rel.size:
        x = rel[rel_order[rp]]
        if t_next < 0 or x < t_next:
            t_next = x
    for b in range(bmin.size):
        x = bmin[b]
        if x < NONE and (t_next < 0 or x < t_next):
            t_next = x
    return t_next


@njit(cache=True)
def _step_hold(t, m, chg, own_in, base_f, base_end, hold, rem, last_idx, out_f, out_s, out_n,
               n_out, pkey, bmin):
    """Step 7: the ingress ports flagged changed (``chg``), in port order: a hold that ended
    at ``t`` is settled (its piece gets its length, its flow's ``rem`` drops by it), a hold
    that begins at ``t`` opens a piece (length settled when it ends); the port's event (its
    base piece's end, its holder's last slot) is written to ``pkey`` and the minimum of each
    changed block to ``bmin``; the flags are cleared.  Ports off the list keep serving
    untouched: a run of slots costs nothing per port.  The pieces come out in the order of a
    slot-by-slot pass over the ports (a hold that begins at ``t`` never continues its flow's
    piece ending at ``t``: a flow is only ever served on its own ingress, so it held that
    port just before only if it is the port's holder still).  The output columns have room
    for a piece per ingress port beyond ``n_out`` (the caller grows them).  Returns
    ``n_out``."""
    nb = bmin.size
    NP = nb * _BLK
    for b in range(nb):
        if chg[NP + b] == 0:
            continue
        chg[NP + b] = 0
        for s in range(b * _BLK, min(m, (b + 1) * _BLK)):
            if chg[s] == 0:
                continue
            chg[s] = 0
            g = _holder(s, own_in, base_f)
            h = hold[s]
            if g != h:
                if h >= 0:
                    x = t - out_s[last_idx[h]]
                    out_n[last_idx[h]] = x
                    rem[h] -= x
                if g >= 0:
                    out_f[n_out] = g
                    out_s[n_out] = t
                    out_n[n_out] = 0
                    last_idx[g] = n_out
                    n_out += 1
                hold[s] = g
            key = NONE
            if base_f[s] >= 0:
                key = base_end[s]
            if g >= 0:
                key = min(key, out_s[last_idx[g]] + rem[g])
            pkey[s] = key
        x = NONE
        for s in range(b * _BLK, (b + 1) * _BLK):
            x = min(x, pkey[s])
        bmin[b] = x
    return n_out


@njit(cache=True)
def _port_lists(m, src, dst, pair_ptr, pair_flows, inp_ptr, inp_pairs, outp_ptr, outp_pairs):
    """The static per-pair arrays of the port lists: each pair's entry in its egress list,
    its ingress and egress port, and the other port of each list entry (``odst`` for ingress
    lists, ``osrc`` for egress lists)."""
    P = pair_ptr.size - 1
    pos_out = np.empty(P, dtype=np.int64)
    for q in range(P):
        pos_out[outp_pairs[q]] = q
    inp_src = np.empty(P, dtype=np.int64)
    out_dst = np.empty(P, dtype=np.int64)
    for u in range(m):
        for k in range(inp_ptr[u], inp_ptr[u + 1]):
            inp_src[inp_pairs[k]] = u
        for k in range(outp_ptr[u], outp_ptr[u + 1]):
            out_dst[k] = u
    odst = np.empty(P, dtype=np.int64)
    osrc = np.empty(P, dtype=np.int64)
    for q in range(P):
        odst[q] = dst[pair_flows[pair_ptr[inp_pairs[q]]]]
        osrc[q] = src[pair_flows[pair_ptr[outp_pairs[q]]]]
    return pos_out, inp_src, out_dst, odst, osrc


#: the event loop's scalars carried from one chunk of base pieces to the next (``sc``): the
#: current slot, the release pointer, the pieces written, the flows with data left, the phase
_T, _RP, _NOUT, _LEFT, _PHASE = range(5)
#: phases: no event yet; between two events (the chunk ran out); finished
_FRESH, _BETWEEN, _DONE = 0, 1, 2
# rows of the state blocks (_bf_init): per ingress port, per port (2m), per flow, per pair,
# per coflow
_PM = 11
_PP = 17
_PC = 4
# places in _bf_init's tuple of the arrays the driver reads or rebinds
_HP, _STATUS, _SC = 12, 13, 14


@njit(cache=True)
def _bf_init(m, src, dst, demand, fcof, prio, pair_ptr, pair_flows, inp_ptr, inp_pairs,
             outp_ptr, outp_pairs, npred0, C, heap0, like):
    """The event loop's state before the first event, in a few blocks (one row per array;
    :func:`_bf_kernel` names the rows), so that it can be carried from one chunk of base
    pieces to the next.  The per-flow and per-pair blocks hold flow ranks, counts, pairs and
    ports: ``like``'s dtype (int32 below 2^31 flows and output pieces, half the memory)."""
    F = src.size
    P = pair_ptr.size - 1
    rem = demand.copy()
    last_idx = np.full(F, -1, dtype=np.int64)     # a holder's open piece
    pf = np.empty((2, F), dtype=like.dtype)
    by_rank = pf[1]                      # pf[0]: per pair, its ready flows' heap (ranks)
    for f in range(F):
        by_rank[prio[f]] = f
    pc = np.zeros((_PC, C), dtype=np.int64)
    cf_left, npred = pc[0], pc[1]                    # pc[2], pc[3]: the cq and newc queues
    for f in range(F):
        if rem[f] > 0:
            cf_left[fcof[f]] += 1
    npred[:] = npred0
    pm = np.empty((_PM, m), dtype=np.int64)
    pm[0:2] = FREE      # own_in, own_out: nobody
    pm[2:4] = F         # op_in, op_out: priority of the holder, F when free, -1 for the base
    pm[4:7] = -1        # base_f (base_end in pm[5]), hold
    pm[9:11] = 0        # acnt_in, acnt_out: pairs with a candidate per port
    pp = np.empty((_PP, P), dtype=like.dtype)
    pp[0] = -1          # pair_best
    pp[1] = 0           # hcnt
    pp[2:4] = F         # pbp_in, pbp_out: best candidate's priority per pair
    pp[10:12] = -1      # apos_in, apos_out
    pos_out, inp_src, out_dst, odst, osrc = _port_lists(
        m, src, dst, pair_ptr, pair_flows, inp_ptr, inp_pairs, outp_ptr, outp_pairs)
    pp[12, :] = pos_out
    pp[13, :] = inp_src
    pp[14, :] = out_dst
    pp[15, :] = odst
    pp[16, :] = osrc
    nb = (m + _BLK - 1) // _BLK
    p2m = np.empty((2, 2 * m), dtype=np.int64)
    p2m[1] = NONE       # kcur: each port's heap key
    sc = np.zeros(5, dtype=np.int64)
    for c in range(C):
        sc[_LEFT] += cf_left[c]
    status = np.full(7, -1, dtype=np.int64)
    status[_EVENTS:] = 0  # counters: events, port repairs, pair scans; the heap's size
    return (pm, p2m, np.zeros(2 * m, dtype=np.int8), rem, last_idx, pf, pp, pc,
            np.zeros(C, dtype=np.bool_),
            np.full(nb * _BLK, NONE, dtype=np.int64), np.full(nb, NONE, dtype=np.int64),
            np.zeros(nb * _BLK + nb, dtype=np.int8), np.empty(max(heap0, 1), dtype=np.int64),
            status, sc)


@njit(cache=True)
def _bf_kernel(m, src, dst, fcof, prio, pair_of, pair_ptr, inp_ptr, inp_pairs, outp_ptr,
               outp_pairs, cf_ptr, cf_flows, sptr, succ, rel, rel_order, pm, p2m, inwl, rem,
               last_idx, pf, pp, pc, is_open, pkey, bmin, chg, hp, status, sc, out_f, out_s,
               out_n, b_flow, b_start, b_len, last):
    """The event loop (module docstring, ``engine="fast"``): steps 1-7 at each event ``t``,
    over one chunk of the base pieces (``b_flow``, ``b_start``, ``b_len``, by (start, flow);
    every piece of a later chunk starts after all of these).  A chunk that is not the
    ``last`` ends the call after the event that starts its last piece; the next call goes on
    from there (the state in :func:`_bf_init`'s blocks and ``sc``).  Returns the repair heap
    and the output columns (grown: rebound)."""
    F = src.size
    own_in, own_out, op_in, op_out, base_f, base_end, hold, due, fix, acnt_in, acnt_out = (
        pm[0], pm[1], pm[2], pm[3], pm[4], pm[5], pm[6], pm[7], pm[8], pm[9], pm[10])
    wl, kcur = p2m[0], p2m[1]
    heap, by_rank = pf[0], pf[1]
    pair_best, hcnt, pbp_in, pbp_out, act_in, act_out, akey_in, akey_out = (
        pp[0], pp[1], pp[2], pp[3], pp[4], pp[5], pp[6], pp[7])
    aoth_in, aoth_out, apos_in, apos_out, pos_out, inp_src, out_dst, odst, osrc = (
        pp[8], pp[9], pp[10], pp[11], pp[12], pp[13], pp[14], pp[15], pp[16])
    cf_left, npred, cq, newc = pc[0], pc[1], pc[2], pc[3]
    freed = np.empty(2, dtype=np.int64)
    NB = b_flow.size
    nwl = 0
    t = sc[_T]
    rp = sc[_RP]
    n_out = sc[_NOUT]
    left = sc[_LEFT]
    between = sc[_PHASE] == _BETWEEN
    bp = 0
    while True:
        if between:     # after an event: the next one
            between = False
            t_next = _step_next(b_start, rel, rel_order, rp, bp, bmin)
            if t_next < 0:
                break
            status[_EVENTS] += 1
            t = t_next
        nd = _step_due(t, m, pkey, bmin, chg, due)
        nwl, nq, left, nfix = _step_finished(t, m, F, dst, fcof, pair_of, rem, own_in,
                                             own_out, op_in, op_out, wl, inwl, pair_best,
                                             cf_left, cq, fix, nwl, left, due, nd, hold,
                                             out_s, out_n, last_idx)
        for k in range(nfix):
            p = fix[k]
            b = _next_best(p, pair_ptr, heap, hcnt, rem, by_rank)
            _set_best(p, b, prio, pair_best, pbp_in, pbp_out, pos_out, inp_src, out_dst,
                      inp_ptr, outp_ptr, act_in, akey_in, aoth_in, acnt_in, apos_in, act_out,
                      akey_out, aoth_out, acnt_out, apos_out, odst, osrc, F)
        nwl = _step_base_ends(t, m, F, dst, own_in, own_out, op_in, op_out, base_f, base_end,
                              wl, inwl, nwl, due, nd)
        rp, nnew = _step_open(t, rel, rel_order, npred, sptr, succ, cf_left, is_open, cq, nq,
                              rp, newc)
        # the opened coflows' flows with data join their pairs' heaps (helpers take < 30
        # arguments: a longer call is compiled as f(*args), which numba cannot inline)
        for j in range(nnew):
            c = newc[j]
            for e in range(cf_ptr[c], cf_ptr[c + 1]):
                f = cf_flows[e]
                if rem[f] > 0:
                    p = pair_of[f]
                    hcnt[p] = iheap_push_at(heap, pair_ptr[p], hcnt[p], prio[f])
                    b = pair_best[p]
                    if b < 0 or prio[f] < prio[b]:
                        _set_best(p, f, prio, pair_best, pbp_in, pbp_out, pos_out, inp_src,
                                  out_dst, inp_ptr, outp_ptr, act_in, akey_in, aoth_in,
                                  acnt_in, apos_in, act_out, akey_out, aoth_out, acnt_out,
                                  apos_out, odst, osrc, F)
                        nwl = _push(src[f], wl, inwl, nwl)
        bp, nwl = _step_base_starts(t, m, F, src, dst, fcof, b_flow, b_start, b_len, rem,
                                    is_open, own_in, own_out, op_in, op_out, base_f, base_end,
                                    wl, inwl, nwl, bp, status, chg)
        while True:
            nwl = _step_repair(m, src, dst, prio, inp_pairs, outp_pairs, own_in, own_out,
                               op_in, op_out, pair_best, inp_ptr, outp_ptr, act_in, akey_in,
                               aoth_in, acnt_in, act_out, akey_out, aoth_out, acnt_out, wl,
                               inwl, nwl, kcur, hp, freed, status, chg)
            if nwl == 0 and status[_HEAP] == 0:
                break
            hp = grow(hp, hp.size)  # full: twice the room, then go on
        # room for a new piece on every ingress port (one each at most), so that the step
        # does not rebind its output columns
        while n_out + m > out_f.size:
            out_f = grow(out_f, out_f.size)
            out_s = grow(out_s, out_s.size)
            out_n = grow(out_n, out_n.size)
        n_out = _step_hold(t, m, chg, own_in, base_f, base_end, hold, rem, last_idx, out_f,
                           out_s, out_n, n_out, pkey, bmin)
        if left == 0:
            break
        between = True
        if bp == NB and not last:
            break       # the next chunk's pieces start later: the next call goes on
    sc[_T] = t
    sc[_RP] = rp
    sc[_NOUT] = n_out
    sc[_LEFT] = left
    sc[_PHASE] = _BETWEEN if between else _DONE
    if sc[_PHASE] == _DONE and left > 0:
        for f in range(F):
            if rem[f] > 0:
                status[_UNSERVED] = f
                break
    return hp, out_f, out_s, out_n


def backfill_reference(instance: Instance, base: SlotPlan, priority: np.ndarray,
                       demand: np.ndarray, release_slot: np.ndarray) -> SlotPlan:
    """The BF rule slot by slot through the shared allocator (tests and small instances).

    Each slot: base pairs of flows with data left hold their ports (residual 0), then
    :func:`coflowopt.sim.allocate.greedy` (``split="ordered"``, ``fresh=False``) serves the
    ready coflows in ``priority`` order on the ports left, each coflow's flows in ``(s, r)``
    order.  One Python iteration per slot: use :func:`backfill` for anything large.
    """
    from coflowopt.sim import allocate

    cprio, d, rel = _check_inputs(instance, base, priority, demand, release_slot)
    inst = instance
    F, C = inst.n_flows, inst.n_coflows
    st = allocate.AllocState.for_instance(inst)
    # within a coflow: (s, r), then position (the coflow pointer is unchanged)
    st.order = np.lexsort((np.arange(F), inst.flow_dst, inst.flow_src,
                           inst.flow_coflow)).astype(_I64)
    st.remaining = d.astype(np.float64)
    cap_in = st.cap_in.copy()
    cap_out = st.cap_out.copy()
    corder = np.lexsort((np.arange(C), cprio)).astype(_I64)
    e = inst.starts_after.astype(_I64)
    done_at = np.full(C, -1, dtype=_I64)   # slot boundary at which a coflow completed
    left = np.bincount(inst.flow_coflow, weights=(d > 0), minlength=C).astype(_I64)
    rem = d.copy()
    end = base.start + base.length
    flows, starts = [], []
    t = 0
    horizon = max(base.makespan, int(rel.max(initial=0))) + 1
    while (rem > 0).any() or (done_at < 0).any():
        if t > horizon:
            raise ValueError("backfill_reference: the base plan does not finish every flow")
        # ready: released, every predecessor complete by the start of slot t
        pred_ok = np.ones(C, dtype=bool)
        if e.size:
            late = (done_at[e[:, 0]] < 0) | (done_at[e[:, 0]] > t)
            np.logical_and.at(pred_ok, e[:, 1], ~late)
        ready = (rel <= t) & pred_ok
        zero = ready & (left == 0) & (done_at < 0)
        done_at[zero] = t
        if zero.any():
            continue  # a completion at t may ready successors at t
        act = (base.start <= t) & (t < end)
        bflow = np.unique(base.flow[act])
        bflow = bflow[rem[bflow] > 0]
        if (~ready[inst.flow_coflow[bflow]]).any():
            f = int(bflow[~ready[inst.flow_coflow[bflow]]][0])
            raise ValueError(f"backfill: the base plan serves flow {f} at slot {t} before its "
                             f"coflow is ready (infeasible base)")
        st.rate[:] = 0.0
        st.has_rate[:] = False
        st.rem_in[:] = cap_in
        st.rem_out[:] = cap_out
        st.rem_in[inst.flow_src[bflow]] = 0.0
        st.rem_out[inst.flow_dst[bflow]] = 0.0
        st.remaining[:] = rem
        st.remaining[bflow] = 0.0  # served already this slot
        cand = corder[ready[corder] & (done_at[corder] < 0)]
        allocate.greedy(st, cand, split="ordered", fresh=False)
        fill = np.flatnonzero(st.rate > 0)
        served = np.union1d(bflow, fill)
        rem[served] -= 1
        flows.append(served)
        starts.append(np.full(served.size, t, dtype=_I64))
        fin = served[rem[served] == 0]
        if fin.size:
            np.subtract.at(left, inst.flow_coflow[fin], 1)
            newly = np.unique(inst.flow_coflow[fin])
            done_at[newly[left[newly] == 0]] = t + 1
        t += 1
    if not flows:
        return SlotPlan.empty()
    f = np.concatenate(flows)
    s = np.concatenate(starts)
    return SlotPlan(f, s, np.ones(f.size, dtype=_I64))
