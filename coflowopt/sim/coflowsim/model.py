"""CoflowSim's instance transform: the trace as CoflowSim reads it, in MB and ms.

One mapper per distinct source port, one reducer per distinct destination port receiving the
sum of its flows (``Simulator.mergeTasksByRack``); each reducer's MB rounded up to whole MiB,
then to a multiple of the mapper count, and split evenly over the mappers
(``ReduceTask.roundToNearestNMB``: every flow a whole number of MiB, at least 1).  The static
keys CoflowSim fixes at insertion come with it: SEBF's ``alpha`` (Varys' effective bottleneck
Γ, Chowdhury, Zhong, Stoica, SIGCOMM 2014, with the map side at total bytes / M),
SCF's and NCF's keys, and the pseudo-deadlines of the backfill (start + isolated duration x
U[1, 2) drawn from ``java.util.Random(17)``, one draw per coflow in ``mergeTasksByRack``'s
order).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from coflowopt.model import Fabric, Instance
from coflowopt.params import Params
from coflowopt.sim.coflowsim.javafloat import JavaRandom

__all__ = ["MIB", "VOLUME_RTOL", "CoflowSimParams", "JobModel", "build_model",
           "coflowsim_instance", "horizon", "model_flows", "transformed"]

MIB = 1048576.0
#: the validator's relative volume slack in CoflowSim mode: it only covers the rounding of the
#: validator's own sums over a flow's segments
VOLUME_RTOL = 1e-12


@dataclass(frozen=True)
class CoflowSimParams(Params):
    """CoflowSim's constants (``Constants.java``, ``CoflowSim.java``) and the rule switches used
    by the ablation.  Defaults reproduce CoflowSim.

    ``epoch_ms``: admission epoch (10 x 1024 ms).  ``quantum_ms``: time step (8 ms, the time a
    port needs for 1 MiB).  ``round_volumes``: round reducers up to whole MiB and to a multiple
    of the mapper count.  ``pseudo_deadlines``: backfill in pseudo-deadline order (else in
    admission order).  ``static_keys``: the order keeps the key fixed at insertion (else the
    coflow-level orders are re-sorted at every event by the bottleneck of the bytes left, as
    Varys does).  ``seed``: the ``java.util.Random`` seed of the pseudo-deadlines.
    ``dark_queues``, ``dark_first_mib``, ``dark_factor``: D-CLAS queues.
    """

    epoch_ms: int = 10 * 1024
    quantum_ms: int = 8
    round_volumes: bool = True
    pseudo_deadlines: bool = True
    static_keys: bool = True
    seed: int = 17
    dark_queues: int = 10
    dark_first_mib: float = 10.0
    dark_factor: float = 10.0
    zero: float = 1e-3  # Constants.ZERO, bytes (and bps)

    def check(self) -> None:
        if self.quantum_ms < 1 or self.epoch_ms < self.quantum_ms:
            raise ValueError(f"CoflowSimParams: need 1 <= quantum_ms <= epoch_ms, got "
                             f"quantum_ms={self.quantum_ms}, epoch_ms={self.epoch_ms}")
        if self.epoch_ms % self.quantum_ms:
            raise ValueError(f"CoflowSimParams: epoch_ms ({self.epoch_ms}) must be a multiple "
                             f"of quantum_ms ({self.quantum_ms})")
        if self.dark_queues < 1 or self.dark_factor <= 1 or self.dark_first_mib <= 0:
            raise ValueError("CoflowSimParams: need dark_queues >= 1, dark_factor > 1, "
                             "dark_first_mib > 0")


@dataclass(frozen=True)
class JobModel:
    """CoflowSim's jobs (coflows) in its order, as CSR arrays: job -> reducers -> flows; bytes
    (not MB), the static keys and the pseudo-deadlines (ms)."""

    order: np.ndarray  # original coflow index per job, jobs in CoflowSim's (arrival) order
    arrival: np.ndarray
    red_ptr: np.ndarray  # job -> reducers
    red_rack: np.ndarray
    red_bytes: np.ndarray
    red_perrack: np.ndarray  # Job.shuffleBytesPerRack before the mapper rounding (LCF key)
    flow_ptr: np.ndarray  # reducer -> flows
    flow_src: np.ndarray
    flow_size: np.ndarray
    alpha: np.ndarray
    deadline: np.ndarray
    scf_key: np.ndarray
    ncf_key: np.ndarray
    n_in: int
    n_out: int


def _ceil_mib(b: np.ndarray, mult: np.ndarray) -> np.ndarray:
    """``ReduceTask.roundToNearestNMB``: truncate to whole bytes, round up to ``mult`` MiB."""
    tmp = b.astype(np.int64)  # (long) cast truncates
    unit = mult.astype(np.int64) * 1048576
    n = tmp // unit + (tmp % unit > 0)
    return (unit * n).astype(np.float64)


def _reducer_mb(vol: np.ndarray, n_map: int) -> float:
    """A reducer's MB from its flows: the trace value when all flows carry ``MB / M``."""
    from coflowopt.workloads.trace import reducer_total

    if vol.size == n_map and np.all(vol == vol[0]):
        try:
            return reducer_total(float(vol[0]), n_map)
        except ValueError:
            pass
    return float(vol.sum())


