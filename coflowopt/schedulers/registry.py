"""The scheduler registry: one explicit table of every algorithm, for the CLI, the bench, the
proof checks and notebooks.

Each entry names its implementation lazily (``"module:function"``, imported on first use, so
listing the registry imports no algorithm, and an entry whose module needs torch does not
import torch until it runs); a module that fails to import raises :class:`ImportError` naming
the entry and the module.  Each entry also says what it supports (single-stage only, needs
Starts-After edges, needs deadlines, which semantics), so a caller can refuse an unsupported
pair before running (:meth:`SchedulerInfo.refusal`), and what its parameters are (a frozen
:class:`~coflowopt.params.Params` dataclass, checked on creation).

Calling convention.  The public form of every scheduler is ``algorithm(instance, *, seed=None,
**params) -> Schedule`` (``SchedulerInfo.__call__``).  Underneath, every implementation (both
semantics) is ``impl(instance, params, sink, *, seed=None, progress=None) ->``
:class:`~coflowopt.sim.sink.Outcome`: it writes its rates to the
:class:`~coflowopt.sim.sink.RateSink` it is handed (stored, or streamed into the validator where
its engine can: entries with ``streams=True``; :func:`coflowopt.run` is the one caller that asks
for that) and returns the outcome; ``progress(done, total)`` hears how far the run is (and, where
the callback has a ``phase`` attribute, the LP-based schedulers' phase lines: the model's size,
building, solving, rounding; :mod:`coflowopt.schedulers.lp_phases`).

Plugins add entries with :func:`register` (a decorator on a plain ``func(instance, *,
seed=None, **params)``), which builds the parameter dataclass from the signature.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from coflowopt.model import Instance
from coflowopt.params import NoParams, Params, ParamsError
from coflowopt.schedule import Schedule

__all__ = [
    "FACTOR_LEGEND",
    "FACTOR_SOURCES",
    "FAMILIES",
    "SEMANTICS",
    "Algorithm",
    "NoFeasibleSchedule",
    "SchedulerInfo",
    "SolverStopped",
    "UnsupportedInstance",
    "factor_label",
    "get",
    "register",
    "registry",
    "unregister",
]

SEMANTICS = ("fluid", "coflowsim")
FACTOR_SOURCES = ("R", "C")
FACTOR_LEGEND = ("factor tags: [R] recovered from the paper, [C] reconstructed by us (see "
                 "docs/families/index.md)")
FAMILIES = ("single", "dag", "fair", "learned", "baseline", "exact", "plugin")
KINDS = ("offline", "online", "exact")


class Algorithm(Protocol):
    def __call__(self, instance: Instance, *, seed: Any = None, **params: Any) -> Schedule: ...


class UnsupportedInstance(ValueError):
    """A scheduler was given an instance it does not support; the message says why in a line."""


class NoFeasibleSchedule(ValueError):
    """An algorithm proved that no schedule meeting its own constraints exists (e.g. CoFair's
    slowdown deadlines below ``E*``): a result, not a failure.  The message says why in one line
    and names the coflow or job; ``where`` holds that id (or ``None``)."""

    def __init__(self, message: str, where: Any = None):
        super().__init__(message)
        self.where = where


class SolverStopped(ValueError):
    """An LP-based scheduler stopped without a schedule: its LP reached the ``time_limit``
    parameter or the solver failed, or the LP was refused before being built as too large.
    The message is one line and names the parameter that changes the outcome; the CLI prints
    it without a traceback."""


def factor_label(factor: str | None, source: str = "R") -> str:
    """``factor`` tagged with its provenance (``"2m+1 [R]"``); ``"-"`` for no factor."""
    if factor is None or factor in ("", "-"):
        return "-"
    return f"{factor} [{source}]"


def _label(value: Any) -> Any:
    """A job or coflow id as a plain Python value, for messages."""
    return value.item() if hasattr(value, "item") else value


def _load(target: str, what: str) -> Any:
    module, _, attr = target.partition(":")
    try:
        mod = importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(f"{what}: cannot import {module}: {exc}") from exc
    try:
        return getattr(mod, attr)
    except AttributeError:
        raise ImportError(f"{what}: {module} has no {attr!r}") from None


@dataclass(frozen=True)
class SchedulerInfo:
    """One registered algorithm.

    ``kind``: ``offline`` (all coflows known at the start), ``online`` (sees coflows at their
    release) or ``exact`` (an optimum from a solver).  ``factor``: the proven approximation
    factor as the paper states it (``None`` when there is none), with ``objective`` naming what
    it bounds.  ``family``: the folder of :mod:`coflowopt.schedulers` it lives in.
    ``multistage``: honours Starts-After edges (else the instance must have none);
    ``finishes_before``: honours Finishes-Before edges (else an instance with one is refused
    before any work, naming the job and coflow; no built-in entry does);
    ``needs_starts_after`` / ``needs_deadlines``: refuses instances without them.
    ``factor_metric``: the metric of :func:`coflowopt.metrics.summary` the factor bounds, and
    ``factor_assumes``: what else it needs (``"release 0"``: every release 0; ``"single-stage"``:
    no precedence edges); ``factor_params``: the parameter values the factor needs, as
    ``(name, value)`` pairs (Sincronia's 4 is proven for ``mode="offline"``, not for its
    default online re-ordering); reports show the factor only where all hold
    (:meth:`factor_for`); ``objective`` names those values for the listing.
    ``job_objective``: designed for job DAGs (its objective is on job completion; the proof
    checks give it DAG instances).  ``streams``: the implementation can stream its rate changes
    into the validator.  ``supports``: ``"module:function"`` of a structural test beyond those
    flags (e.g. rooted trees only): ``function(instance) -> str | None``, the one-line reason it
    cannot run the instance, imported only when asked.  ``factor_source``: ``"R"`` when the
    factor is recovered from the paper, ``"C"`` when it is our reconstruction (our own
    derivation, e.g. a bound carried over to a reconstructed variant); :attr:`factor_label`
    shows it as ``"4 [R]"`` / ``"O(mu g(m)) [C]"`` (:data:`FACTOR_LEGEND`).
    """

    name: str
    target: str
    params_target: str | None
    kind: str
    clairvoyant: bool
    family: str
    summary: str
    factor: str | None = None
    objective: str = "sum of weighted CCT"
    semantics: str = "fluid"
    multistage: bool = False
    needs_starts_after: bool = False
    needs_deadlines: bool = False
    job_objective: bool = False
    factor_metric: str | None = None
    factor_assumes: tuple[str, ...] = ()
    streams: bool = False
    aliases: tuple[str, ...] = ()
    supports: str | None = None
    factor_source: str = "R"
    finishes_before: bool = False
    factor_params: tuple[tuple[str, Any], ...] = ()
    _impl: Any = field(default=None, compare=False, repr=False)
    _params: Any = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"scheduler {self.name!r}: kind must be one of {KINDS}")
        if self.semantics not in SEMANTICS:
            raise ValueError(f"scheduler {self.name!r}: semantics must be one of {SEMANTICS}")
        if self.family not in FAMILIES:
            raise ValueError(f"scheduler {self.name!r}: family must be one of {FAMILIES}")
        if self.factor_source not in FACTOR_SOURCES:
            raise ValueError(f"scheduler {self.name!r}: factor_source must be one of "
                             f"{FACTOR_SOURCES}, got {self.factor_source!r}")

    @property
    def factor_label(self) -> str:
        """The factor with its provenance tag (``"3 [C]"``), or ``"-"`` when there is none."""
        return factor_label(self.factor, self.factor_source)

    @property
    def impl(self) -> Callable[..., Any]:
        """The implementation, imported on first use."""
        if self._impl is None:
            object.__setattr__(self, "_impl", _load(self.target, f"scheduler {self.name!r}"))
        return self._impl

    @property
    def params_class(self) -> type:
        """The parameter dataclass, imported on first use."""
        if self._params is None:
            cls = NoParams if self.params_target is None else _load(
                self.params_target, f"scheduler {self.name!r} parameters")
            object.__setattr__(self, "_params", cls)
        return self._params

    def make_params(self, params: Mapping[str, Any] | Any = None, *, where: str = "") -> Any:
        """The checked parameter object from a mapping (or an instance of the class, as is).
        Unknown or ill-typed parameters raise :class:`~coflowopt.params.ParamsError` naming
        the field (prefixed by ``where``); a range check across fields raises
        :class:`ValueError`."""
        cls = self.params_class
        if isinstance(params, cls):
            return params
        if params is not None and not isinstance(params, Mapping):
            raise ParamsError(f"{where or self.name}: parameters must be a mapping or "
                              f"{cls.__name__}, got {type(params).__name__}")
        return cls.from_dict(params, where=where or self.name)

    def factor_for(self, metric: str, instance: Instance, params: Any = None) -> str | None:
        """The proven factor where it applies to ``metric`` on ``instance`` run with ``params``
        (a mapping or the parameter dataclass; ``None``: the defaults), else ``None``."""
        if self.factor is None or metric != self.factor_metric:
            return None
        if self.factor_params:
            p = self.make_params(params)
            if any(getattr(p, k) != v for k, v in self.factor_params):
                return None
        if "release 0" in self.factor_assumes and (instance.release != 0).any():
            return None
        if "single-stage" in self.factor_assumes and (
                instance.starts_after.shape[0] or instance.finishes_before.shape[0]):
            return None
        return self.factor

    def refusal(self, instance: Instance) -> str | None:
        """Why this scheduler cannot run ``instance`` (one line), or ``None`` when it can."""
        edges = instance.starts_after.shape[0] > 0 or instance.finishes_before.shape[0] > 0
        if edges and not self.multistage:
            c = int(instance.starts_after[0, 1]) if instance.starts_after.shape[0] else int(
                instance.finishes_before[0, 1])
            job = instance.job_id[int(instance.coflow_job[c])]
            what = ("CoflowSim semantics are single-stage" if self.semantics == "coflowsim"
                    else "it schedules single-stage coflows only")
            return (f"{self.name} ({self.semantics}) cannot run this instance: {what}, and job "
                    f"{job} has precedence edges (e.g. into coflow "
                    f"{instance.coflow_id[c]})")
        fb = instance.finishes_before
        if fb.shape[0] and not self.finishes_before:
            c = int(fb[0, 1])
            job = _label(instance.job_id[int(instance.coflow_job[c])])
            return (f"{self.name} cannot run this instance: it does not honour Finishes-Before "
                    f"edges, and job {job!r} has one (into coflow "
                    f"{_label(instance.coflow_id[c])!r})")
        if self.needs_starts_after and not edges:
            return f"{self.name} needs job DAGs with Starts-After edges; the instance has none"
        if self.needs_deadlines:
            import numpy as np

            if not np.isfinite(instance.job_deadline).any():
                return f"{self.name} needs job deadlines; the instance has none"
        if self.supports is not None:
            why = _load(self.supports, f"scheduler {self.name!r} support test")(instance)
            if why is not None:
                return f"{self.name} cannot run this instance: {why}"
        return None

    def check_supports(self, instance: Instance) -> None:
        """Raise :class:`UnsupportedInstance` with :meth:`refusal`'s reason, if any."""
        why = self.refusal(instance)
        if why is not None:
            raise UnsupportedInstance(why)

    def __call__(self, instance: Instance, *, seed: Any = None, **params: Any) -> Any:
        """Run on ``instance`` and return the (unvalidated) :class:`~coflowopt.Schedule`; for
        a CoflowSim-semantics entry, the :class:`~coflowopt.sim.coflowsim.CoflowSimResult`.
        Use :func:`coflowopt.run` for a validated result."""
        p = self.make_params(params)
        self.check_supports(instance)
        if self.semantics == "coflowsim":
            from coflowopt.sim.coflowsim import coflowsim

            return coflowsim(instance, self.name, params=p)
        from coflowopt.sim.sink import RateSink

        out = self.impl(instance, p, RateSink.store(), seed=seed).schedule
        out.meta.setdefault("scheduler", self.name)
        return out


