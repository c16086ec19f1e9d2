"""DeepWeave (Sun, Guo, Wang, Li, Lan, Hu, IJCAI 2020): a GNN and a policy network give every
coflow of a job DAG a priority; the priorities become a schedule (the paper's
Sec. 3; tags: [R] recovered from the paper, [C] reconstructed by us, docs/families/index.md).

Inference is numpy only (:mod:`.network`) from a small checkpoint (:mod:`.checkpoint`; the
shipped one by default), so the base install schedules with it; torch is needed only to train.
The shipped checkpoint (``data/deepweave.npz``, format 2, ``trained=True``; issue 30) is an
instance-wide network (feature set ``"v2"`` with the heuristics' scores, ``head="attr"``)
pre-trained by imitation of the better of G-DM-BF's and Sincronia's orders and fine-tuned
briefly; its ``meta.run`` makes it re-rank at every decision epoch over all jobs
(``rerank="events", across="global"``).  It reads the whole instance (G-DM-BF's job order,
instance-wide normalisation), so with it the scheduler is offline, like G-DM-BF.  On the
held-out grid (docs/deepweave-protocol.md) it is 0.99-1.02x the better heuristic (its meta has
the numbers).  A format-1 checkpoint (per-job, ``head="policy"``) runs as before.

Steps of :func:`run_deepweave`:

1. per job DAG, the node features (:func:`.features.job_batches`) and the priorities
   (:func:`.network.forward`, higher = served first; greedy evaluation, no sampling, so the
   run is deterministic and ``seed`` is unused);
2. one order over all coflows [C], ``across``:

   * ``"arrival"`` (default): jobs by arrival (job release, then position), inside a job by
     priority.  Why: a priority is the policy's output for one job DAG (training episodes
     score one job's completion, Sec. 3.2), so the values of two jobs are not on one scale;
     arrival order across jobs is a plain FIFO [C], and the greedy allocator is
     work-conserving, so a later job still uses whatever the earlier ones leave free;
   * ``"global"``: one sort of all priorities (ties: position);

3. the schedule, ``converter``:

   * ``"greedy"`` (default): the order through the shared
     :func:`coflowopt.sim.drive.order_schedule` (order-preserving greedy allocation, the
     compiled engine, streams into the validator with ``check``);
   * ``"aligned"``: DeepWeave's Policy Converter (Algorithm 2, :mod:`.converter`; its
     semantics are our [C] reconstruction): non-preemptive per-port timelines with each
     coflow's flows aligned to end with its largest one.

``rerank="events"``: the priorities are recomputed at every decision epoch (a coflow becomes
ready or completes, a job is released) on the current state (remaining volumes, status flags:
:func:`.features.job_batches` with ``state=``) and the ready coflows re-ordered by them with the
same ``across`` rule; only with ``converter="greedy"``.  It runs on the compiled decision-epoch
stepper (:class:`coflowopt.sim.stepper.Stepper`: the greedy allocation between epochs is
compiled, Python is re-entered once per epoch) and only the jobs that have a ready coflow are
re-scored.  ``engine="fast"`` runs the same re-ranking as a ``rerank`` callback on the open
compiled engine (``order_schedule(rerank=...)``, which returns to Python at arrivals and
departures only) and ``engine="reference"`` through the reference engine: the same schedule
(tested), the latter kept as the cross-check.

Online (feature set "v1"): a job's static priorities depend on its own DAG only (features as
at its arrival), so they can be computed when the job arrives; ``clairvoyant``: it reads flow
volumes.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

from coflowopt.model import Instance
from coflowopt.params import Params
from coflowopt.schedulers.learned.checkpoint import default_checkpoint_path, load_checkpoint
from coflowopt.schedulers.learned.converter import policy_converter
from coflowopt.schedulers.learned.features import (
    DagState,
    gdm_positions,
    instance_batch,
    job_batches,
)
from coflowopt.schedulers.learned.live import LiveFeatures
from coflowopt.schedulers.learned.network import DeepWeaveConfig, forward
from coflowopt.sim.drive import order_schedule
from coflowopt.sim.sink import Outcome, RateSink
from coflowopt.sim.stepper import Stepper

__all__ = ["DeepWeaveParams", "deepweave_checkpoint_info", "deepweave_priorities",
           "deepweave_supports", "run_deepweave"]


@dataclass(frozen=True)
class DeepWeaveParams(Params):
    """``checkpoint``: path of a ``.npz`` checkpoint (``None``: the shipped one);
    ``converter``: ``"greedy"`` (shared order-preserving allocation) or ``"aligned"`` (the
    Policy Converter, Algorithm 2); ``rerank``: ``"static"`` (priorities once per job) or
    ``"events"`` (recomputed at every decision epoch; greedy only);
    ``across``: ``"arrival"`` (jobs by arrival, inside a job by priority) or ``"global"`` (one
    sort of all priorities); ``engine`` (``rerank="events"`` only): ``"stepper"`` (the
    compiled decision-epoch stepper), ``"fast"`` (a callback on the compiled engine) or
    ``"reference"`` (the reference engine's callback, the cross-check).  ``rerank``,
    ``across`` and ``engine`` left at ``None`` take the checkpoint's ``meta.run`` (what the
    policy was trained for; ``rerank`` only with the greedy converter), else ``"static"``,
    ``"arrival"`` and ``"stepper"``."""

    checkpoint: str | None = None
    converter: Literal["greedy", "aligned"] = "greedy"
    rerank: Literal["static", "events"] | None = None
    across: Literal["arrival", "global"] | None = None
    engine: Literal["stepper", "fast", "reference"] | None = None

    def check(self) -> None:
        if self.rerank == "events" and self.converter != "greedy":
            raise ValueError("DeepWeaveParams.rerank: 'events' re-ranks in the simulator and "
                             "needs converter='greedy' (the aligned converter is one plan)")


_CACHE: dict[tuple[str, int, int], tuple[dict[str, np.ndarray], DeepWeaveConfig,
                                         dict[str, Any]]] = {}


def _load(path: str | os.PathLike[str] | None
          ) -> tuple[dict[str, np.ndarray], DeepWeaveConfig, dict[str, Any], Path]:
    p = default_checkpoint_path() if path is None else Path(path)
    try:
        st = p.stat()
    except OSError:
        raise FileNotFoundError(f"DeepWeave checkpoint {p}: file not found") from None
    key = (str(p.resolve()), st.st_mtime_ns, st.st_size)
    if key not in _CACHE:
        params, cfg, meta = load_checkpoint(p)
        for a in params.values():
            a.setflags(write=False)
        _CACHE.clear()  # one checkpoint at a time is what a run uses
        _CACHE[key] = (params, cfg, meta)
    params, cfg, meta = _CACHE[key]
    return params, cfg, meta, p


def deepweave_checkpoint_info(checkpoint: str | os.PathLike[str] | None = None
                              ) -> dict[str, Any]:
    """The checkpoint's metadata (``trained``: ``False`` for the untrained placeholder;
    ``seed``, ``workload``, ``iterations``, ``date``, ``format``, ...) with ``path`` and
    ``config``; loaded when asked, never at import."""
    _, cfg, meta, p = _load(checkpoint)
    return {**meta, "path": str(p), "config": cfg.to_dict()}


def deepweave_supports(instance: Instance) -> str | None:
    """Why DeepWeave cannot run ``instance`` (one line), or ``None``: it handles Starts-After
    edges only."""
    fb = instance.finishes_before
    if fb.shape[0]:
        c = int(fb[0, 1])
        return (f"it handles Starts-After edges only; job "
                f"{instance.job_id[int(instance.coflow_job[c])]} has Finishes-Before edges "
                f"(into coflow {instance.coflow_id[c]})")
    return None


def _check_sizes(instance: Instance, config: DeepWeaveConfig, path: Path) -> None:
    if config.head == "attr":
        return  # per-node scores: no input width to fit (DeepWeaveConfig's v_max)
    sizes = np.bincount(instance.coflow_job, minlength=instance.n_jobs)
    big = np.flatnonzero(sizes > config.v_max)
    if big.size:
        j = int(big[0])
        raise ValueError(f"deepweave: job {instance.job_id[j]} has {sizes[j]} coflows, more "
                         f"than the checkpoint's v_max = {config.v_max} ({path})")


def deepweave_priorities(instance: Instance, params: dict[str, np.ndarray],
                         config: DeepWeaveConfig, state: DagState | None = None
                         ) -> np.ndarray:
    """``(C,)`` priority of every coflow (higher = served first), each job's from its own DAG
    at ``state`` (``None``: each job as at its arrival)."""
    return _priorities(instance, params, config, state, None)


def _priorities(instance: Instance, params: dict[str, np.ndarray], config: DeepWeaveConfig,
                state: Any, jobs: np.ndarray | None, gdm: np.ndarray | None = None,
                live: LiveFeatures | None = None) -> np.ndarray:
    """Priorities of the jobs flagged in ``jobs`` (``None``: all); 0 elsewhere.  ``gdm``: the
    static G-DM-BF rank of feature set ``"v2"`` when the caller has it; ``live``: the run's
    :class:`.live.LiveFeatures` (``state`` a :class:`.features.DagState`), which keeps the
    per-coflow sums between states."""
    out = np.zeros(instance.n_coflows)
    if config.head == "attr":  # per-node priorities: one pass over the whole instance
        b = (instance_batch(instance, state=state, feature_set=config.feature_set, gdm=gdm)
             if live is None else live.instance_batch(state))
        out[:] = forward(params, config, b)
        return out
    batches = (job_batches(instance, state=state, feature_set=config.feature_set, gdm=gdm)
               if live is None else live.job_batches(state))
    for b in batches:
        if b.n_nodes and (jobs is None or jobs[b.job]):
            out[b.coflows] = forward(params, config, b)
    return out


def _events_on_stepper(instance: Instance, params: dict[str, np.ndarray],
                       config: DeepWeaveConfig, across: str, sink: RateSink,
                       progress: Any) -> Outcome:
    """``rerank="events"`` on the compiled stepper: at every epoch, the ready coflows' jobs
    re-scored on the stepper's state and the ready coflows ranked by :func:`_order`."""
    inst = instance
    st = Stepper(inst)
    state = st.reset()
    key = np.zeros(inst.n_coflows)
    n_jobs = inst.n_jobs
    gdm = gdm_positions(inst) if config.feature_set == "v2" else None  # static: once
    live = LiveFeatures(inst, config.feature_set, gdm)
    while not st.done:
        ready = st.ready
        jobs = np.zeros(n_jobs, dtype=bool)
        jobs[inst.coflow_job[ready]] = True
        pri = _priorities(inst, params, config, state, jobs, gdm, live)
        key[_order(inst, pri, ready, across)] = np.arange(ready.size, dtype=np.float64)
        st.step(key)
        state = st.state
        if progress is not None:
            progress(int(np.count_nonzero(state.coflow_done)), inst.n_coflows)
    out = st.validate(sink.check) if sink.stream else st.schedule()
    return sink.outcome(out, meta={"engine": "stepper", "steps": st.n_steps})


