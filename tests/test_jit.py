"""coflowopt._jit: copy forwarding keeps results and drops the inlined helpers' reference counts."""

from __future__ import annotations

import numpy as np
from numba import njit as plain_njit
from numba.core import ir
from numba.core.compiler import run_frontend

from coflowopt._jit import forward_copies, njit
from coflowopt.sim.fast import _walk as _walk_inline  # the fluid cascade's port walker


def _loop(n, cur, plist, qp):
    s = 0
    for i in range(n):
        p = i % cur.size
        s += _walk_inline(p, cur[p], plist.size - 1, (i & 3) != 0, cur, plist, qp)
    return s


def _loop_by_hand(n, cur, plist, qp):
    s = 0
    for i in range(n):
        p = i % cur.size
        idx = cur[p]
        q = -1
        if cur[p] == idx or cur[p] == -1:
            if (i & 3) != 0 and idx + 1 < plist.size - 1:
                cur[p] = idx + 1
                q = plist[idx + 1]
            else:
                cur[p] = -1
        s += q
    return s


def _first_after_loop(x):
    # `first = v` copies a variable defined in the loop; read after it, it must stay x[0]
    for i in range(x.size):
        v = x[i]
        if i == 0:
            first = v
    return first  # defined on the first round


def _rebound(x):
    # a source rebound in a loop (several definitions): its copies are not forwarded
    a = x
    b = a
    out = 0.0
    for _ in range(3):
        out += b[0]
        a = a * 2.0
        b = a
    return out + b[0]


def _last_before(nxt, head, limit):
    # the shape of CoflowSim PFP's sorted insert: `prev = g` feeds the loop's phi for prev
    # while g's phi takes the next flow; forwarded, prev came back as the new g
    prev = -1
    g = head
    while g >= 0 and g < limit:
        prev = g
        g = nxt[g]
    return prev, g


def _arrays():
    cur = np.zeros(7, dtype=np.int64)
    plist = (np.arange(41, dtype=np.int32) * 7) % 40  # list positions, as the cascade's lists
    qp = np.zeros((40, 2), dtype=np.int32)  # the positions' rows (the walker prefetches them)
    return cur, plist, qp


@plain_njit(inline="always")
def _up(h, w, i):
    # a helper with a loop and a branch, as the indexed heap's sift up
    v = h[i]
    while i > 0:
        p = (i - 1) >> 1
        if h[p] > v:
            h[i] = h[p]
            w[i] = p
            i = p
        else:
            break
    h[i] = v
    return i


@plain_njit(inline="always")
def _put(h, w, i, v):
    # a helper calling another on a branch, as indexed_set calls _xup
    old = h[i]
    h[i] = v
    if v < old:
        return _up(h, w, i)
    return i


def _nested(n, h, w):
    s = 0
    for k in range(n):
        s += _put(h, w, k % h.size, float((k * 7) % 11))
    return s


def _nested_by_hand(n, h, w):
    s = 0
    for k in range(n):
        i = k % h.size
        v = float((k * 7) % 11)
        old = h[i]
        h[i] = v
        if v < old:
            v = h[i]
            while i > 0:
                p = (i - 1) >> 1
                if h[p] > v:
                    h[i] = h[p]
                    w[i] = p
                    i = p
                else:
                    break
            h[i] = v
        s += i
    return s


def _nrt_calls(dispatcher) -> int:
    llvm = dispatcher.inspect_llvm(dispatcher.signatures[0])
    return llvm.count("call void @NRT_incref") + llvm.count("call void @NRT_decref")


def test_results_equal_the_interpreter() -> None:
    for fn, args in [(_loop, (1000, *_arrays())), (_first_after_loop, (np.arange(5.0) + 3,)),
                     (_rebound, (np.ones(2),)),
                     (_last_before, (np.array([1, 2, 3, 4, -1]), 0, 3))]:
        expect = fn(*[a.copy() if isinstance(a, np.ndarray) else a for a in args])
        assert njit(fn)(*args) == expect, fn.__name__
    assert _first_after_loop(np.arange(5.0) + 3) == 3.0
    assert _last_before(np.array([1, 2, 3, 4, -1]), 0, 3) == (2, 3)


def test_inlined_helper_costs_no_reference_counts() -> None:
    # the reference: the same loop written by hand; with the plain pipeline the inlined helper
    # adds increments and decrements in the loop, with this pipeline it adds none
    by_hand = njit(_loop_by_hand)
    plain = plain_njit(_loop)
    forwarded = njit(_loop)
    assert by_hand(500, *_arrays()) == plain(500, *_arrays()) == forwarded(500, *_arrays())
    assert _nrt_calls(plain) > _nrt_calls(by_hand)
    assert _nrt_calls(forwarded) == _nrt_calls(by_hand)


def test_helper_inlined_in_a_helper_in_a_loop_costs_no_reference_counts() -> None:
    # the inner helper copies the outer's copies of the arrays (defined in the loop):
    # forwarded only once those are, in a second round (one round left 13 calls of 14 here)
    by_hand = njit(_nested_by_hand)
    plain = plain_njit(_nested)
    forwarded = njit(_nested)
    h, w = np.zeros(9), np.zeros(9, dtype=np.int64)
    assert (by_hand(300, h.copy(), w.copy()) == plain(300, h.copy(), w.copy())
            == forwarded(300, h.copy(), w.copy()))
    assert _nrt_calls(plain) > _nrt_calls(by_hand)
    assert _nrt_calls(forwarded) == _nrt_calls(by_hand)


def _copies(func_ir) -> set[tuple[str, str]]:
    return {(st.target.name, st.value.name) for blk in func_ir.blocks.values()
            for st in blk.body if isinstance(st, ir.Assign) and isinstance(st.value, ir.Var)}


def test_copy_whose_source_runs_again_is_kept() -> None:
    # on the IR before SSA (no phi guards it there), `first = v` must survive: v's definition
    # runs again on the next round, before the read after the loop
    func_ir = run_frontend(_first_after_loop)
    assert ("first", "v") in _copies(func_ir)
    n = forward_copies(func_ir)
    assert ("first", "v") in _copies(func_ir)
    assert n >= 1  # the loop-entry copies of the iterator are forwarded


def test_copy_of_a_function_argument_is_forwarded() -> None:
    def f(x):
        y = x
        return y[0]

    func_ir = run_frontend(f)
    assert ("y", "x") in _copies(func_ir)
    forward_copies(func_ir)
    assert not any(t == "y" for t, _ in _copies(func_ir))
    assert njit(f)(np.array([4.0])) == 4.0