S, C = "coflowopt.schedulers.single", "coflowopt.sim.coflowsim"
D = "coflowopt.schedulers.dag"

# The table.  Fluid names first, then the CoflowSim-semantics names.
_TABLE: list[SchedulerInfo] = [
    SchedulerInfo("sequential", "coflowopt.schedulers.baselines:run_sequential",
                  "coflowopt.schedulers.baselines:SequentialParams", "offline", True,
                  "baseline", "one coflow at a time, each alone at its isolation rates (MADD)",
                  objective="makespan and sum of weighted CCT (no guarantee)", multistage=True,
                  job_objective=True),
    SchedulerInfo("varys", f"{S}.varys:run_varys", f"{S}.varys:VarysParams", "online", True,
                  "single", "SEBF order + MADD + work-conserving backfill (Varys)",
                  objective="average CCT (heuristic)", multistage=True, streams=True),
    # kind and factor as run by default: mode="online" (BSSI again at every arrival and
    # departure; the stored schedule digests are of it); the paper's factor 4 is for one BSSI
    # order over all coflows, mode="offline"
    SchedulerInfo("sincronia", f"{S}.sincronia:run_sincronia", f"{S}.sincronia:SincroniaParams",
                  "online", True, "single",
                  "BSSI order + order-preserving greedy allocation (Sincronia); mode=online "
                  "(default) re-orders at every arrival and departure, mode=offline is the "
                  "paper's one offline order", factor="4",
                  objective="sum of weighted CCT (release 0, mode=offline)",
                  multistage=True, streams=True, factor_metric="weighted_completion",
                  factor_assumes=("release 0", "single-stage"),
                  factor_params=(("mode", "offline"),)),
    SchedulerInfo("aalo", f"{S}.aalo:run_aalo", f"{S}.aalo:AaloParams", "online", False,
                  "single", "D-CLAS: priority queues on bytes sent, FIFO inside, strict priority",
                  objective="average CCT (heuristic)", multistage=True, streams=True),
    SchedulerInfo("a-sebf", f"{S}.a_sebf:run_a_sebf", f"{S}.a_sebf:ASEBFParams", "online",
                  False, "single", "D-CLAS on bytes sent per receiver port (A-SEBF)",
                  objective="average CCT (heuristic)", multistage=True, streams=True),
    SchedulerInfo("fifo", f"{S}.static:run_fifo", f"{S}.static:StaticParams", "online", False,
                  "single", "first in, first out by arrival, greedy allocation",
                  objective="average CCT (baseline)", multistage=True, streams=True),
    SchedulerInfo("scf", f"{S}.static:run_scf", f"{S}.static:StaticParams", "online", True,
                  "single", "shortest first: smallest largest flow, greedy allocation",
                  objective="average CCT (baseline)", multistage=True, streams=True),
    SchedulerInfo("ncf", f"{S}.static:run_ncf", f"{S}.static:StaticParams", "online", False,
                  "single", "narrowest first: fewest flows, greedy allocation",
                  objective="average CCT (baseline)", multistage=True, streams=True),
    SchedulerInfo("lcf", f"{S}.static:run_lcf", f"{S}.static:StaticParams", "online", True,
                  "single", "lightest first: smallest total bytes, greedy allocation",
                  objective="average CCT (baseline)", multistage=True, streams=True),
    SchedulerInfo("fair", f"{S}.fair:run_fair", f"{S}.fair:FairParams", "online", False,
                  "single", "per-flow max-min fair sharing",
                  objective="average CCT (baseline)", multistage=True, streams=True),
    # -- multi-stage jobs (coflowopt.schedulers.dag) --
    SchedulerInfo("bna", "coflowopt.schedulers.dag.bna:run_bna",
                  "coflowopt.schedulers.dag.bna:BNAParams", "offline", True, "dag",
                  "BNA (Birkhoff-von Neumann) one coflow at a time, each in its eff(D) slots",
                  factor="1 (exact, one coflow)", objective="makespan", multistage=True,
                  job_objective=True, streams=True,
                  supports="coflowopt.schedulers.dag.bna:supports_bna"),
    SchedulerInfo("dma", "coflowopt.schedulers.dag.dma:run_dma",
                  "coflowopt.schedulers.dag.dma:DMAParams", "offline", True, "dag",
                  "Delay-and-Merge: isolated BNA job schedules, random delays, merged runs "
                  "resolved by BNA (DMA)", factor="O(mu g(m))", objective="makespan",
                  multistage=True, job_objective=True, streams=True,
                  supports="coflowopt.schedulers.dag.dma:supports_dma"),
    SchedulerInfo("dma-srt", "coflowopt.schedulers.dag.rooted:run_dma_srt",
                  "coflowopt.schedulers.dag.rooted:DMASRTParams", "offline", True, "dag",
                  "DMA for one rooted-tree job: delayed path sub-jobs, intervals of l_I "
                  "slots resolved by BNA (DMA-SRT)", factor="O(sqrt(mu) h(m,mu))",
                  objective="makespan", multistage=True, job_objective=True, streams=True,
                  supports="coflowopt.schedulers.dag.rooted:supports_dma_srt"),
    SchedulerInfo("dma-rt", "coflowopt.schedulers.dag.rooted:run_dma_rt",
                  "coflowopt.schedulers.dag.rooted:DMARTParams", "offline", True, "dag",
                  "DMA over rooted-tree jobs, each first scheduled by DMA-SRT (DMA-RT)",
                  factor="O(sqrt(mu) g(m) h(m,mu))", objective="makespan", multistage=True,
                  job_objective=True, streams=True,
                  supports="coflowopt.schedulers.dag.rooted:supports_dma_rt"),
    SchedulerInfo("gdm", "coflowopt.schedulers.dag.gdm:run_gdm",
                  "coflowopt.schedulers.dag.gdm:GDMParams", "offline", True, "dag",
                  "primal-dual job order, geometric groups by T_j + rho_j + D_j, DMA per "
                  "group (G-DM)", factor="O(mu g(m))", objective="sum of weighted JCT",
                  multistage=True, job_objective=True, factor_metric="weighted_jct",
                  streams=True, supports="coflowopt.schedulers.dag.gdm:gdm_supports"),
    SchedulerInfo("gdm-rt", "coflowopt.schedulers.dag.gdm:run_gdm_rt",
                  "coflowopt.schedulers.dag.gdm:GDMRTParams", "offline", True, "dag",
                  "G-DM with DMA-RT per group, for rooted-tree jobs (G-DM-RT)",
                  factor="O(sqrt(mu) g(m) h(m,mu))", objective="sum of weighted JCT",
                  multistage=True, job_objective=True, factor_metric="weighted_jct",
                  streams=True, supports="coflowopt.schedulers.dag.gdm:gdm_rt_supports"),
    SchedulerInfo("gdm-bf", "coflowopt.schedulers.dag.gdm:run_gdm_bf",
                  "coflowopt.schedulers.dag.gdm:GDMParams", "offline", True, "dag",
                  "G-DM plus backfilling of idle ports in sigma order (G-DM-BF, rule "
                  "reconstructed)", factor="O(mu g(m))", objective="sum of weighted JCT",
                  multistage=True, job_objective=True, factor_metric="weighted_jct",
                  streams=True, supports="coflowopt.schedulers.dag.gdm:gdm_supports",
                  factor_source="C"),  # BF rule ours; it only adds service, so the bound holds
    SchedulerInfo("gdm-rt-bf", "coflowopt.schedulers.dag.gdm:run_gdm_rt_bf",
                  "coflowopt.schedulers.dag.gdm:GDMRTParams", "offline", True, "dag",
                  "G-DM-RT plus backfilling of idle ports in sigma order (G-DM-RT-BF, rule "
                  "reconstructed)", factor="O(sqrt(mu) g(m) h(m,mu))",
                  objective="sum of weighted JCT", multistage=True, job_objective=True,
                  factor_metric="weighted_jct", streams=True,
                  supports="coflowopt.schedulers.dag.gdm:gdm_rt_supports",
                  factor_source="C"),  # BF rule ours; it only adds service, so the bound holds
    SchedulerInfo("om-lp", "coflowopt.schedulers.dag.om_lp:run_om_lp",
                  "coflowopt.schedulers.dag.om_lp:OMLPParams", "offline", True, "dag",
                  "Tian et al.'s LP order, coflows one at a time by BNA (the O(m) baseline, "
                  "LP reconstructed)", factor="2m+1", objective="sum of weighted JCT",
                  multistage=True, job_objective=True, factor_metric="weighted_jct",
                  factor_assumes=("integer volumes",), streams=True,
                  supports="coflowopt.schedulers.dag.om_lp:om_lp_supports"),
    # -- fair scheduling (coflowopt.schedulers.fair) --
    SchedulerInfo("cofair", "coflowopt.schedulers.fair.cofair:run_cofair",
                  "coflowopt.schedulers.fair.cofair:CoFairParams", "offline", True, "fair",
                  "primal-dual sigma-order under slowdown deadlines r_j + E C_j^0 / phi_j "
                  "(E = E_MPS by default) + greedy allocation (CoFair, reconstructed)",
                  factor="4", objective="sum of weighted CCT (release 0)",
                  factor_metric="weighted_completion",
                  factor_assumes=("release 0", "single-stage"), streams=True),
    SchedulerInfo("utopia", "coflowopt.schedulers.fair.utopia:run_utopia",
                  "coflowopt.schedulers.fair.utopia:UtopiaParams", "online", True, "fair",
                  "Utopia-like (reconstructed): ascending fair completion C_j^fair of the "
                  "HUG/DRF equal-progress emulation + greedy allocation",
                  objective="average CCT with isolation against fair sharing (heuristic)",
                  multistage=True, streams=True),
    SchedulerInfo("static-progress",
                  "coflowopt.schedulers.fair.static_progress:run_static_progress",
                  "coflowopt.schedulers.fair.static_progress:StaticProgressParams", "online",
                  True, "fair",
                  "static progress (HUG/DRF-style): equal progress P = 1 / max_l sum_j d_lj "
                  "for every active coflow, leftover by per-flow max-min fair sharing",
                  objective="minimum progress guarantee (baseline)", multistage=True,
                  streams=True),
    SchedulerInfo("approximate", "coflowopt.schedulers.fair.approximate:run_approximate",
                  "coflowopt.schedulers.fair.approximate:ApproximateParams", "offline", True,
                  "fair",
                  "Shafiee-Ghaderi: ordering-LP order + non-preemptive list scheduling of "
                  "flows at full port rate (factor 5 with releases, 4 with all releases 0)",
                  factor="4", objective="sum of weighted CCT (release 0)",
                  factor_metric="weighted_completion",
                  factor_assumes=("release 0", "single-stage"), multistage=True),
    # -- Yosemite and IAOA (Zhang, Shi, Yin, Wang, Guo, 2017 draft; Wang et al., TPDS 2019):
    # the offline Alg. 1 order (its 2 bounds the relaxed order cost COS, not the realised
    # weighted CCT) and the online, information-agnostic Alg. 2 (no factor exists) --
    SchedulerInfo("yosemite", "coflowopt.schedulers.fair.yosemite:run_yosemite",
                  "coflowopt.schedulers.fair.yosemite:YosemiteParams", "offline", True, "fair",
                  "Yosemite Alg. 1: primal-dual concurrent-open-shop order (BSSI's step) + "
                  "priority water-filling; all releases 0",
                  factor="2", objective="relaxed order cost COS(gamma) (IWCCTM: concurrent "
                  "open shop, release 0), not the realised weighted CCT (<= 4 x OPT [C])",
                  supports="coflowopt.schedulers.fair.yosemite:yosemite_supports"),
    SchedulerInfo("iaoa", "coflowopt.schedulers.fair.iaoa:run_iaoa",
                  "coflowopt.schedulers.fair.iaoa:IAOAParams", "online", False, "fair",
                  "IAOA (Yosemite Alg. 2): weighted coflow-level least attained service, "
                  "re-sorted at arrivals, one common rate per coflow + max-min backfill",
                  objective="sum of weighted CCT (heuristic: no constant factor exists)",
                  multistage=True),
    # -- LP rounding, issue 32 items 1 and 3 (helper "round"): iterated rounding, LP flow order --
    # in dag/, beside the unit-slot machinery it reuses (SlotPlan, BNA's Konig colouring):
    # one family folder does not import another (tests/test_layering.py)
    SchedulerInfo("iterated-rounding",
                  f"{D}.iterated_rounding:run_iterated_rounding",
                  f"{D}.iterated_rounding:IteratedRoundingParams", "offline", True, "dag",
                  "Rohwedder-Schnaars (ICALP 2025), reconstructed: edge-level time-indexed LP "
                  "(or its interval-indexed form, lp='interval-indexed'), alpha-point "
                  "deadlines, Greedy and Beck-Fiala iterated-rounding edge "
                  "allocations, Konig matchings per slot, best of (the paper's 140/41 and 4.36: "
                  "reference lines only)",
                  factor="proven (our reconstruction) 4 x LP without releases, 5 x LP with "
                         "them, (2+eps) x LP asymptotically; on the interval-indexed LP-I "
                         "(grid ratio 1+eps): 4(1+eps) and 5+4eps x LP-I",
                  factor_metric="weighted_completion", factor_assumes=("single-stage",),
                  factor_source="C", factor_params=(("mode", "best_of"),),
                  supports=f"{D}.iterated_rounding:supports_iterated_rounding"),
    SchedulerInfo("lp-flow-order", f"{S}.lp_flow_order:run_lp_flow_order",
                  f"{S}.lp_flow_order:LPFlowOrderParams", "offline", True, "single",
                  "Chen (arXiv 2311.11296), reconstructed: flows ordered by their completion "
                  "in a time-indexed LP (with the LB cut; or its interval-indexed form, "
                  "lp='interval-indexed'), served greedily at full port rate "
                  "(Chen's claimed 3 and 2 + 1/LB: contested reference lines, broken by this "
                  "reconstruction on the spec's Ex 4)",
                  factor="proven (our reconstruction) 4 x LP without releases, 5 x LP with "
                         "them; on the interval-indexed LP-I (grid ratio 1+eps): 4(1+eps) and "
                         "5+4eps x LP-I",
                  factor_metric="weighted_completion", factor_assumes=("single-stage",),
                  factor_source="C",
                  supports=f"{S}.lp_flow_order:supports_lp_flow_order"),
    # -- learned (coflowopt.schedulers.learned) --
    # offline as shipped: its features (G-DM-BF's job order, instance-wide scaling) read jobs not
    # yet released
    SchedulerInfo("deepweave", "coflowopt.schedulers.learned.deepweave:run_deepweave",
                  "coflowopt.schedulers.learned.deepweave:DeepWeaveParams", "offline", True,
                  "learned", "DeepWeave: GNN priorities over the job DAGs, greedy order or "
                  "Policy Converter; shipped checkpoint: imitation of G-DM-BF / Sincronia and a "
                  "short fine-tuning, re-ranking at every epoch, reading the whole instance "
                  "(its checkpoint meta: deepweave_checkpoint_info()); 0.99-1.02x the better "
                  "heuristic on the held-out grid",
                  objective="average JCT (learned)", multistage=True, job_objective=True,
                  streams=True,
                  supports="coflowopt.schedulers.learned.deepweave:deepweave_supports"),
]
for _name, _clair, _summary, _aliases in (
        ("sebf", True, "CoflowSim's Varys: static effective bottleneck, MADD, backfill",
         ("varys",)),
        ("dark", False, "CoflowSim's Aalo: D-CLAS queues, per-flow equal split", ("aalo",)),
        ("fifo", False, "CoflowSim FIFO by admission", ()),
        ("scf", True, "CoflowSim SCF: smallest largest flow first", ()),
        ("ncf", False, "CoflowSim NCF: narrowest first, min(mappers, reducers)", ()),
        ("lcf", True, "CoflowSim LCF: lightest first, total bytes at insertion", ()),
        ("fair", False, "CoflowSim per-flow fair sharing", ()),
        ("pfp", True, "CoflowSim per-flow prioritization: shortest flow first", ()),
        ("a-sebf", False, "A-SEBF on CoflowSim: D-CLAS queues on bytes sent per receiver port",
         ("asebf",))):
    _TABLE.append(SchedulerInfo(_name, "coflowopt.schedulers.coflowsim_mode:run_"
                                + _name.replace("-", "_"), f"{C}:CoflowSimParams", "online",
                                _clair, "single", _summary, objective="average CCT (CoflowSim)",
                                semantics="coflowsim", aliases=_aliases, streams=True))