def _cat(xs: list[np.ndarray], dt: Any) -> np.ndarray:
    return np.concatenate(xs).astype(dt) if xs else np.zeros(0, dtype=dt)


def build_model(inst: Instance, params: CoflowSimParams) -> JobModel:
    """The jobs CoflowSim builds from ``inst`` (module docstring), sorted by arrival."""
    n = inst.n_coflows
    release = np.asarray(inst.release, dtype=np.float64)
    order = np.argsort(release, kind="stable")  # JobCollection.sortByStartTime is stable
    red_ptr = [0]
    red_rack: list[int] = []
    red_bytes: list[float] = []
    red_perrack: list[float] = []
    flow_ptr = [0]
    flow_src: list[np.ndarray] = []
    flow_size: list[np.ndarray] = []
    alpha = np.zeros(n)
    scf = np.zeros(n)
    ncf = np.zeros(n, dtype=np.int64)
    for j, c in enumerate(order):
        fl = inst.flows_of(int(c))
        src = inst.flow_src[fl]
        dst = inst.flow_dst[fl]
        vol = inst.flow_volume[fl].astype(np.float64)
        mappers = np.unique(src)
        reducers = np.unique(dst)
        m = int(mappers.size)
        mb = np.array([_reducer_mb(vol[dst == r], m) for r in reducers])
        raw = mb * MIB
        if params.round_volumes:
            per = _ceil_mib(raw, np.ones(reducers.size, dtype=np.int64))
            merged = _ceil_mib(per, np.full(reducers.size, max(m, 1), dtype=np.int64))
            fsize = np.maximum(merged / max(m, 1), MIB)
        else:
            per = raw
            merged = raw
            fsize = merged / max(m, 1)
        total = float(merged.sum()) if m else 0.0
        for r in range(reducers.size):
            red_rack.append(int(reducers[r]))
            red_bytes.append(float(merged[r]))
            red_perrack.append(float(per[r]))
            flow_src.append(mappers)
            flow_size.append(np.full(m, fsize[r]))
            flow_ptr.append(flow_ptr[-1] + m)
        red_ptr.append(len(red_rack))
        if m:
            # Job.calcAlphaDeadline: each mapper rack sends total / M, each reducer its bytes
            alpha[j] = max(total / m, float(merged.max()) if merged.size else 0.0)
            scf[j] = (float(merged.max()) if merged.size else 0.0) / m
            ncf[j] = min(m, int(reducers.size))
    rng = JavaRandom(params.seed)
    mult = np.ones(n)
    for j in range(n):  # Simulator.mergeTasksByRack: one draw per admitted coflow
        if red_ptr[j + 1] > red_ptr[j]:
            mult[j] = 1.0 + rng.next_double() * 1.0
    rack_bytes_per_s = 1024 * MIB / 8.0
    deadline = alpha / rack_bytes_per_s * mult * 1000
    return JobModel(
        order=order.astype(np.int64), arrival=release[order],
        red_ptr=np.array(red_ptr, dtype=np.int64), red_rack=np.array(red_rack, dtype=np.int64),
        red_bytes=np.array(red_bytes), red_perrack=np.array(red_perrack),
        flow_ptr=np.array(flow_ptr, dtype=np.int64), flow_src=_cat(flow_src, np.int64),
        flow_size=_cat(flow_size, np.float64), alpha=alpha, deadline=deadline, scf_key=scf,
        ncf_key=ncf, n_in=inst.fabric.ports, n_out=inst.fabric.ports,
    )



