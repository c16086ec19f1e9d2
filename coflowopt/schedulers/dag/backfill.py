"""Backfilling of a slot plan (the "BF" of G-DM-BF and G-DM-RT-BF; spec dag-coflows 6.5).

The paper names the BF variants and reports their spread over seeds but does not define BF; the
rule here is our reconstruction [R] with our tie rules [P].  Simulate the base plan slot by
slot; in slot ``t``:

1. serve the pairs the base plan assigns to slot ``t``, but only for flows with data left (a
   flow already finished by earlier backfilling frees its ports);
2. then, on the ports still idle, add flows greedily in priority order -- the coflow's rank
   (G-DM: job position in ``sigma``, then the coflow's topological index), then ``(s, r)``
   lexicographic, then flow position [P] -- if the flow has data left, its coflow and job are
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
a served candidate of higher priority; of the flows on one pair only the best eligible one can
ever be served.  When a port frees, the best candidate at that port (if any) takes it and evicts
lower-priority holders of its other port, whose other ports are checked in turn.  Cost per event
``O(m)`` plus the repairs, instead of a greedy pass over all eligible flows.  A numba kernel of
this module (it calls no compiled function of another module).

BF only adds service to the base plan (step 1 serves every base pair whose flow has data), so no
flow, coflow or job completes later than in the base plan, and the guarantee of the base
algorithm is kept.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from numba import njit

from coflowopt.model import Instance
from coflowopt.schedulers.dag.slots import SlotPlan

__all__ = ["backfill", "backfill_reference"]

_I64 = np.int64


def _check_inputs(instance: Instance, base: SlotPlan, priority: np.ndarray,
                  demand: np.ndarray, release_slot: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
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
    if base.flow.size and ((base.flow < 0) | (base.flow >= inst.n_flows)).any():
        i = int(np.flatnonzero((base.flow < 0) | (base.flow >= inst.n_flows))[0])
        raise ValueError(f"backfill: base piece {i} names flow {base.flow[i]}, out of range")
    served = np.bincount(base.flow, weights=base.length, minlength=inst.n_flows)
    short = np.flatnonzero(served < d)
    if short.size:
        f = int(short[0])
        raise ValueError(f"backfill: the base plan gives flow {f} (coflow "
                         f"{inst.coflow_id[inst.flow_coflow[f]]!s}) {int(served[f])} slots, "
                         f"it needs {int(d[f])}")
    return np.asarray(pr, dtype=np.float64), d, rel


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
    """The backfilled plan of ``base`` (spec 6.5; see the module docstring).

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
    inst = instance
    m, C = inst.ports, inst.n_coflows
    src = inst.flow_src.astype(_I64)
    dst = inst.flow_dst.astype(_I64)
    fcof = inst.flow_coflow.astype(_I64)
    prio = _flow_rank(inst, cprio)
    # pairs present, each with its flows by rank
    pkey = src * m + dst
    upair, pair_of = np.unique(pkey, return_inverse=True)
    pair_of = pair_of.astype(_I64)
    P = upair.size
    po = np.lexsort((prio, pair_of))
    pair_flows = po.astype(_I64)
    pair_ptr = np.zeros(P + 1, dtype=_I64)
    np.cumsum(np.bincount(pair_of, minlength=P), out=pair_ptr[1:])
    pair_src, pair_dst = (upair // m).astype(_I64), (upair % m).astype(_I64)
    inp_ptr = np.zeros(m + 1, dtype=_I64)
    np.cumsum(np.bincount(pair_src, minlength=m), out=inp_ptr[1:])
    inp_pairs = np.arange(P, dtype=_I64)  # upair is sorted by src
    outp_pairs = np.argsort(pair_dst, kind="stable").astype(_I64)
    outp_ptr = np.zeros(m + 1, dtype=_I64)
    np.cumsum(np.bincount(pair_dst, minlength=m), out=outp_ptr[1:])
    cf_ptr = np.asarray(inst.coflow_flows_ptr, dtype=_I64)
    cf_flows = np.asarray(inst.coflow_flow_order, dtype=_I64)
    sptr, succ = inst.successors_ptr
    npred = np.bincount(inst.starts_after[:, 1].astype(_I64), minlength=C).astype(_I64) \
        if inst.starts_after.size else np.zeros(C, dtype=_I64)
    rel_order = np.argsort(rel, kind="stable").astype(_I64)
    keep = base.length > 0
    bo = np.lexsort((base.flow[keep], base.start[keep]))
    b_flow = base.flow[keep][bo].astype(_I64)
    b_start = base.start[keep][bo].astype(_I64)
    b_len = base.length[keep][bo].astype(_I64)
    out_f, out_s, out_n, status = _bf_kernel(
        m, src, dst, d, fcof, prio, pair_of, pair_ptr, pair_flows, inp_ptr, inp_pairs,
        outp_ptr, outp_pairs, cf_ptr, cf_flows, np.asarray(sptr, dtype=_I64),
        np.asarray(succ, dtype=_I64), npred, rel, rel_order, b_flow, b_start, b_len)
    if status[0] >= 0:
        f = int(status[0])
        raise ValueError(f"backfill: the base plan serves flow {f} (coflow "
                         f"{inst.coflow_id[fcof[f]]!s}) at slot {int(status[1])}, before its "
                         f"coflow is released or its predecessors complete (infeasible base)")
    if status[2] >= 0:
        f = int(status[2])
        raise ValueError(f"backfill: flow {f} (coflow {inst.coflow_id[fcof[f]]!s}) was never "
                         f"served in full (its coflow never became ready)")
    return SlotPlan(out_f, out_s, out_n)


@njit(cache=True)
def _push(u, wl, inwl, nwl):
    if not inwl[u]:
        inwl[u] = True
        wl[nwl] = u
        return nwl + 1
    return nwl


@njit(cache=True)
def _next_best(p, pair_ptr, pair_flows, pair_head, rem, is_open, fcof):
    i = pair_head[p]
    end = pair_ptr[p + 1]
    while i < end and rem[pair_flows[i]] == 0:
        i += 1
    pair_head[p] = i
    while i < end:
        f = pair_flows[i]
        if rem[f] > 0 and is_open[fcof[f]]:
            return f
        i += 1
    return -1


@njit(cache=True)
def _bf_kernel(m, src, dst, demand, fcof, prio, pair_of, pair_ptr, pair_flows, inp_ptr,
               inp_pairs, outp_ptr, outp_pairs, cf_ptr, cf_flows, sptr, succ, npred0, rel,
               rel_order, b_flow, b_start, b_len):
    F = src.size
    C = rel.size
    P = pair_ptr.size - 1
    NB = b_flow.size
    FREE, BASE = -1, -2
    status = np.full(3, -1, dtype=np.int64)
    rem = demand.copy()
    cf_left = np.zeros(C, dtype=np.int64)
    for f in range(F):
        if rem[f] > 0:
            cf_left[fcof[f]] += 1
    npred = npred0.copy()
    is_open = np.zeros(C, dtype=np.bool_)
    pair_best = np.full(P, -1, dtype=np.int64)
    pair_head = pair_ptr[:-1].copy()
    own_in = np.full(m, FREE, dtype=np.int64)
    own_out = np.full(m, FREE, dtype=np.int64)
    base_in = np.full(m, -1, dtype=np.int64)   # active base piece on each ingress port
    wl = np.empty(2 * m, dtype=np.int64)
    inwl = np.zeros(2 * m, dtype=np.bool_)
    nwl = 0
    cq = np.empty(C, dtype=np.int64)           # coflows to open (cascade of completions)
    last_end = np.full(F, -1, dtype=np.int64)
    last_idx = np.full(F, -1, dtype=np.int64)
    cap = max(16, 2 * NB)
    out_f = np.empty(cap, dtype=np.int64)
    out_s = np.empty(cap, dtype=np.int64)
    out_n = np.empty(cap, dtype=np.int64)
    n_out = 0
    left = 0
    for c in range(C):
        left += cf_left[c]
    t = 0
    bp = 0
    rp = 0
    while True:
        # 1. flows that ran out at t: free their ports, refresh their pair, complete coflows
        nq = 0
        for s in range(m):
            o = own_in[s]
            g = -1
            if o >= 0:
                g = o
            elif o == BASE:
                g = b_flow[base_in[s]]
            if g >= 0 and rem[g] == 0:
                own_in[s] = FREE
                own_out[dst[g]] = FREE
                nwl = _push(s, wl, inwl, nwl)
                nwl = _push(m + dst[g], wl, inwl, nwl)
                p = pair_of[g]
                if pair_best[p] == g:
                    pair_best[p] = _next_best(p, pair_ptr, pair_flows, pair_head, rem,
                                              is_open, fcof)
                c = fcof[g]
                cf_left[c] -= 1
                left -= 1
                if cf_left[c] == 0:
                    cq[nq] = c
                    nq += 1
        # 2. base pieces ending at t free their ports
        for s in range(m):
            i = base_in[s]
            if i >= 0 and b_start[i] + b_len[i] == t:
                if own_in[s] == BASE:
                    own_in[s] = FREE
                    own_out[dst[b_flow[i]]] = FREE
                    nwl = _push(s, wl, inwl, nwl)
                    nwl = _push(m + dst[b_flow[i]], wl, inwl, nwl)
                base_in[s] = -1
        # 3. coflows released by t, and successors of completed coflows, open
        while rp < C and rel[rel_order[rp]] <= t:
            c = rel_order[rp]
            rp += 1
            if npred[c] == 0:
                cq[nq] = c
                nq += 1
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
            for e in range(cf_ptr[c], cf_ptr[c + 1]):
                f = cf_flows[e]
                if rem[f] > 0:
                    p = pair_of[f]
                    b = pair_best[p]
                    if b < 0 or prio[f] < prio[b]:
                        pair_best[p] = f
                        nwl = _push(src[f], wl, inwl, nwl)
        # 4. base pieces starting at t take their ports (evicting backfilled flows)
        while bp < NB and b_start[bp] <= t:
            i = bp
            bp += 1
            f = b_flow[i]
            s = src[f]
            r = dst[f]
            base_in[s] = i
            if rem[f] == 0:
                continue
            if not is_open[fcof[f]] and status[0] < 0:
                status[0] = f
                status[1] = t
            g = own_in[s]
            if g >= 0:
                own_in[s] = FREE
                own_out[dst[g]] = FREE
                nwl = _push(m + dst[g], wl, inwl, nwl)
            g = own_out[r]
            if g >= 0:
                own_out[r] = FREE
                own_in[src[g]] = FREE
                nwl = _push(src[g], wl, inwl, nwl)
            own_in[s] = BASE
            own_out[r] = BASE
        # 5. repair the greedy matching at the ports that changed
        while nwl > 0:
            nwl -= 1
            u = wl[nwl]
            inwl[u] = False
            if u < m:
                own = own_in[u]
                a0, a1 = inp_ptr[u], inp_ptr[u + 1]
            else:
                own = own_out[u - m]
                a0, a1 = outp_ptr[u - m], outp_ptr[u - m + 1]
            if own == BASE:
                continue
            lim = prio[own] if own >= 0 else F
            best = -1
            bestp = lim
            for e in range(a0, a1):
                p = inp_pairs[e] if u < m else outp_pairs[e]
                f = pair_best[p]
                if f < 0 or f == own:
                    continue
                pf = prio[f]
                if pf >= bestp:
                    continue
                o = own_out[dst[f]] if u < m else own_in[src[f]]
                if o == BASE or (o >= 0 and prio[o] < pf):
                    continue
                best = f
                bestp = pf
            if best >= 0:
                s = src[best]
                r = dst[best]
                g = own_in[s]
                if g >= 0:
                    own_out[dst[g]] = FREE
                    if dst[g] != r:
                        nwl = _push(m + dst[g], wl, inwl, nwl)
                g = own_out[r]
                if g >= 0:
                    own_in[src[g]] = FREE
                    if src[g] != s:
                        nwl = _push(src[g], wl, inwl, nwl)
                own_in[s] = best
                own_out[r] = best
        # 6. next event
        if left == 0:
            break
        t_next = np.int64(-1)
        if bp < NB:
            t_next = b_start[bp]
        if rp < C:
            x = rel[rel_order[rp]]
            if t_next < 0 or x < t_next:
                t_next = x
        served = 0
        for s in range(m):
            i = base_in[s]
            if i >= 0:
                x = b_start[i] + b_len[i]
                if t_next < 0 or x < t_next:
                    t_next = x
            o = own_in[s]
            g = -1
            if o >= 0:
                g = o
            elif o == BASE:
                g = b_flow[base_in[s]]
            if g >= 0:
                served += 1
                x = t + rem[g]
                if t_next < 0 or x < t_next:
                    t_next = x
        if t_next < 0:
            break
        # 7. serve the run [t, t_next)
        dt = t_next - t
        if served:
            for s in range(m):
                o = own_in[s]
                g = -1
                if o >= 0:
                    g = o
                elif o == BASE:
                    g = b_flow[base_in[s]]
                if g < 0:
                    continue
                rem[g] -= dt
                if last_end[g] == t:
                    out_n[last_idx[g]] += dt
                else:
                    if n_out == cap:
                        cap *= 2
                        nf = np.empty(cap, dtype=np.int64)
                        ns = np.empty(cap, dtype=np.int64)
                        nn = np.empty(cap, dtype=np.int64)
                        nf[:n_out] = out_f[:n_out]
                        ns[:n_out] = out_s[:n_out]
                        nn[:n_out] = out_n[:n_out]
                        out_f, out_s, out_n = nf, ns, nn
                    out_f[n_out] = g
                    out_s[n_out] = t
                    out_n[n_out] = dt
                    last_idx[g] = n_out
                    n_out += 1
                last_end[g] = t_next
        t = t_next
    if left > 0:
        for f in range(F):
            if rem[f] > 0:
                status[2] = f
                break
    return out_f[:n_out].copy(), out_s[:n_out].copy(), out_n[:n_out].copy(), status


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