_REGISTRY: dict[tuple[str, str], SchedulerInfo] = {}
_ALIASES: dict[tuple[str, str], str] = {}


def _add(info: SchedulerInfo) -> None:
    key = (info.semantics, info.name.lower())
    if key in _REGISTRY or key in _ALIASES:
        raise ValueError(f"scheduler {info.name!r} ({info.semantics}) registered twice")
    _REGISTRY[key] = info
    for a in info.aliases:
        _ALIASES[(info.semantics, a.lower())] = info.name.lower()


for _info in _TABLE:
    _add(_info)


def registry(semantics: str | None = "fluid") -> dict[str, SchedulerInfo]:
    """The registered algorithms of ``semantics`` by name (a copy, sorted); ``semantics=None``:
    every entry, keyed ``"name"`` for fluid and ``"coflowsim:name"`` for the CoflowSim mode."""
    if semantics is not None and semantics not in SEMANTICS:
        raise ValueError(f"semantics must be one of {SEMANTICS}, got {semantics!r}")
    out = {}
    for (sem, name), info in sorted(_REGISTRY.items(),
                                    key=lambda kv: (SEMANTICS.index(kv[0][0]), kv[0][1])):
        if semantics is None:
            out[name if sem == "fluid" else f"{sem}:{name}"] = info
        elif sem == semantics:
            out[info.name] = info
    return out


