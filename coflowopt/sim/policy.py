"""The open policy interface of the compiled engine: what a policy of your own reads and returns.

A coflow-ordering policy hands :func:`coflowopt.sim.order_schedule` its decision in one of two
forms, and both run on the compiled event engine (:mod:`coflowopt.sim.fast`):

- ``key``: a compiled function ``key(state, c) -> float`` (smaller is served first; ties by
  admission time, then position).  The engine calls it for every active coflow at every
  arrival and departure, inside the compiled loop: numba compiles the function once for
  :data:`KEY_SIGNATURE` and the engine calls it through its address, so the engine itself is
  compiled (and cached) once for every key.  Write it with ``numba.njit`` (or give a plain
  Python function and it is compiled for you).
- ``rerank``: a Python callback ``rerank(view) -> coflows`` that returns the active coflows
  (``view.coflows``, in admission order) in the order to serve them.  The engine returns to
  Python only at arrivals and departures (numba's object mode), so its cost is one call per
  re-ordering, not per event.

The state a key reads (:class:`PolicyState`, a named tuple of the engine's own arrays; read
them, never write them):

======================  =====================================================================
``t``                   the current time
``src``, ``dst``        per flow: ingress and egress port
``volume``              per flow: its volume (clairvoyant keys only)
``remaining``           per flow: the volume left (clairvoyant keys only)
``sent``                per flow: the volume sent, ``volume - remaining``
``ptr``, ``order``      per coflow ``c``: its flows are ``order[ptr[c]:ptr[c + 1]]``
``weight``              per coflow: ``w_c``
``release``             per coflow: the effective release (coflow and job)
``admitted``            per coflow: the time it became active (``inf`` before)
``width``               per coflow: its number of flows
``cap_in``, ``cap_out`` per port: the capacities
======================  =====================================================================

The built-in policies read a few more fields, the engine's and their own: ``live`` and
``live_end`` (the unfinished flows of an active coflow ``c`` are ``live[ptr[c]:live_end[c]]``,
in order), ``queue`` and ``entry`` (D-CLAS: a coflow's queue and its place in it), and the
policy's own arrays, set in its :class:`EnginePolicy` (``priority`` per coflow, ``table``,
``scalars``, ``scratch``, ``iscratch``, and ``stats`` for what it reports back).

``remaining`` and ``sent`` are exact at every call for the flows of active coflows, equal to
``volume`` and 0 before a coflow's admission, and 0 and ``volume`` after its completion.  A
non-clairvoyant key (``clairvoyant=False``) reads a :class:`BlindState`: the same fields less
``volume`` and ``remaining``.

The view a ``rerank`` callback gets (:class:`EngineView`) has the reference engine's names
(:class:`coflowopt.sim.engine.SimView`): ``t``, ``coflows``, ``admitted`` (NaN before
admission), ``remaining`` and ``instance`` (clairvoyant only), ``sent``, ``coflow_sent(cs)``,
``unfinished_flows(c)``, and the instance's per-flow, per-coflow and per-port columns.
"""

from __future__ import annotations

import itertools
from collections import namedtuple
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numba
import numpy as np
from numba import types

from coflowopt._jit import njit
from coflowopt.model import Instance
from coflowopt.sim.engine import InstanceView

__all__ = ["KEY_SIGNATURE", "RANK_SIGNATURE", "BlindState", "CompiledKey", "CompiledRank",
           "EnginePolicy", "EngineView", "PolicyState", "builtin_key", "builtin_rank",
           "by_priority", "compiled_key"]

PolicyState = namedtuple("PolicyState", [
    "t", "src", "dst", "volume", "remaining", "sent", "ptr", "order", "weight", "release",
    "admitted", "width", "cap_in", "cap_out", "live", "live_end", "queue", "entry", "priority",
    "table", "scalars", "scratch", "iscratch", "stats"])
BlindState = namedtuple("BlindState", [
    "t", "src", "dst", "sent", "ptr", "order", "weight", "release", "admitted", "width",
    "cap_in", "cap_out"])


def _ro(dtype: Any) -> np.ndarray:
    a = np.zeros(1, dtype=dtype)
    a.setflags(write=False)
    return a


