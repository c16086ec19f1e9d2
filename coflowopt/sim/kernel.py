"""Running the compiled kernels: progress, interruption and compile feedback.

Every long-running kernel (:func:`~coflowopt.sim.fast.fast_simulate`,
:func:`~coflowopt.sim.fastfair.fast_fair`, :func:`~coflowopt.sim.coflowsim.coflowsim`) is
compiled with ``nogil=True`` and shares a small float64 *control array* with the thread that
waits for it (layout: the ``CTL_*`` constants):

- ``CTL_TIME``: simulated time reached, from the start of the run (the kernel writes it at
  every event); ``CTL_HORIZON``: an estimate of the run's length (the caller writes it);
- ``CTL_DONE`` / ``CTL_TOTAL``: coflows completed (kernel) / in the instance (caller);
  ``CTL_EVENTS``: events processed (kernel);
- ``CTL_STOP``: set non-zero by the waiting thread; the kernel sees it at its next event and
  returns at once, writing 1 to ``CTL_STATUS``.

:func:`run_kernel` runs a kernel in a worker thread while the calling thread waits in short
steps, calls ``progress(done, total)`` and catches ``KeyboardInterrupt`` (Ctrl-C, or raised
by the callback): it then sets the stop flag, waits for the kernel (a fraction of a second)
and raises ``KeyboardInterrupt`` again, so an interrupted run leaves no half-built result and
the process healthy.  The kernels embed the layout and :func:`stop_requested`, so a change
here must recompile them: this module belongs in ``coflowopt._kernel_cache.KERNEL_MODULES``.

The waiting thread also watches the process's resident memory: a kernel whose run grows it
past a share of the memory available when it started (``memory_share``: 0.9 for a streamed
run, :data:`STORED_SHARE` for one that stores its schedule, which then needs several times the
kernel's memory to gather and validate) is stopped the same way, and
:class:`KernelMemoryError` says how far it got, instead of the operating system killing the
process later (Linux; elsewhere nothing is watched).

The first call of a kernel compiles it (up to a minute) unless numba's on-disk cache holds
it.  :func:`prepare` compiles or loads a kernel for its arguments in the calling thread and
says so only when it really compiles; :func:`coflowopt.sim.warmup.warm_up` compiles or loads
every kernel on a tiny instance (bench workers call it before any timed task).
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from coflowopt._jit import njit

__all__ = [
    "CONTROL_SIZE",
    "CTL_DONE",
    "CTL_EVENTS",
    "CTL_HORIZON",
    "CTL_STATUS",
    "CTL_STOP",
    "CTL_TIME",
    "CTL_TOTAL",
    "STORED_HINT",
    "STORED_SHARE",
    "KernelMemoryError",
    "Notify",
    "Progress",
    "available_memory",
    "fluid_horizon",
    "memory_limits",
    "new_control",
    "prepare",
    "progress_target",
    "run_kernel",
    "stop_requested",
    "will_compile",
]

CTL_TIME, CTL_HORIZON, CTL_STOP, CTL_STATUS, CTL_DONE, CTL_TOTAL, CTL_EVENTS = range(7)
CONTROL_SIZE = 8

#: the share of the available memory a run that stores its schedule may grow by: the segments
#: it records (20 bytes each) are then joined into 32-byte columns, built into the schedule and
#: validated, several times the kernel's own growth
STORED_SHARE = 1 / 6
#: what a stored run stopped for memory should do instead
STORED_HINT = ("stream it instead: nothing is stored (check=True; co.run without "
               "keep_schedule; coflowopt run without --schedule-out)")


class KernelMemoryError(MemoryError):
    """A kernel stopped because the process's resident memory grew past ``limit`` bytes
    (``grown``: by how much; ``reached``: the simulated time or coflows done, in the run's
    progress units)."""

    def __init__(self, grown: int, limit: int, reached: float, hint: str = "",
                 units: str = "time"):
        self.grown, self.limit, self.reached = grown, limit, reached
        gib = 1 << 30
        at = (f"at simulated time {reached:.6g}" if units == "time"
              else f"after {reached:.0f} coflows")
        super().__init__(f"stopped {at}: memory grew by "
                         f"{grown / gib:.2f} GiB, past the {limit / gib:.2f} GiB this run may "
                         "take of what was available when it started"
                         + (f"; {hint}" if hint else ""))


def memory_limits(stored: bool) -> dict[str, Any]:
    """:func:`run_kernel`'s memory arguments for a run that stores its schedule (``stored``:
    :data:`STORED_SHARE` and :data:`STORED_HINT`) or streams it (the default share)."""
    return {"memory_share": STORED_SHARE, "hint": STORED_HINT} if stored else {}


def available_memory() -> int | None:
    """The memory available to new work (``MemAvailable`` of ``/proc/meminfo``, bytes), or
    ``None`` where there is no such file."""
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def _resident() -> int | None:
    """This process's resident memory (bytes), or ``None`` where it cannot be read."""
    try:
        with open("/proc/self/statm", encoding="ascii") as fh:
            return int(fh.read().split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        return None


try:
    _PAGE = os.sysconf("SC_PAGE_SIZE")
except (AttributeError, ValueError, OSError):  # not POSIX (no statm to read either)
    _PAGE = 4096

#: ``progress(done, total)``: called from the waiting thread, never from the kernel's.
Progress = Callable[[float, float], Any]
#: ``notify(message)``: one line about compiling; ``None`` prints it to stderr.
Notify = Callable[[str], Any]


@intrinsic
def _load_acquire(typingctx, arr, idx):
    """``arr[idx]`` as an atomic acquire load: a plain load of a flag that the loop never
    writes may be hoisted out of the loop by LLVM, and the kernel would never see it set."""
    if not (isinstance(arr, types.Array) and arr.ndim == 1 and arr.dtype == types.float64
            and isinstance(idx, types.Integer)):
        return None

    def codegen(context, builder, signature, args):
        aryty = signature.args[0]
        ary = context.make_array(aryty)(context, builder, args[0])
        ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [args[1]])
        return builder.load_atomic(ptr, "acquire", 8)

    return types.float64(arr, idx), codegen


