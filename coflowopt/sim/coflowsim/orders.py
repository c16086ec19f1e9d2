"""The orders of CoflowSim's coflow-level schedulers.

FIFO, SCF, NCF, LCF and SEBF keep a list sorted at insertion by a static key
(``CoflowSimulator.addToSortedJobs``; SEBF's key is Varys' effective bottleneck Γ, Chowdhury,
Zhong, Stoica, SIGCOMM 2014); DARK keeps Aalo's D-CLAS queues on bytes sent
(Chowdhury, Stoica, SIGCOMM 2015: exponentially spaced queue limits, FIFO inside
a queue, strict priority across queues), and A-SEBF the same queues on the bottleneck factor
``λ = S / W`` (bytes sent per receiver port; the A-SEBF paper's width-aware D-CLAS).
"""

from __future__ import annotations

from coflowopt._jit import njit

__all__ = ["insert_sorted", "layout", "queue_order", "resort_remaining"]


@njit(cache=True, error_model="numpy")
def insert_sorted(lst, ns, j, key, lcf, perrack, red_ptr):
    """``CoflowSimulator.addToSortedJobs``: insert job ``j`` before the first job of the list
    whose key is greater (FIFO, an all-zero key, appends).  ``lcf``: the key is each job's
    bytes left *now* (its reducers' ``shuffleBytesPerRack``), refreshed here."""
    if lcf:
        for k in range(-1, ns):
            o = j if k < 0 else lst[k]
            ko = 0.0
            for r in range(red_ptr[o], red_ptr[o + 1]):
                ko += perrack[r]
            key[o] = ko
    idx = 0
    kj = key[j]
    while idx < ns and not kj < key[lst[idx]]:
        idx += 1
    for k in range(ns, idx, -1):
        lst[k] = lst[k - 1]
    lst[idx] = j
    return ns + 1


@njit(cache=True, error_model="numpy")
def queue_order(lst, ns, queue, cq, stamp, counter, sent, width, first, factor, nq):
    """``updateJobOrder``: walk the queues top-down; a coflow whose bytes sent over ``width``
    (1 for DARK; its receiver ports ``W`` for A-SEBF) passed its queue's limit moves one
    queue down (to the tail), and may move again in the same walk."""
    for i in range(nq):
        for k in range(ns):
            j = lst[k]
            if queue[j] != i:
                continue
            target = 0
            lim = first
            while lim < sent[j] / width[j]:
                target += 1
                lim *= factor
            if cq[j] < target:
                cq[j] += 1
                if i + 1 < nq:
                    queue[j] = i + 1
                    stamp[j] = counter
                    counter += 1
        # re-sort the list by (queue, stamp): insertion sort, the list is nearly sorted
        for a in range(1, ns):
            v = lst[a]
            b = a - 1
            while b >= 0 and (queue[lst[b]] > queue[v]
                              or (queue[lst[b]] == queue[v] and stamp[lst[b]] > stamp[v])):
                lst[b + 1] = lst[b]
                b -= 1
            lst[b + 1] = v
    return counter



@njit(cache=True, error_model="numpy")
def resort_remaining(lst, ns, red_ptr, flow_ptr, flow_src, rem, done, sb, key):
    """Ablation of the static keys: re-sort the order by the bottleneck of the bytes left
    (Varys' dynamic SEBF) instead of the key fixed at insertion."""
    for k in range(ns):
        j = lst[k]
        g = 0.0
        for r in range(red_ptr[j], red_ptr[j + 1]):
            t = 0.0
            for f in range(flow_ptr[r], flow_ptr[r + 1]):
                if not done[f]:
                    t += rem[f]
                    sb[flow_src[f]] += rem[f]
            g = max(g, t)
        for r in range(red_ptr[j], red_ptr[j + 1]):
            for f in range(flow_ptr[r], flow_ptr[r + 1]):
                g = max(g, sb[flow_src[f]])
                sb[flow_src[f]] = 0.0
        key[j] = g
    for a in range(1, ns):
        v = lst[a]
        b = a - 1
        while b >= 0 and key[lst[b]] > key[v]:
            lst[b + 1] = lst[b]
            b -= 1
        lst[b + 1] = v


@njit(cache=True, error_model="numpy")
def layout(lst, ns, red_ptr, flow_ptr, red_done, done, laid):
    """``layoutFlowsInJobOrder``: the unfinished flows of the reducers not yet completed move;
    the others stay where they are."""
    for k in range(ns):
        j = lst[k]
        for r in range(red_ptr[j], red_ptr[j + 1]):
            for f in range(flow_ptr[r], flow_ptr[r + 1]):
                laid[f] = (not red_done[r]) and (not done[f])

