"""CoflowSim semantics: reproduce the Java simulator's per-coflow results, fast.

Most coflow papers of the last decade report numbers from CoflowSim (``coflow/coflowsim``, the
trace-driven simulator of Varys: Chowdhury, Zhong, Stoica, "Efficient Coflow Scheduling with
Varys", SIGCOMM 2014).  Its semantics differ from an exact fluid simulation:

- a port moves exactly 1 MiB (one trace "MB") per 8 ms quantum; time advances in quanta, so
  finish times are multiples of 8 ms and a flow that finishes inside a quantum wastes the rest;
- arrivals are admitted in 10,240 ms epochs: a coflow arriving in ``(T, T + 10240]`` is admitted
  at ``T`` (and at 0 for arrivals up to 10,240) and its CCT is measured from there;
- each reducer's MB is rounded up to whole MiB, then to a multiple of the mapper count, and
  split evenly over the mappers (every flow a whole number of MiB, at least 1);
- rates are recomputed only at events (an epoch with admissions, or a whole coflow departing):
  bandwidth freed by a finished flow stays idle until the next event;
- orders are fixed at insertion from static keys; the coflow-level schedulers run MADD over the
  order, split what is left equally per flow among coflows that need a saturated port, and
  backfill in pseudo-deadline order (start + isolated duration x U[1, 2) drawn from
  ``java.util.Random(17)``, one draw per coflow in arrival order);
- DARK (Aalo's D-CLAS: Chowdhury, Stoica, SIGCOMM 2015): 10 queues on bytes sent,
  first limit 10 MiB, x10, strict priority, FIFO by queue entry, updated only at events,
  per-flow equal split inside a coflow;
- A-SEBF (not in CoflowSim; the A-SEBF paper's width-aware D-CLAS, bottleneck factor
  ``λ = S / W``): DARK with the queue key the bytes sent over the coflow's receiver ports
  (``shuffleBytesCompleted / numReducers``);
- FAIR: per-flow sharing, each flow ``min(C / #flows at its reducer, C / #flows at its
  mapper)``; PFP: each reducer port, in port order, serves at full rate the first flow of its
  list (kept sorted by size at insertion) whose mapper is still idle.

Details read off CoflowSim's output where its code is not plain: a reducer completes when its own
bytes-left counter reaches ``Constants.ZERO`` even if a flow still holds a residue; such
"zombie" flows keep their rates (and capacity) while their coflow lives, move until the next
layout of the port lists, and keep decrementing the counter, whose negative value can then
dominate a coflow's MADD bottleneck.

The Java simulator advances every flow every quantum (CoflowSim needs 580 to 980 s of CPU on the
FB2010 trace).  Here rates are constant between events, so a compiled kernel jumps from event to
event.  To agree with Java to the millisecond the jump replays Java's floating point exactly: a
quantum subtracts the per-quantum byte count ``d`` from the bytes left ``x``; while ``x`` stays in
one binade ``[2^e, 2^(e+1))`` every rounded subtraction removes the same grid multiple of ``d``,
so a run of quanta collapses to integer arithmetic on the grid
(:func:`~coflowopt.sim.coflowsim.javafloat.advance`).

The schedule records a flow's rate as the ``d`` Java computes, but Java's counter removes ``d``
rounded to its grid, so over a long run the two part by up to half an ulp a quantum.  The kernel
keeps that drift under ``ZERO / 4`` bytes (a run that would pass it is recorded at its exact mean
bytes per quantum) and, in the window where a flow finishes, leaves its last quantum more than
the validator's slack: the last quantum (more than ``ZERO`` bytes in Java) then takes up the
difference and the flow is done in the same quantum as in Java.

Units: the transformed instance is in MB (= MiB of the trace) and ms, capacity 1/8 MB per ms,
like :func:`coflowopt.workloads.read_trace`.  Every schedule is returned on that transformed
instance (rounded volumes, releases moved to the admission epoch), which the validator checks.

The package, one concept a module: :mod:`~coflowopt.sim.coflowsim.model` (the instance
transform), :mod:`~coflowopt.sim.coflowsim.javafloat` (Java's float and RNG replay),
:mod:`~coflowopt.sim.coflowsim.orders` and :mod:`~coflowopt.sim.coflowsim.rates` (the
coflow-level orders and MADD / D-CLAS rates), one module per kernel
(:mod:`~coflowopt.sim.coflowsim.ordered`, :mod:`~coflowopt.sim.coflowsim.fair`,
:mod:`~coflowopt.sim.coflowsim.pfp`) over the shared loop steps
(:mod:`~coflowopt.sim.coflowsim.loop`), :mod:`~coflowopt.sim.coflowsim.stream` (streaming into
the validator) and :mod:`~coflowopt.sim.coflowsim.run` (the entry point).
"""

from coflowopt.sim.coflowsim.javafloat import JavaRandom
from coflowopt.sim.coflowsim.model import CoflowSimParams, coflowsim_instance
from coflowopt.sim.coflowsim.run import (
    COFLOWSIM_CLAIRVOYANT,
    COFLOWSIM_SCHEDULERS,
    CoflowSimResult,
    coflowsim,
)

__all__ = [
    "COFLOWSIM_CLAIRVOYANT",
    "COFLOWSIM_SCHEDULERS",
    "CoflowSimParams",
    "CoflowSimResult",
    "JavaRandom",
    "coflowsim",
    "coflowsim_instance",
]