@njit(cache=True, inline="always")
def stop_requested(control):
    """In a kernel: whether the waiting thread set the stop flag of ``control``."""
    return _load_acquire(control, CTL_STOP) != 0.0


def new_control(horizon: float = 0.0, coflows: int = 0, out: np.ndarray | None = None
                ) -> np.ndarray:
    """A control array for one run (see the module docstring): fresh, or ``out`` (a caller's,
    float64 of ``CONTROL_SIZE``, e.g. to stop the run from another thread) reset but for its
    stop flag."""
    if out is None:
        out = np.zeros(CONTROL_SIZE)
    elif out.dtype != np.float64 or out.shape != (CONTROL_SIZE,) or not out.flags.writeable:
        raise ValueError(f"control: need a writable float64 array of {CONTROL_SIZE}")
    stop = out[CTL_STOP]
    out[:] = 0.0
    out[CTL_STOP] = stop
    out[CTL_HORIZON] = horizon
    out[CTL_TOTAL] = coflows
    return out


def fluid_horizon(instance: Any, t0: float = 0.0) -> float:
    """An estimate of a fluid run's length from ``t0`` (instance time units): the later of
    the last release plus the total volume over the total ingress capacity, and the first
    release plus the busiest port's volume over its capacity.  Not a bound: progress reports
    raise it to the time reached when a run passes it."""
    rel = np.asarray(instance.release, dtype=np.float64)
    if rel.size == 0:
        return 0.0
    vol = np.asarray(instance.flow_volume, dtype=np.float64)
    cap_in = np.asarray(instance.fabric.capacity_in, dtype=np.float64)
    cap_out = np.asarray(instance.fabric.capacity_out, dtype=np.float64)
    m = cap_in.size
    busy = max((np.bincount(instance.flow_src, vol, minlength=m) / cap_in).max(initial=0.0),
               (np.bincount(instance.flow_dst, vol, minlength=m) / cap_out).max(initial=0.0))
    spread = vol.sum() / max(cap_in.sum(), 1e-300)
    return max(float(rel.max()) + spread, float(rel.min()) + busy) - t0


def progress_target(progress: Progress | None) -> tuple[Progress | None, str]:
    """The callback an entry point hands to :func:`run_kernel`, and its units: ``progress``
    itself, in simulated time.  A run reports progress only to the callback its caller passed
    (the run service passes one to every scheduler): there is no ambient fallback."""
    return progress, "time"


def _say(notify: Notify | None, message: str) -> None:
    if notify is None:
        print(f"coflowopt: {message}", file=sys.stderr, flush=True)
    else:
        notify(message)


def _signature(fn: Any, args: tuple) -> tuple:
    return tuple(fn.typeof_pyval(a) for a in args)