def _order(instance: Instance, priority: np.ndarray, coflows: np.ndarray, across: str
           ) -> np.ndarray:
    """``coflows`` sorted by the cross-job rule (first served first)."""
    if across == "global":
        keys: tuple[np.ndarray, ...] = (coflows, -priority[coflows])
    else:
        job = instance.coflow_job[coflows]
        keys = (coflows, -priority[coflows], job, instance.job_release[job])
    return coflows[np.lexsort(keys)]


def run_deepweave(instance: Instance, params: DeepWeaveParams, sink: RateSink, *,
                  seed: Any = None, progress: Any = None) -> Outcome:
    """DeepWeave: priorities per job DAG from the checkpoint's networks, then the greedy
    order-to-schedule path or the Policy Converter (module docstring).  Deterministic
    (``seed`` unused: evaluation is greedy)."""
    p = params
    why = deepweave_supports(instance)
    if why is not None:
        raise ValueError(f"deepweave: {why}")
    weights, cfg, meta, path = _load(p.checkpoint)
    _check_sizes(instance, cfg, path)
    run = meta.get("run", {})
    # the checkpoint's rerank is a default for the greedy path; the aligned converter is one plan
    rerank = p.rerank or (run.get("rerank", "static") if p.converter == "greedy" else "static")
    across = p.across or run.get("across", "arrival")
    engine = p.engine or run.get("engine", "stepper")
    if rerank == "events" and p.converter != "greedy":
        DeepWeaveParams(converter=p.converter, rerank="events")  # raises, naming the field
    info = {"scheduler": "deepweave",
            "params": {"checkpoint": p.checkpoint, "converter": p.converter,
                       "rerank": rerank, "across": across, "engine": engine},
            "checkpoint": str(path), "trained": bool(meta["trained"])}
    if rerank == "events" and engine == "stepper":
        return _events_on_stepper(instance, weights, cfg, across, sink,
                                  progress).with_meta(info)
    elif rerank == "events":
        gdm = gdm_positions(instance) if cfg.feature_set == "v2" else None
        # the per-coflow sums kept between events: a state costs the coflows that changed,
        # not every flow of the instance (issue 28)
        live = LiveFeatures(instance, cfg.feature_set, gdm)

        def rerank(view: Any) -> np.ndarray:
            pri = _priorities(instance, weights, cfg, live.state(view), None, gdm, live)
            return _order(instance, pri, np.asarray(view.coflows, dtype=np.int64), across)

        out = order_schedule(instance, rerank=rerank, engine=engine, check=sink.check,
                             progress=progress)
    else:
        pri = deepweave_priorities(instance, weights, cfg)
        order = _order(instance, pri, np.arange(instance.n_coflows), across)
        if p.converter == "aligned":
            out = policy_converter(instance, order=order, progress=progress)
        else:
            out = order_schedule(instance, order=order, check=sink.check, progress=progress)
    return sink.outcome(out, meta=info)
