"""Java's floating point and random numbers, replayed: CoflowSim's per-quantum byte counters
jumped over whole runs of quanta, exactly, and ``java.util.Random``.

CoflowSim (the trace-driven simulator of Varys: Chowdhury, Zhong, Stoica, "Efficient Coflow
Scheduling with Varys", SIGCOMM 2014; ``coflow/coflowsim``) subtracts each flow's
bytes per quantum ``d`` from its bytes left ``x`` every 8 ms quantum.  While ``x`` stays in one
binade ``[2^e, 2^(e+1))`` every rounded subtraction removes the same grid multiple of ``d``, so
a run of quanta collapses to integer arithmetic on the grid (:func:`advance`); the accumulators
updated once per flow per quantum (a reducer's bytes left, a coflow's bytes sent) are replayed
the same way (:func:`quanta`, :func:`replay`).
"""

from __future__ import annotations

import math

import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from coflowopt._jit import njit

__all__ = ["JavaRandom", "advance", "quanta", "replay"]


class JavaRandom:
    """``java.util.Random``: the documented 48-bit linear congruential generator."""

    _MULT = 0x5DEECE66D
    _MASK = (1 << 48) - 1

    def __init__(self, seed: int):
        self._seed = (int(seed) ^ self._MULT) & self._MASK

    def _next(self, bits: int) -> int:
        self._seed = (self._seed * self._MULT + 0xB) & self._MASK
        return self._seed >> (48 - bits)

    def next_double(self) -> float:
        return ((self._next(26) << 27) + self._next(27)) * 2.0**-53


@intrinsic
def _bits(typingctx, x):
    """The IEEE 754 bits of a float64, as an int64."""
    if x != types.float64:
        return None

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(64))
    return types.int64(types.float64), codegen


@intrinsic
def _from_bits(typingctx, b):
    """The float64 with these IEEE 754 bits."""
    if b != types.int64:
        return None

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.DoubleType())
    return types.float64(types.int64), codegen


@njit(cache=True, error_model="numpy", inline="always")
def advance(x, d, m, zero):
    """Apply up to ``m`` quanta of ``b = min(d, x); x -= b`` (CoflowSim's flow update), stopping
    at the quantum after which ``x <= zero`` (the flow finishes).

    Returns ``(x, quanta, finished, b_last)``, ``b_last`` the bytes of the last quantum taken.
    Exact in IEEE double: inside one binade every rounded subtraction removes the grid multiple
    ``D`` nearest to ``d`` (no ties), so a run of quanta is integer arithmetic on the grid.
    The binade and its grid step come from the float's exponent bits (``math.frexp`` and
    ``ldexp`` went through libm, a third of FAIR's kernel time); inlined, because FAIR calls
    it 61 million times on FB2010."""
    steps = 0
    if d <= 0.0:
        return x, m, False, 0.0
    while steps < m:
        if x <= d:
            return 0.0, steps + 1, True, x
        x1 = x - d
        be = (_bits(x) >> 52) & 0x7FF  # x in [2^(be - 1023), 2^(be - 1022))
        if be >= 53:
            lo = _from_bits(be << 52)
            u = _from_bits((be - 52) << 52)
        else:  # the grid step would be subnormal
            _, e = math.frexp(x)
            lo = math.ldexp(0.5, e)
            u = math.ldexp(0.5, e - 52)
        big = x1 > lo + 2.0 * u and lo > zero
        if big:
            dd = x - x1  # exact: both on the grid of this binade
            if dd == 0.0:
                return x, m, False, d  # d below half a grid step: x never moves
            if 2.0 * abs(d - dd) != u:  # a tie would round to even: step one by one
                dk = np.int64(dd / u)
                xk = np.int64((x - lo) / u)
                n = (xk - 2) // dk  # results stay >= lo + 2u
                if d >= lo:  # pre-step values must stay > d
                    fl = np.int64(math.floor((d - lo) / u))
                    na = (xk - fl - 1) // dk + 1
                    if na < n:
                        n = na
                if n > m - steps:
                    n = m - steps
                if n >= 1:
                    x = lo + (xk - n * dk) * u
                    steps += n
                    continue
        x = x1
        steps += 1
        if x <= zero:
            return x, steps, True, d
    return x, steps, False, d


@njit(cache=True, error_model="numpy")
def quanta(s, sign, buf, m, n_q, clamp, zero):
    """``n_q`` quanta of ``for b in buf: s += sign * b`` (``clamp``: ``s = max(s, 0)`` after each
    step, ``Job.decreaseShuffleBytesPerRack``), exactly: inside one binade each rounded step adds
    the grid multiple nearest to ``b``, so whole quanta collapse to integer grid arithmetic.
    Returns ``(s, c)``, ``c`` the first quantum (1-based) that ended with ``s <= zero``, or 0."""
    done_q = 0
    cross = 0
    while n_q > 0 and m > 0:
        if s > 1.0:
            _, e = math.frexp(s)
            lo = math.ldexp(0.5, e)
            u = math.ldexp(0.5, e - 52)
            p = s
            ok = True
            for k in range(m):
                b = buf[k]
                if b < 0.0:
                    ok = False
                p2 = p + sign * b
                if 2.0 * abs(abs(p2 - p) - b) == u:
                    ok = False  # a tie rounds to even: not the same step every quantum
                p = p2
            if ok and p >= lo + 2.0 * u and p <= 2.0 * lo - 2.0 * u:
                delta = abs(p - s)
                if delta == 0.0:
                    return s, cross
                dk = np.int64(delta / u)
                xk = np.int64((s - lo) / u)
                if sign < 0:
                    n = (xk - 2) // dk
                else:
                    n = (np.int64(4503599627370496) - 2 - xk) // dk
                if n > n_q:
                    n = n_q
                if n >= 1:
                    s = lo + (xk + sign * n * dk) * u
                    n_q -= n
                    done_q += n
                    continue
        for k in range(m):
            s = s + sign * buf[k]
            if clamp and s < 0.0:
                s = 0.0
        n_q -= 1
        done_q += 1
        if cross == 0 and s <= zero:
            cross = done_q
    return s, cross


@njit(cache=True, error_model="numpy")
def replay(s, sign, td, tst, tfin, tbl, a, b, w, clamp, buf, zero):
    """An accumulator CoflowSim updates once per flow per quantum (a reducer's bytes left, a
    coflow's bytes sent), replayed over ``w`` quanta of the flows ``a..b`` of the temp arrays:
    ``td`` bytes per quantum, ``tst``/``tfin``/``tbl`` as returned by :func:`advance`.
    Returns ``(s, c)``, ``c`` the first quantum (1-based) that ended with ``s <= zero``, or 0."""
    q = 0
    cross = 0
    while q < w:
        nxt = w + 1
        for k in range(a, b):
            if tfin[k] and tst[k] > q and tst[k] < nxt:
                nxt = tst[k]
        run = min(nxt - 1, w) - q
        if run > 0:
            m = 0
            for k in range(a, b):
                if (not tfin[k]) or tst[k] > q:
                    if td[k] != 0.0:
                        buf[m] = td[k]
                        m += 1
            s, c = quanta(s, sign, buf, m, run, clamp, zero)
            if cross == 0 and c > 0:
                cross = q + c
            q += run
        if q < w and q + 1 == nxt:
            for k in range(a, b):
                if (not tfin[k]) or tst[k] >= q + 1:
                    bb = tbl[k] if (tfin[k] and tst[k] == q + 1) else td[k]
                    s = s + sign * bb
                    if clamp and s < 0.0:
                        s = 0.0
            q += 1
            if cross == 0 and s <= zero:
                cross = q
    return s, cross
