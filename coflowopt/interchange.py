"""The JSON interchange format for instances and schedules (``shared/DESIGN.md``).

Column-wise JSON, gzipped when the file name ends in ``.gz``::

    instance: {"format": "coflowopt-instance/1", "time_unit": "ms" | "unit",
               "ports": m, "capacity_in": [...], "capacity_out": [...],
               "flows":   {"src": [...], "dst": [...], "volume": [...], "coflow": [...]},
               "coflows": {"id": [...], "release": [...], "weight": [...], "job": [...]},
               "jobs":    {"id": [...], "release": [...], "weight": [...], "deadline": [...|null]},
               "starts_after": [[pred, succ], ...]}
    schedule: {"format": "coflowopt-schedule/1", "breakpoints": [t0, ..., tK],
               "intervals": [{"flows": [...], "rates": [...]}, ... K entries]}

Indices are 0-based positions; ``id`` columns hold the user's labels; rates are volume per time
unit.  This module adds one field, ``finishes_before`` (same form as ``starts_after``), written
only when the instance has such edges.  Fields may be added, never renamed.
"""

from __future__ import annotations

import gzip
import json
import math
import os
from pathlib import Path
from typing import Any

import numpy as np

from coflowopt.model import Fabric, Instance, InstanceError
from coflowopt.schedule import Schedule, ScheduleError

__all__ = [
    "INSTANCE_FORMAT",
    "SCHEDULE_FORMAT",
    "InterchangeError",
    "instance_from_dict",
    "instance_to_dict",
    "load_instance",
    "load_schedule",
    "save_instance",
    "save_schedule",
    "schedule_from_dict",
    "schedule_to_dict",
]

INSTANCE_FORMAT = "coflowopt-instance/1"
SCHEDULE_FORMAT = "coflowopt-schedule/1"


class InterchangeError(ValueError):
    """A JSON document that is not a valid instance or schedule; names the file and field."""


def _labels(a: np.ndarray) -> list[Any]:
    return a.tolist()


def instance_to_dict(instance: Instance) -> dict[str, Any]:
    """The instance as a JSON-ready dict."""
    inst = instance
    d: dict[str, Any] = {
        "format": INSTANCE_FORMAT,
        "time_unit": inst.time_unit,
        "ports": inst.ports,
        "capacity_in": inst.fabric.capacity_in.tolist(),
        "capacity_out": inst.fabric.capacity_out.tolist(),
        "flows": {
            "src": inst.flow_src.tolist(),
            "dst": inst.flow_dst.tolist(),
            "volume": inst.flow_volume.tolist(),
            "coflow": inst.flow_coflow.tolist(),
        },
        "coflows": {
            "id": _labels(inst.coflow_id),
            "release": inst.coflow_release.tolist(),
            "weight": inst.coflow_weight.tolist(),
            "job": inst.coflow_job.tolist(),
        },
        "jobs": {
            "id": _labels(inst.job_id),
            "release": inst.job_release.tolist(),
            "weight": inst.job_weight.tolist(),
            "deadline": [None if math.isnan(x) else x for x in inst.job_deadline.tolist()],
        },
        "starts_after": inst.starts_after.tolist(),
    }
    if inst.finishes_before.size:
        d["finishes_before"] = inst.finishes_before.tolist()
    return d


def _get(d: Any, key: str, where: str) -> Any:
    if not isinstance(d, dict):
        raise InterchangeError(f"{where}: expected an object")
    if key not in d:
        raise InterchangeError(f"{where}: missing field '{key}'")
    return d[key]


def _column(d: Any, key: str, where: str) -> list[Any]:
    v = _get(d, key, where)
    if not isinstance(v, list):
        raise InterchangeError(f"{where}.{key}: expected a list")
    return v