def get(name: str, semantics: str = "fluid") -> SchedulerInfo:
    """The algorithm registered as ``name`` (case-insensitive; aliases too) in ``semantics``;
    ``KeyError`` lists the known names."""
    if semantics not in SEMANTICS:
        raise ValueError(f"semantics must be one of {SEMANTICS}, got {semantics!r}")
    key = name.lower()
    key = _ALIASES.get((semantics, key), key)
    try:
        return _REGISTRY[(semantics, key)]
    except KeyError:
        known = ", ".join(sorted(n for s, n in _REGISTRY if s == semantics)) or "(none)"
        raise KeyError(f"unknown scheduler {name!r} ({semantics}); known: {known}") from None


def _params_from_signature(func: Callable[..., Any], name: str) -> type:
    fields = []
    for p in inspect.signature(func).parameters.values():
        if p.kind is not p.KEYWORD_ONLY or p.name == "seed":
            continue
        tp = p.annotation if isinstance(p.annotation, type) else Any
        default = None if p.default is p.empty else p.default
        fields.append((p.name, tp, dataclasses.field(default=default)))
    cls_name = "".join(x.capitalize() for x in name.replace("-", "_").split("_")) + "Params"
    return dataclasses.make_dataclass(cls_name, fields, bases=(Params,), frozen=True)