def _rw(dtype: Any = np.float64) -> np.ndarray:
    return np.zeros(1, dtype=dtype)


# the numba types of the state as the engine builds it: the instance's per-flow columns and
# the flow order are read-only views, the rest the engine's own arrays
_STATE_TYPE = numba.typeof(PolicyState(
    0.0, _ro(np.int32), _ro(np.int32), _ro(np.float64), _rw(), _rw(), _rw(np.int64),
    _ro(np.int64), _rw(), _rw(), _rw(), _rw(np.int64), _rw(), _rw(), _rw(np.int64),
    _rw(np.int64), _rw(np.int64), _rw(np.int64), _rw(), np.zeros((1, 1)), _rw(), _rw(),
    _rw(np.int64), _rw()))
_BLIND_TYPE = numba.typeof(BlindState(
    0.0, _ro(np.int32), _ro(np.int32), _rw(), _rw(np.int64), _ro(np.int64), _rw(), _rw(),
    _rw(), _rw(np.int64), _rw(), _rw()))
KEY_SIGNATURE = types.float64(_STATE_TYPE, types.int64)
"""``key(state: PolicyState, c: int64) -> float64``, the signature a key is compiled for."""
RANK_SIGNATURE = types.int64(_STATE_TYPE, types.int64[::1], types.int64[::1])
"""``rank(state, act, out) -> int64``: writes the active coflows ``act`` (in admission order)
into ``out`` in the order to serve them, and returns their number."""
_BLIND_SIGNATURE = types.float64(_BLIND_TYPE, types.int64)


class _ByAddress(types.WrapperAddressProtocol):
    """A compiled function handed to the engine by address (numba's wrapper address protocol),
    so the engine's kernel is compiled once for every function of the signature."""

    def __init__(self, disp: Any, sig: Any):
        disp.compile(sig)
        cres = disp.get_compile_result(sig)
        self._sig = sig
        self._dispatcher = disp  # keeps the compiled code alive
        self._address = cres.library.get_pointer_to_function(cres.fndesc.llvm_cfunc_wrapper_name)

    def __wrapper_address__(self) -> int:
        return self._address

    def signature(self) -> Any:
        return self._sig


class CompiledKey(_ByAddress):
    """A key compiled for :data:`KEY_SIGNATURE`."""

    def __init__(self, fn: Any, clairvoyant: bool = True):
        disp = fn if isinstance(fn, numba.core.registry.CPUDispatcher) else njit(fn)
        self.function = disp
        self.clairvoyant = bool(clairvoyant)
        if not self.clairvoyant:
            disp.compile(_BLIND_SIGNATURE)
            disp = _blind_adapter(disp)
        super().__init__(disp, KEY_SIGNATURE)


class CompiledRank(_ByAddress):
    """A whole-order function compiled for :data:`RANK_SIGNATURE`."""

    def __init__(self, fn: Any):
        self.function = fn
        super().__init__(fn, RANK_SIGNATURE)


def _blind_adapter(fn: Any) -> Any:
    """``fn`` (a key on :class:`BlindState`) as a key on :class:`PolicyState`: the state it is
    handed has no ``volume`` or ``remaining`` to read."""

    @njit
    def adapted(s, c):
        return fn(BlindState(s.t, s.src, s.dst, s.sent, s.ptr, s.order, s.weight, s.release,
                             s.admitted, s.width, s.cap_in, s.cap_out), c)

    return adapted


def compiled_key(fn: Any, clairvoyant: bool = True) -> CompiledKey:
    """``fn`` (a ``numba.njit`` function or a plain one, compiled here) as the engine's key;
    a :class:`CompiledKey` is returned as it is.  ``clairvoyant=False``: ``fn`` reads a
    :class:`BlindState`."""
    if isinstance(fn, CompiledKey):
        return fn
    return CompiledKey(fn, clairvoyant)


@njit(cache=True)
def by_priority(s: Any, c: int) -> float:
    """The key of a fixed order: the policy's ``priority[c]`` (static orders; all zeros: FIFO
    by admission)."""
    return s.priority[c]


