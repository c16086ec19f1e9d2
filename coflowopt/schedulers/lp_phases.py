"""Phase lines of the LP-based schedulers (``om-lp``, ``approximate``): the model's size and
what the run is doing (building the LP, solving it, rounding its order into a schedule).

They extend the ``progress`` callback of the calling convention (:mod:`coflowopt.schedulers.
registry`): a callback with a ``phase`` attribute hears each line as ``progress.phase(text)``.
Without one, the lines go to stderr as ``coflowopt: NAME: text`` (as the kernels' compile
notices do) when the LP is large enough to take a while (:data:`LOUD_NONZEROS`), so a long
solve is never silent and a small one prints nothing.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable
from typing import Any

__all__ = ["LOUD_NONZEROS", "Phases", "value_above"]

#: From this many (estimated) constraint nonzeros on, an LP says its phases on stderr unasked:
#: HiGHS takes about a second for this size on one core.
LOUD_NONZEROS = 200_000


class Phases:
    """The phase lines of one run of scheduler ``name``, to ``progress.phase`` or stderr
    (module docstring); ``nonzeros``: the LP's estimated size, known before it is built."""

    def __init__(self, name: str, progress: Any, nonzeros: float):
        self.name = name
        sink = getattr(progress, "phase", None)
        self._sink: Callable[[str], Any] | None = sink if callable(sink) else None
        self._loud = self._sink is not None or nonzeros >= LOUD_NONZEROS
        self._t0 = time.perf_counter()

    def __call__(self, text: str) -> None:
        if not self._loud:
            return
        if self._sink is not None:
            self._sink(text)
        else:
            print(f"coflowopt: {self.name}: {text}", file=sys.stderr, flush=True)

    def elapsed(self) -> float:
        """Seconds since the run started."""
        return time.perf_counter() - self._t0

    def model(self, what: str, lp: Any, time_limit: float, solver: str) -> None:
        """The built LP's size, then that it is being solved (and until when at most)."""
        limit = f"time limit {time_limit:g} s" if time_limit < float("inf") else "no time limit"
        self(f"{what} built in {self.elapsed():.1f} s: {lp.n_cols:,} variables, "
             f"{lp.n_rows:,} constraints, {lp.nnz:,} nonzeros")
        self(f"solving the {what} with {solver} ({limit}, parameter time_limit)")


def value_above(x: float) -> str:
    """``x`` rounded up to two significant digits, as a parameter value to suggest (a value
    rounded to nearest could fall below ``x`` and not lift the refusal it is meant to)."""
    if not x > 0:
        return f"{x:g}"
    step = 10.0 ** (math.floor(math.log10(x)) - 1)
    return f"{math.ceil(x / step) * step:.2g}"