def register(name: str, *, kind: str, clairvoyant: bool, factor: str | None = None,
             objective: str = "sum of weighted CCT", summary: str = "",
             factor_metric: str | None = "weighted_completion",
             factor_assumes: tuple[str, ...] = (), factor_source: str = "R",
             multistage: bool = False, family: str = "plugin", starts_after: bool = True,
             needs_starts_after: bool = False, needs_deadlines: bool = False,
             finishes_before: bool = False
             ) -> Callable[[Callable[..., Schedule]], Callable[..., Schedule]]:
    """Decorator for plugins: add ``func(instance, *, seed=None, **params) -> Schedule`` under
    ``name`` (fluid semantics).  Its keyword-only parameters become the parameter dataclass
    (annotated with a plain type: checked; otherwise unchecked).  ``multistage``: designed for
    job DAGs (:attr:`SchedulerInfo.job_objective`); ``starts_after=False``: refuse instances
    with precedence edges; ``finishes_before=True``: it honours Finishes-Before edges (else
    they are refused); ``factor_source``: ``"R"`` (the paper's factor) or ``"C"`` (ours)."""
    def deco(func: Callable[..., Schedule]) -> Callable[..., Schedule]:
        params_cls = _params_from_signature(func, name)

        def impl(instance: Instance, params: Params, sink: Any, *, seed: Any = None,
                 progress: Any = None) -> Any:
            return sink.outcome(func(instance, seed=seed, **params.to_dict()))

        doc = (func.__doc__ or "").strip().splitlines()
        info = SchedulerInfo(name, f"{func.__module__}:{func.__name__}", None, kind, clairvoyant,
                             family, summary or (doc[0] if doc else ""), factor=factor,
                             objective=objective, multistage=starts_after or multistage,
                             needs_starts_after=needs_starts_after,
                             needs_deadlines=needs_deadlines, job_objective=multistage,
                             factor_metric=factor_metric if factor else None,
                             factor_assumes=tuple(factor_assumes),
                             factor_source=factor_source,
                             finishes_before=finishes_before, _impl=impl,
                             _params=params_cls)
        _add(info)
        return func

    return deco


def unregister(name: str, semantics: str = "fluid") -> None:
    """Remove a plugin's entry (and its aliases); built-in entries stay."""
    key = (semantics, name.lower())
    info = _REGISTRY.get(key)
    if info is None:
        return
    if info in _TABLE:
        raise ValueError(f"scheduler {name!r} is built in; it cannot be removed")
    del _REGISTRY[key]
    for a in info.aliases:
        _ALIASES.pop((semantics, a.lower()), None)