def instance_from_dict(d: dict[str, Any], *, source: str = "<dict>") -> Instance:
    """Build an instance from the dict form; errors name ``source`` and the field."""
    fmt = _get(d, "format", source)
    if fmt != INSTANCE_FORMAT:
        raise InterchangeError(f"{source}: field 'format' is {fmt!r}, expected {INSTANCE_FORMAT!r}")
    flows = _get(d, "flows", source)
    coflows = _get(d, "coflows", source)
    jobs = _get(d, "jobs", source)
    deadline = [math.nan if x is None else x for x in _column(jobs, "deadline", f"{source}: jobs")]
    ports = _get(d, "ports", source)
    try:
        fabric = Fabric(ports, _get(d, "capacity_in", source), _get(d, "capacity_out", source))
        return Instance.from_arrays(
            fabric,
            np.asarray(_column(flows, "src", f"{source}: flows"), dtype=np.int64),
            np.asarray(_column(flows, "dst", f"{source}: flows"), dtype=np.int64),
            np.asarray(_column(flows, "volume", f"{source}: flows"), dtype=np.float64),
            np.asarray(_column(flows, "coflow", f"{source}: flows"), dtype=np.int64),
            coflow_id=np.asarray(_column(coflows, "id", f"{source}: coflows"), dtype=object),
            coflow_release=_column(coflows, "release", f"{source}: coflows"),
            coflow_weight=_column(coflows, "weight", f"{source}: coflows"),
            coflow_job=np.asarray(_column(coflows, "job", f"{source}: coflows"), dtype=np.int64),
            n_coflows=len(_column(coflows, "id", f"{source}: coflows")),
            job_id=np.asarray(_column(jobs, "id", f"{source}: jobs"), dtype=object),
            job_release=_column(jobs, "release", f"{source}: jobs"),
            job_weight=_column(jobs, "weight", f"{source}: jobs"),
            job_deadline=deadline,
            n_jobs=len(_column(jobs, "id", f"{source}: jobs")),
            starts_after=_get(d, "starts_after", source),
            finishes_before=d.get("finishes_before"),
            time_unit=_get(d, "time_unit", source),
        )
    except (InstanceError, TypeError, ValueError) as exc:
        if isinstance(exc, InterchangeError):
            raise
        raise InterchangeError(f"{source}: {exc}") from None


def schedule_to_dict(schedule: Schedule) -> dict[str, Any]:
    """The schedule as a JSON-ready dict (one entry per interval)."""
    ptr, flow, rate = schedule.per_interval()
    fl, rt = flow.tolist(), rate.tolist()
    return {
        "format": SCHEDULE_FORMAT,
        "breakpoints": schedule.breakpoints.tolist(),
        "intervals": [{"flows": fl[a:b], "rates": rt[a:b]}
                      for a, b in zip(ptr[:-1].tolist(), ptr[1:].tolist(), strict=True)],
    }


def schedule_from_dict(d: dict[str, Any], *, source: str = "<dict>") -> Schedule:
    """Build a schedule from the dict form; errors name ``source`` and the field."""
    fmt = _get(d, "format", source)
    if fmt != SCHEDULE_FORMAT:
        raise InterchangeError(f"{source}: field 'format' is {fmt!r}, expected {SCHEDULE_FORMAT!r}")
    bps = _column(d, "breakpoints", source)
    ivs = _column(d, "intervals", source)
    pairs = []
    for k, iv in enumerate(ivs):
        where = f"{source}: intervals[{k}]"
        pairs.append((_column(iv, "flows", where), _column(iv, "rates", where)))
    try:
        return Schedule.from_intervals(bps, pairs)
    except (ScheduleError, TypeError, ValueError) as exc:
        raise InterchangeError(f"{source}: {exc}") from None


def _open(path: Path, mode: str) -> Any:
    if path.suffix == ".gz":
        return gzip.open(path, mode + "t", encoding="utf-8")
    return open(path, mode, encoding="utf-8")


def _dump(obj: dict[str, Any], path: str | os.PathLike[str]) -> None:
    p = Path(path)
    with _open(p, "w") as fh:
        json.dump(obj, fh, separators=(",", ":"), allow_nan=False)


def _load(path: str | os.PathLike[str]) -> tuple[dict[str, Any], str]:
    p = Path(path)
    try:
        with _open(p, "r") as fh:
            return json.load(fh), str(p)
    except json.JSONDecodeError as exc:
        raise InterchangeError(f"{p}: line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        if isinstance(exc, FileNotFoundError):
            raise
        raise InterchangeError(f"{p}: cannot read ({exc})") from None


def save_instance(instance: Instance, path: str | os.PathLike[str]) -> None:
    """Write ``instance`` as JSON (gzip when ``path`` ends in ``.gz``)."""
    _dump(instance_to_dict(instance), path)


def load_instance(path: str | os.PathLike[str]) -> Instance:
    """Read an instance written by :func:`save_instance` (or by any tool)."""
    d, src = _load(path)
    return instance_from_dict(d, source=src)


def save_schedule(schedule: Schedule, path: str | os.PathLike[str]) -> None:
    """Write ``schedule`` as JSON (gzip when ``path`` ends in ``.gz``)."""
    _dump(schedule_to_dict(schedule), path)


def load_schedule(path: str | os.PathLike[str]) -> Schedule:
    """Read a schedule written by :func:`save_schedule` (or by any tool)."""
    d, src = _load(path)
    return schedule_from_dict(d, source=src)