@njit(cache=True)
def _unused_rank(s: Any, act: Any, out: Any) -> int:
    return 0


_COMPILED: dict[str, _ByAddress] = {}


def _builtin(name: str, fn: Any, wrap: type) -> Any:
    # wrapped once per process: the wrapper loads (or compiles) the function for its signature
    if name not in _COMPILED:
        _COMPILED[name] = wrap(fn)
    return _COMPILED[name]


def builtin_key(name: str, fn: Any) -> CompiledKey:
    """``fn`` (a cached ``njit`` key of a built-in policy) wrapped once per process."""
    return _builtin(name, fn, CompiledKey)


def builtin_rank(name: str, fn: Any) -> CompiledRank:
    """``fn`` (a cached ``njit`` rank of a built-in policy) wrapped once per process."""
    return _builtin(name, fn, CompiledRank)


def _arr(a: Any, dtype: Any, empty: tuple[int, ...] = (0,)) -> np.ndarray:
    # the kernel compiles once for writable, contiguous arrays; the policy's functions write
    # into its own (scratch, stats), so an array of the right kind is kept, not copied
    if a is None:
        return np.zeros(empty, dtype=dtype)
    out = np.asarray(a)
    if out.dtype != dtype or not out.flags.c_contiguous or not out.flags.writeable:
        out = np.array(out, dtype=dtype, order="C", copy=True)
    return out


@dataclass
class EnginePolicy:
    """What a policy hands the compiled engine (:func:`coflowopt.sim.fast.fast_simulate`).

    The order: ``rank`` (a :class:`CompiledRank`), else ``rerank`` (a :class:`Reranking`, a
    Python callback), else ``key`` (a :class:`CompiledKey`; default: ``priority``, then
    admission).  ``departures``: re-order at departures too (else at arrivals only);
    ``every_event``: re-order at every event (each flow completion too).
    ``madd``: MADD reservations ``remaining / Gamma`` coflow by coflow in the order before the
    greedy allocation (Varys).  ``demotion``: D-CLAS, coflows move down the queues at the
    ``thresholds`` (times ``norm`` per coflow) of bytes sent; the state's ``queue`` and
    ``entry``.  ``sent``: keep the state's ``sent`` (a user's key may read it).  The arrays
    ``priority`` (one per coflow), ``table`` (2-D), ``scalars``, ``scratch``, ``iscratch`` and
    ``stats`` are the policy's own, read (and ``scratch``, ``iscratch``, ``stats`` written) by
    its compiled functions; after the run they hold what it wrote.
    """

    key: CompiledKey | None = None
    rank: CompiledRank | None = None
    rerank: Reranking | None = None
    departures: bool = True
    every_event: bool = False
    madd: bool = False
    demotion: bool = False
    thresholds: Any = None
    norm: Any = None
    sent: bool = False
    priority: Any = None
    table: Any = None
    scalars: Any = None
    scratch: Any = None
    iscratch: Any = None
    stats: Any = None

    def __post_init__(self) -> None:
        f8, i8 = np.float64, np.int64
        self.thresholds = _arr(self.thresholds, f8)
        self.table = _arr(self.table, f8, (0, 0))
        if self.table.ndim != 2:
            raise ValueError("EnginePolicy.table: a 2-D array")
        self.scalars = _arr(self.scalars, f8)
        self.scratch = _arr(self.scratch, f8)
        self.iscratch = _arr(self.iscratch, i8)
        self.stats = _arr(self.stats, f8)

    def kernel_args(self, n_coflows: int) -> tuple[Any, ...]:
        """The engine's arguments for this policy, in its order."""
        key = self.key if self.key is not None else builtin_key("by_priority", by_priority)
        rank = self.rank if self.rank is not None else builtin_rank("unused", _unused_rank)
        norm = np.ones(n_coflows) if self.norm is None else _arr(self.norm, np.float64)
        priority = _arr(self.priority, np.float64, (n_coflows,))
        if norm.shape != (n_coflows,) or priority.shape != (n_coflows,):
            raise ValueError(f"EnginePolicy: norm and priority need one value per coflow "
                             f"({n_coflows})")
        when = 2 if self.every_event else int(self.departures)  # the engine's re-order rule
        return (key, rank, self.rank is not None,
                0 if self.rerank is None else self.rerank.handle, when,
                bool(self.madd), bool(self.demotion), self.thresholds, norm, bool(self.sent),
                priority, self.table, self.scalars, self.scratch, self.iscratch, self.stats)