def model_flows(model: JobModel, n: int) -> tuple[np.ndarray, ...]:
    """CoflowSim's flows in the transformed instance's order (by original coflow): ``src``,
    ``dst``, ``volume`` (MB), ``coflow`` (int32, as the instance keeps them), and ``where``:
    per model flow, its index there."""
    nf_job = np.diff(model.flow_ptr[model.red_ptr])  # flows per job
    job_of_flow = np.repeat(np.arange(n, dtype=np.int32), nf_job)
    coflow = model.order.astype(np.int32)[job_of_flow]
    del job_of_flow
    perm = np.argsort(coflow, kind="stable")  # new flow k is model flow perm[k]
    where = np.empty_like(perm)
    where[perm] = np.arange(perm.size)
    red_of_flow = np.repeat(np.arange(model.red_rack.size, dtype=np.int32),
                            np.diff(model.flow_ptr))
    dst = model.red_rack.astype(np.int32)[red_of_flow[perm]]
    del red_of_flow
    return (model.flow_src.astype(np.int32)[perm], dst, model.flow_size[perm] / MIB,
            coflow[perm], where)


def transformed(inst: Instance, model: JobModel, start: np.ndarray,
                 flows: tuple[np.ndarray, ...] | None = None) -> tuple[Instance, np.ndarray]:
    """CoflowSim's flows as an instance in the original coflow order; returns it and, per
    model flow, its index there.  ``flows``: :func:`model_flows`' result, if already made."""
    n = inst.n_coflows
    src, dst, volume, coflow, where = flows if flows is not None else model_flows(model, n)
    release = np.empty(n)
    release[model.order] = start
    out = Instance.from_arrays(
        Fabric.uniform(inst.fabric.ports, 0.125), src, dst, volume, coflow,
        coflow_id=inst.coflow_id, coflow_release=release,
        coflow_weight=inst.coflow_weight, coflow_job=inst.coflow_job, n_coflows=n,
        job_id=inst.job_id, job_release=_job_release(inst, release),
        job_weight=inst.job_weight, n_jobs=inst.n_jobs, time_unit="ms",
    )
    return out, where


def _job_release(inst: Instance, release: np.ndarray) -> np.ndarray:
    out = np.full(inst.n_jobs, np.inf)
    np.minimum.at(out, np.asarray(inst.coflow_job), release)
    out[~np.isfinite(out)] = 0.0
    return out



def coflowsim_instance(instance: Instance, params: CoflowSimParams | None = None) -> Instance:
    """The instance CoflowSim actually simulates (rounded flows, in MB), releases unchanged."""
    params = params or CoflowSimParams()
    model = build_model(instance, params)
    inst, _ = transformed(instance, model, model.arrival)
    return inst


def horizon(model: JobModel, params: CoflowSimParams) -> float:
    """An estimate of a CoflowSim run's length in ms (as :func:`~coflowopt.sim.kernel.
    fluid_horizon`, on the rounded flows at 1 MiB per quantum per port)."""
    if model.arrival.size == 0 or model.flow_size.size == 0:
        return 0.0
    rate = MIB / params.quantum_ms  # bytes per ms per port
    dst = model.red_rack[np.repeat(np.arange(model.red_rack.size), np.diff(model.flow_ptr))]
    busy = max(np.bincount(model.flow_src, model.flow_size).max(),
               np.bincount(dst, model.flow_size).max()) / rate
    spread = model.flow_size.sum() / (rate * max(model.n_in, 1))
    return max(float(model.arrival.max()) + spread, float(model.arrival.min()) + busy)

