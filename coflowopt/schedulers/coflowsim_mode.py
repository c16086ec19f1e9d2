"""The CoflowSim-semantics entries of the registry, on the one scheduler signature.

CoflowSim (Chowdhury's simulator of the Varys and Aalo papers) runs in quanta on its own model
of a trace (:mod:`coflowopt.sim.coflowsim`); each entry here is that simulator with one of its
schedulers, written as every registered scheduler is:
``impl(instance, params, sink, *, seed=None, progress=None) -> Outcome``.  The outcome names the
rounded instance the rates are of and the tolerance of CoflowSim's finishing rule, which the run
service validates with (a tolerance the caller gives takes precedence); either has its capacity
tolerance raised by CoflowSim's own excess over capacity, MADD's and the residues'
(:attr:`~coflowopt.sim.coflowsim.CoflowSimResult.capacity_excess`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from coflowopt.model import Instance
from coflowopt.sim.coflowsim import CoflowSimParams, coflowsim
from coflowopt.sim.coflowsim.run import widened
from coflowopt.sim.sink import Outcome, RateSink

__all__ = ["run_a_sebf", "run_dark", "run_fair", "run_fifo", "run_lcf", "run_ncf", "run_pfp",
           "run_scf", "run_sebf"]


def run_coflowsim(name: str, instance: Instance, params: CoflowSimParams, sink: RateSink,
                  progress: Any = None) -> Outcome:
    """CoflowSim's scheduler ``name`` on ``instance``, its rates into ``sink`` (streamed with
    the caller's tolerance, else the mode's own)."""
    check = (sink.tolerance or True) if sink.stream else None
    res = coflowsim(instance, name, params=params, check=check, progress=progress)
    out = res.valid if res.valid is not None else res.schedule
    # the caller's tolerance, or the mode's, widened by CoflowSim's own excess (as the
    # streamed check widens it)
    tol = widened(sink.tolerance, res.capacity_excess) if sink.tolerance else res.tolerance
    return sink.outcome(out, instance=res.instance, tolerance=tol)


def _entry(name: str) -> Callable[..., Outcome]:
    def impl(instance: Instance, params: CoflowSimParams, sink: RateSink, *, seed: Any = None,
             progress: Any = None) -> Outcome:
        return run_coflowsim(name, instance, params, sink, progress)

    impl.__name__ = impl.__qualname__ = "run_" + name.replace("-", "_")
    impl.__doc__ = f"CoflowSim's ``{name}`` (deterministic; ``seed`` unused)."
    return impl


run_sebf = _entry("sebf")
run_dark = _entry("dark")
run_fifo = _entry("fifo")
run_scf = _entry("scf")
run_ncf = _entry("ncf")
run_lcf = _entry("lcf")
run_fair = _entry("fair")
run_pfp = _entry("pfp")
run_a_sebf = _entry("a-sebf")
