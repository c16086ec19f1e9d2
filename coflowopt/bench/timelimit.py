"""Per-task time limits enforced inside the worker.

:func:`deadline` raises :class:`TaskTimeout` in the running code once ``seconds`` have passed:
through ``SIGALRM`` in a process's main thread (a local process pool's workers, a plain call),
and through an asynchronous exception (``PyThreadState_SetAsyncExc``) in any other thread (a
Dask worker's task threads, a thread pool).  Both interrupt Python code between bytecodes; a
long call into C (a solver, one huge numpy operation) is interrupted when it returns.  For a
hard limit that also survives crashes in C, run the suite with ``isolate = true``: each task
then runs in its own subprocess, which is killed at the limit.
"""

from __future__ import annotations

import ctypes
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["TaskTimeout", "deadline"]


class TaskTimeout(BaseException):
    """The running task passed its time limit.

    A ``BaseException`` so that an algorithm's own ``except Exception`` cannot swallow it.
    """


@contextmanager
def deadline(seconds: float | None) -> Iterator[None]:
    """Raise :class:`TaskTimeout` inside the ``with`` body after ``seconds`` (``None``: no
    limit)."""
    if seconds is None:
        yield
        return
    if threading.current_thread() is threading.main_thread() and hasattr(signal, "setitimer"):
        with _alarm(float(seconds)):
            yield
    else:
        with _async_exception(float(seconds)):
            yield


@contextmanager
def _alarm(seconds: float) -> Iterator[None]:
    state = {"armed": True}

    def handler(signum: int, frame: object) -> None:
        if state["armed"]:
            state["armed"] = False
            raise TaskTimeout(seconds)

    old = signal.signal(signal.SIGALRM, handler)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        try:
            yield
        finally:
            state["armed"] = False
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


@contextmanager
def _async_exception(seconds: float) -> Iterator[None]:
    tid = threading.get_ident()
    lock = threading.Lock()
    state = {"armed": True}

    def fire() -> None:
        with lock:
            if state["armed"]:
                state["armed"] = False
                ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(tid),
                                                           ctypes.py_object(TaskTimeout))

    timer = threading.Timer(seconds, fire)
    timer.daemon = True
    timer.start()
    try:
        try:
            yield
        finally:
            with lock:
                state["armed"] = False
    finally:
        timer.cancel()