class EngineView(InstanceView):
    """What a ``rerank`` callback sees at an arrival or departure on the compiled engine: the
    names of :class:`coflowopt.sim.engine.SimView`, read from the engine's arrays."""

    def __init__(self, inst: Instance, clairvoyant: bool, t: float, coflows: np.ndarray,
                 remaining: np.ndarray, admitted: np.ndarray):
        super().__init__(inst, clairvoyant)
        self._remaining = remaining
        self._admitted = admitted
        self.t = t
        self.coflows = coflows

    @property
    def remaining(self) -> np.ndarray:
        """Remaining volume per flow, a read-only view of the engine's array (copy it to keep
        it past the call): clairvoyant policies only."""
        if not self._clairvoyant:
            raise PermissionError("a non-clairvoyant policy may not read remaining volumes")
        out = self._remaining.view()
        out.setflags(write=False)
        return out

    @property
    def admitted(self) -> np.ndarray:
        """Admission time per coflow, NaN before admission."""
        return np.where(np.isinf(self._admitted), np.nan, self._admitted)

    @property
    def sent(self) -> np.ndarray:
        """Volume sent per flow."""
        return self._inst.flow_volume - self._remaining

    def coflow_sent(self, coflows: np.ndarray) -> np.ndarray:
        """Volume sent by each of ``coflows`` (attained service ``S_c``)."""
        cs = np.asarray(coflows, dtype=np.int64)
        per = np.bincount(self._inst.flow_coflow, weights=self.sent,
                          minlength=self._inst.n_coflows)
        return per[cs]

    def unfinished_flows(self, c: int) -> np.ndarray:
        """The flows of coflow ``c`` with volume left."""
        inst = self._inst
        f = inst.coflow_flow_order[inst.coflow_flows_ptr[c]:inst.coflow_flows_ptr[c + 1]]
        return f[self._remaining[f] > 0]


# rerank callbacks by handle, while their engine runs (object-mode code reads no arguments
# that are Python objects, so the engine carries an integer)
_CALLBACKS: dict[int, Callable[[float, np.ndarray, np.ndarray, np.ndarray], np.ndarray]] = {}
_HANDLES = itertools.count(1)


class Reranking:
    """``with Reranking(inst, rerank, clairvoyant) as handle:`` registers ``rerank`` for one
    engine run under ``handle`` and removes it afterwards."""

    def __init__(self, inst: Instance, rerank: Callable[[Any], Any], clairvoyant: bool):
        self.inst, self.rerank, self.clairvoyant = inst, rerank, clairvoyant
        self.calls = 0
        self.handle = next(_HANDLES)

    def __call__(self, t: float, act: np.ndarray, remaining: np.ndarray,
                 admitted: np.ndarray) -> np.ndarray:
        self.calls += 1
        view = EngineView(self.inst, self.clairvoyant, t, act, remaining, admitted)
        out = np.ascontiguousarray(self.rerank(view), dtype=np.int64)
        if out.shape != act.shape or not np.array_equal(np.sort(out), np.sort(act)):
            raise ValueError(f"rerank at t={t:g}: must return a permutation of the active "
                             f"coflows {act.tolist()}, got {out.tolist()}")
        return out

    def __enter__(self) -> int:
        _CALLBACKS[self.handle] = self
        return self.handle

    def __exit__(self, *exc: Any) -> None:
        _CALLBACKS.pop(self.handle, None)


def rerank_call(handle: int, t: float, act: np.ndarray, remaining: np.ndarray,
                admitted: np.ndarray) -> np.ndarray:
    """Called by the engine in object mode: the registered callback's order of ``act``."""
    return _CALLBACKS[handle](t, act, remaining, admitted)