def will_compile(fn: Any, *args: Any) -> bool | None:
    """Whether calling the numba dispatcher ``fn`` on ``args`` compiles (``True``), runs code
    already in this process or in numba's cache (``False``), or cannot tell (``None``: the
    cache index could not be read; numba's private cache API may change)."""
    sig = _signature(fn, args)
    if sig in fn.overloads:
        return False
    try:
        cache = fn._cache
        index = cache._cache_file._load_index()
        key = cache._index_key(sig, fn.targetctx.codegen())
    except Exception:  # private numba API: an unknown answer, not an error
        return None
    return key not in index


def prepare(fn: Any, *args: Any, notify: Notify | None = None) -> float:
    """Compile or load ``fn`` for ``args`` in this thread (so that Ctrl-C interrupts a
    compile as any Python code); returns the seconds it took.  ``notify`` hears
    ``"compiling kernels (first run only) ..."`` before and ``"compiled in N s"`` after,
    only when a compile really happens."""
    sig = _signature(fn, args)
    if sig in fn.overloads:
        return 0.0
    predicted = will_compile(fn, *args)
    if predicted:
        _say(notify, "compiling kernels (first run only) ...")
    before = sum(fn.stats.cache_misses.values())
    t0 = time.perf_counter()
    fn.compile(sig)
    dt = time.perf_counter() - t0
    if sum(fn.stats.cache_misses.values()) > before:
        if not predicted:
            _say(notify, "compiling kernels (first run only) ...")
        _say(notify, f"compiled in {dt:.1f} s")
    return dt


def _join(thread: threading.Thread) -> None:
    """Wait for ``thread``, through further Ctrl-C presses (the kernel is stopping)."""
    while thread.is_alive():
        try:
            thread.join(0.05)
        except KeyboardInterrupt:
            pass


def run_kernel(fn: Callable[..., Any], *args: Any, control: np.ndarray,
               progress: Progress | None = None, units: str = "time",
               poll: float = 0.1, memory_share: float | None = 0.9, hint: str = "") -> Any:
    """``fn(*args)`` (a kernel compiled with ``nogil=True`` that takes ``control`` among its
    arguments) in a worker thread; returns its result.

    The calling thread waits in ``poll``-second steps; ``progress(done, total)`` is called
    when the values changed, and once at the end with ``done == total``: ``units="time"``:
    simulated time reached and the horizon estimate (raised to the time reached when that is
    later); ``"coflows"``: coflows completed and coflows.  On ``KeyboardInterrupt`` (Ctrl-C,
    or raised by ``progress``) the kernel is told to stop, waited for, and the interrupt is
    raised again; a kernel that stopped early for any other reason also raises it.

    ``memory_share``: when the process's resident memory has grown by more than this share of
    the memory available at the start (checked at every poll), the kernel is stopped the same
    way and :class:`KernelMemoryError` raised, ending with ``hint``; ``None``: not watched."""
    if units not in ("time", "coflows"):
        raise ValueError(f"run_kernel: units must be 'time' or 'coflows', got {units!r}")
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["out"] = fn(*args)
        except BaseException as exc:  # raised again in the caller's thread
            box["err"] = exc

    def values() -> tuple[float, float]:
        if units == "time":
            done = float(control[CTL_TIME])
            return done, max(float(control[CTL_HORIZON]), done)
        return float(control[CTL_DONE]), float(control[CTL_TOTAL])

    avail = available_memory() if memory_share is not None else None
    base = _resident() if avail is not None else None
    limit = int(memory_share * avail) if avail is not None and base is not None else None
    worker = threading.Thread(target=target, name="coflowopt-kernel", daemon=True)
    worker.start()
    last: tuple[float, float] | None = None
    try:
        while worker.is_alive():
            worker.join(poll)
            if limit is not None and worker.is_alive():
                grown = (_resident() or 0) - base
                if grown > limit:
                    raise KernelMemoryError(grown, limit, values()[0], hint, units)
            if progress is not None and worker.is_alive():
                now = values()
                if now != last:
                    progress(*now)
                    last = now
    except BaseException:
        control[CTL_STOP] = 1.0
        _join(worker)
        raise
    if "err" in box:
        raise box["err"]
    if control[CTL_STATUS] != 0.0:
        raise KeyboardInterrupt("the kernel was stopped")
    if progress is not None:  # complete: the time reached, or every coflow
        done = values()[0 if units == "time" else 1]
        progress(done, done)
    return box["out"]
