"""The JSON interchange format for instances and schedules (``shared/DESIGN.md``).

Column-wise JSON, gzipped when the file name ends in ``.gz``::

    instance: {"format": "coflowopt-instance/1", "time_unit": "ms" | "unit",
               "ports": m, "capacity_in": [...], "capacity_out": [...],
               "flows":   {"src": [...], "dst": [...], "volume": [...], "coflow": [...]},
               "coflows": {"id": [...], "release": [...], "weight": [...], "job": [...]},
               "jobs":    {"id": [...], "release": [...], "weight": [...], "deadline": [...|null]},
               "starts_after": [[pred, succ], ...]}
    schedule: {"format": "coflowopt-schedule/1", "breakpoints": [t0, ..., tK],
               "segments": {"flow": [...], "first": [...], "last": [...], "rate": [...]}}
       or      {"format": "coflowopt-schedule/1", "breakpoints": [t0, ..., tK],
               "intervals": [{"flows": [...], "rates": [...]}, ... K entries]}

Indices are 0-based positions; ``id`` columns hold the user's labels; rates are volume per time
unit.  This module adds two fields: ``finishes_before`` (same form as ``starts_after``), written
only when the instance has such edges, and a schedule's ``meta`` (its provenance: the
JSON-representable entries of :attr:`Schedule.meta`).  Fields may be added, never renamed.

A schedule is written in the sparse *segments* form by default (flow ``flow[i]`` runs at
``rate[i]`` during intervals ``first[i] .. last[i]-1``: the size follows the rate changes, not
intervals x active flows); ``form="intervals"`` writes one entry per interval.  The reader takes
either.  Writing is streamed: the JSON text is formatted from the numpy arrays a chunk at a time
(``repr`` of each float, which reads back bit-identical) into a temporary file beside the target,
renamed over it only once complete, so an interrupted write never leaves a truncated file.
"""

from __future__ import annotations

import contextlib
import gzip
import itertools
import json
import math
import os
import secrets
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from coflowopt.model import Fabric, Instance, InstanceError
from coflowopt.schedule import Schedule, ScheduleError

__all__ = [
    "INSTANCE_FORMAT",
    "SCHEDULE_FORMAT",
    "SCHEDULE_FORMS",
    "InterchangeError",
    "instance_from_dict",
    "instance_to_dict",
    "load_instance",
    "load_schedule",
    "os_error_text",
    "output_problem",
    "save_instance",
    "save_schedule",
    "schedule_from_dict",
    "schedule_json_chunks",
    "schedule_to_dict",
    "write_atomic",
    "write_probe",
]

INSTANCE_FORMAT = "coflowopt-instance/1"
SCHEDULE_FORMAT = "coflowopt-schedule/1"
SCHEDULE_FORMS = ("segments", "intervals")
"""The two forms of a schedule file: sparse segments (written by default) and per interval."""

_CHUNK = 250_000  # numbers formatted per piece of a streamed write


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

    def num(group: Any, name: str, key: str, *, integer: bool = False) -> np.ndarray:
        # a number written as text ("12") is an error naming its place, never coerced
        return _numbers(_column(group, key, f"{source}: {name}"), f"{source}: {name}.{key}",
                        integer=integer)

    def capacity(key: str) -> Any:
        v = _get(d, key, source)
        if isinstance(v, list):
            return _numbers(v, f"{source}: {key}", integer=False)
        if type(v) is bool or not isinstance(v, (int, float)):
            raise InterchangeError(f"{source}: {key}: expected a number or a list of numbers, "
                                   f"got {_short(v)}")
        return v

    try:
        fabric = Fabric(ports, capacity("capacity_in"), capacity("capacity_out"))
        return Instance.from_arrays(
            fabric,
            num(flows, "flows", "src", integer=True),
            num(flows, "flows", "dst", integer=True),
            num(flows, "flows", "volume"),
            num(flows, "flows", "coflow", integer=True),
            coflow_id=np.asarray(_column(coflows, "id", f"{source}: coflows"), dtype=object),
            coflow_release=num(coflows, "coflows", "release"),
            coflow_weight=num(coflows, "coflows", "weight"),
            coflow_job=num(coflows, "coflows", "job", integer=True),
            n_coflows=len(_column(coflows, "id", f"{source}: coflows")),
            job_id=np.asarray(_column(jobs, "id", f"{source}: jobs"), dtype=object),
            job_release=num(jobs, "jobs", "release"),
            job_weight=num(jobs, "jobs", "weight"),
            job_deadline=_numbers(deadline, f"{source}: jobs.deadline", integer=False),
            n_jobs=len(_column(jobs, "id", f"{source}: jobs")),
            starts_after=_get(d, "starts_after", source),
            finishes_before=d.get("finishes_before"),
            time_unit=_get(d, "time_unit", source),
        )
    except (InstanceError, TypeError, ValueError) as exc:
        if isinstance(exc, InterchangeError):
            raise
        raise InterchangeError(f"{source}: {exc}") from None


def _check_form(form: str) -> None:
    if form not in SCHEDULE_FORMS:
        raise ValueError(f"schedule form {form!r}: expected one of {', '.join(SCHEDULE_FORMS)}")


def schedule_to_dict(schedule: Schedule, form: str = "intervals") -> dict[str, Any]:
    """The schedule as a JSON-ready dict: one entry per interval (``form="intervals"``, the
    default here) or the sparse segment columns (``form="segments"``, what
    :func:`save_schedule` writes by default).  For a large schedule prefer
    :func:`save_schedule` or :func:`schedule_json_chunks`, which never build the lists."""
    _check_form(form)
    if form == "segments":
        s = schedule
        return {
            "format": SCHEDULE_FORMAT,
            "breakpoints": s.breakpoints.tolist(),
            "segments": {"flow": s.flow.tolist(), "first": s.first.tolist(),
                         "last": s.last.tolist(), "rate": s.rate.tolist()},
        }
    ptr, flow, rate = schedule.per_interval()
    fl, rt = flow.tolist(), rate.tolist()
    return {
        "format": SCHEDULE_FORMAT,
        "breakpoints": schedule.breakpoints.tolist(),
        "intervals": [{"flows": fl[a:b], "rates": rt[a:b]}
                      for a, b in zip(ptr[:-1].tolist(), ptr[1:].tolist(), strict=True)],
    }


# -- streamed writing ---------------------------------------------------------------------------


def _join(a: np.ndarray) -> str:
    """Comma-separated JSON numbers: ``repr`` of each float (shortest text that reads back
    bit-identical), ``str`` of each integer."""
    return ",".join(map(repr if a.dtype.kind == "f" else str, a.tolist()))


def _array_chunks(a: np.ndarray, chunk: int) -> Iterator[str]:
    """A JSON array of ``a``, formatted ``chunk`` numbers at a time."""
    yield "["
    for j in range(0, a.size, chunk):
        yield ("," if j else "") + _join(a[j:j + chunk])
    yield "]"


def _meta_json(meta: dict[str, Any]) -> str | None:
    """``meta`` as a JSON object, keeping only the entries JSON can represent exactly."""
    parts = []
    for k, v in meta.items():
        if not isinstance(k, str):
            continue
        try:
            parts.append(json.dumps(k) + ":" + json.dumps(v, separators=(",", ":"),
                                                          allow_nan=False))
        except (TypeError, ValueError):
            continue
    return "{" + ",".join(parts) + "}" if parts else None


def _interval_chunks(s: Schedule, chunk: int) -> Iterator[str]:
    """The ``intervals`` array, a block of intervals (about ``chunk`` entries) at a time.

    The same text as ``json.dumps`` of :func:`schedule_to_dict`, without building the
    per-interval listing: segments enter a block when it reaches their ``first`` interval and
    are carried into the next one while their ``last`` lies beyond it.
    """
    K = s.n_intervals
    active = np.cumsum(np.bincount(s.first, minlength=K + 1)
                       - np.bincount(s.last, minlength=K + 1))[:K]
    ptr = np.zeros(K + 1, dtype=np.int64)
    np.cumsum(active, out=ptr[1:])
    order = np.argsort(s.first, kind="stable")
    first_sorted = s.first[order]
    carry = np.zeros(0, dtype=np.int64)
    pos, k0 = 0, 0
    yield "["
    while k0 < K:
        k1 = int(np.searchsorted(ptr, ptr[k0] + chunk, side="right")) - 1
        k1 = min(max(k1, k0 + 1), K)
        pos1 = int(np.searchsorted(first_sorted, k1, side="left"))
        segs = np.sort(np.concatenate([carry, order[pos:pos1]]))
        pos = pos1
        lo = np.maximum(s.first[segs], k0)
        lens = np.minimum(s.last[segs], k1) - lo
        starts = np.cumsum(lens) - lens
        rep = np.repeat(segs, lens)
        kk = np.repeat(lo - starts, lens) + np.arange(rep.size)
        o = np.lexsort((s.flow[rep], kk))
        rep = rep[o]
        fl = list(map(str, s.flow[rep].tolist()))
        rt = list(map(repr, s.rate[rep].tolist()))
        bounds = (ptr[k0:k1 + 1] - ptr[k0]).tolist()
        yield ("," if k0 else "") + ",".join(
            '{"flows":[' + ",".join(fl[a:b]) + '],"rates":[' + ",".join(rt[a:b]) + "]}"
            for a, b in itertools.pairwise(bounds))
        carry = segs[s.last[segs] > k1]
        k0 = k1
    yield "]"


def schedule_json_chunks(schedule: Schedule, *, form: str = "segments",
                         chunk: int = _CHUNK) -> Iterator[str]:
    """The JSON text of ``schedule`` as consecutive pieces, formatted from its arrays about
    ``chunk`` numbers at a time (what :func:`save_schedule` writes).

    ``form``: ``"segments"`` (sparse, the default) or ``"intervals"``.  Floats are written as
    ``repr`` gives them, so reading back yields bit-identical arrays.  Raises
    :class:`InterchangeError` (before yielding anything) for a rate JSON cannot hold (NaN or
    infinite).
    """
    _check_form(form)
    if chunk < 1:
        raise ValueError(f"chunk must be >= 1, got {chunk}")
    s = schedule
    bad = np.flatnonzero(~np.isfinite(s.rate))
    if bad.size:
        i = int(bad[0])
        raise InterchangeError(f"cannot write the schedule: segment {i} (flow {s.flow[i]}) has "
                               f"rate {s.rate[i]}, which JSON cannot hold")
    head = '{"format":' + json.dumps(SCHEDULE_FORMAT)
    meta = _meta_json(s.meta)
    if meta is not None:
        head += ',"meta":' + meta
    yield head + ',"breakpoints":'
    yield from _array_chunks(s.breakpoints, chunk)
    if form == "intervals":
        yield ',"intervals":'
        yield from _interval_chunks(s, chunk)
        yield "}"
        return
    for i, (name, col) in enumerate((("flow", s.flow), ("first", s.first), ("last", s.last),
                                     ("rate", s.rate))):
        yield (',"segments":{' if i == 0 else ",") + json.dumps(name) + ":"
        yield from _array_chunks(col, chunk)
    yield "}}"


def _pump(fh: BinaryIO, chunks: Iterable[str], buffer: int = 1 << 20) -> None:
    """Write ``chunks`` to ``fh``, gathering small pieces into writes of about ``buffer``."""
    pending: list[str] = []
    size = 0
    for c in chunks:
        pending.append(c)
        size += len(c)
        if size >= buffer:
            fh.write("".join(pending).encode("utf-8"))
            pending, size = [], 0
    if pending:
        fh.write("".join(pending).encode("utf-8"))


def write_atomic(path: str | os.PathLike[str], chunks: Iterable[str]) -> None:
    """Write the text ``chunks`` (gzip when ``path`` ends in ``.gz``) to a temporary file in
    ``path``'s folder and rename it over ``path`` once complete; on any exception (including
    ``KeyboardInterrupt``) the temporary file is removed and ``path`` is left as it was."""
    p = Path(path)
    tmp = p.with_name(f".{p.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    # os.open with mode 0o666 gives the file the usual umask permissions (mkstemp would give 0600)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "wb") as raw:
            if p.suffix == ".gz":
                with gzip.GzipFile(filename=p.name, mode="wb", fileobj=raw,
                                   compresslevel=6) as gz:
                    _pump(gz, chunks)  # type: ignore[arg-type]
            else:
                _pump(raw, chunks)
            raw.flush()
            os.fsync(raw.fileno())
        os.replace(tmp, p)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def output_problem(path: str | os.PathLike[str]) -> str | None:
    """Why ``path`` cannot be written by :func:`write_atomic` (``"PATH: reason"``), or
    ``None``; checked by creating and removing a temporary file beside it, so a run can refuse
    before any work rather than fail after it (a missing, read-only or pseudo folder such as
    ``/proc``, a directory given as the file)."""
    p = Path(path)
    if p.is_dir():
        return f"{p}: is a directory"
    parent = p.parent
    if not parent.exists():
        return f"{p}: folder {parent} does not exist"
    if not parent.is_dir():
        return f"{p}: {parent} is not a folder"
    why = write_probe(parent)
    return None if why is None else f"{p}: cannot write in {parent} ({why})"


def write_probe(folder: str | os.PathLike[str]) -> str | None:
    """Why no new file can be made in the existing ``folder`` (the operating system's words),
    or ``None``: creates and removes a uniquely named empty file there."""
    tmp = Path(folder) / f".coflowopt-write.{os.getpid()}.{secrets.token_hex(4)}.check"
    try:
        os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
    except OSError as exc:
        return str(exc.strerror or exc)
    with contextlib.suppress(OSError):
        os.unlink(tmp)
    return None


def os_error_text(exc: OSError, path: str | os.PathLike[str] | None = None) -> str:
    """One line for an operating-system error on ``path``: ``"PATH: reason"`` (the reason as
    the OS words it, e.g. ``No space left on device``)."""
    where = path if path is not None else exc.filename
    reason = exc.strerror or str(exc)
    return f"{where}: {reason}" if where is not None else reason


# -- reading ------------------------------------------------------------------------------------


def _short(x: Any) -> str:
    r = repr(x)
    return r if len(r) <= 40 else r[:37] + "..."


def _numbers(v: list[Any], where: str, *, integer: bool) -> np.ndarray:
    """A JSON list of numbers as an int64 (``integer``) or float64 array; the error names
    ``where[i]`` for the first element that is not a number (or not an integer)."""
    try:
        a = np.asarray(v)
    except (ValueError, TypeError, OverflowError):  # ragged nesting, huge integers
        a = None
    kinds = "i" if integer else "iuf"
    if (a is not None and a.ndim == 1 and (a.size == 0 or a.dtype.kind in kinds)
            and bool not in set(map(type, v))):
        return a.astype(np.int64 if integer else np.float64, copy=False)
    for i, x in enumerate(v):
        if type(x) is bool or not isinstance(x, (int, float)):
            what = "an integer" if integer else "a number"
            raise InterchangeError(f"{where}[{i}]: expected {what}, got {_short(x)}")
        if integer:
            if isinstance(x, float) and not (math.isfinite(x) and x.is_integer()):
                raise InterchangeError(f"{where}[{i}]: {x!r} is not an integer")
            if not -(2**63) <= x < 2**63:
                raise InterchangeError(f"{where}[{i}]: {x!r} is out of range")
    try:
        return np.asarray(v, dtype=np.int64 if integer else np.float64)
    except OverflowError:  # an integer too large for a float
        raise InterchangeError(f"{where}: a value is too large for a float") from None


def _first_bad(mask: np.ndarray) -> int | None:
    bad = np.flatnonzero(mask)
    return int(bad[0]) if bad.size else None


def _segments_from_dict(d: dict[str, Any], source: str, meta: dict[str, Any]) -> Schedule:
    """The sparse form, every field checked with an error naming the file and the field."""
    t = _numbers(_column(d, "breakpoints", source), f"{source}: breakpoints", integer=False)
    if t.size == 0:
        raise InterchangeError(f"{source}: breakpoints: empty (need at least t0)")
    if (i := _first_bad(~np.isfinite(t))) is not None:
        raise InterchangeError(f"{source}: breakpoints[{i}]: {t[i]} is not finite")
    K = t.size - 1
    seg = _get(d, "segments", source)
    where = f"{source}: segments"
    cols = {name: _column(seg, name, where) for name in ("flow", "first", "last", "rate")}
    lengths = {name: len(c) for name, c in cols.items()}
    if len(set(lengths.values())) > 1:
        listed = ", ".join(f"{name} {n}" for name, n in lengths.items())
        raise InterchangeError(f"{where}: columns differ in length ({listed})")
    flow = _numbers(cols["flow"], f"{where}.flow", integer=True)
    first = _numbers(cols["first"], f"{where}.first", integer=True)
    last = _numbers(cols["last"], f"{where}.last", integer=True)
    rate = _numbers(cols["rate"], f"{where}.rate", integer=False)
    if (i := _first_bad(flow < 0)) is not None:
        raise InterchangeError(f"{where}.flow[{i}]: {flow[i]} is negative (flows are 0-based "
                               f"positions)")
    if (i := _first_bad(first < 0)) is not None:
        raise InterchangeError(f"{where}.first[{i}]: {first[i]} is negative")
    if (i := _first_bad(last > K)) is not None:
        raise InterchangeError(f"{where}.last[{i}]: {last[i]} is beyond the breakpoints (at most "
                               f"{K} with {K + 1} breakpoints)")
    if (i := _first_bad(first >= last)) is not None:
        rel = ">" if first[i] > last[i] else "="
        raise InterchangeError(f"{where}.first[{i}]: {first[i]} {rel} last[{i}] {last[i]} (a "
                               f"segment covers intervals first .. last-1, at least one)")
    if (i := _first_bad(~np.isfinite(rate))) is not None:
        raise InterchangeError(f"{where}.rate[{i}]: {rate[i]} is not finite")
    if (i := _first_bad(rate < 0)) is not None:
        raise InterchangeError(f"{where}.rate[{i}]: {float(rate[i])!r} is negative (rates are "
                               f">= 0)")
    try:
        return Schedule(t, flow, rate, first, last, meta)
    except ScheduleError as exc:
        raise InterchangeError(f"{source}: {exc}") from None


def schedule_from_dict(d: dict[str, Any], *, source: str = "<dict>") -> Schedule:
    """Build a schedule from either dict form (sparse ``segments`` or per-interval
    ``intervals``); errors name ``source`` and the field."""
    fmt = _get(d, "format", source)
    if fmt != SCHEDULE_FORMAT:
        raise InterchangeError(f"{source}: field 'format' is {fmt!r}, expected {SCHEDULE_FORMAT!r}")
    meta = d.get("meta", {})
    if not isinstance(meta, dict):
        raise InterchangeError(f"{source}: meta: expected an object")
    if "segments" in d:
        if "intervals" in d:
            raise InterchangeError(f"{source}: both 'segments' and 'intervals' given (a schedule "
                                   f"file holds one form)")
        return _segments_from_dict(d, source, dict(meta))
    if "intervals" not in d:
        raise InterchangeError(f"{source}: missing field 'segments' (sparse form) or "
                               f"'intervals' (interval form)")
    bps = _column(d, "breakpoints", source)
    ivs = _column(d, "intervals", source)
    pairs = []
    for k, iv in enumerate(ivs):
        where = f"{source}: intervals[{k}]"
        pairs.append((_column(iv, "flows", where), _column(iv, "rates", where)))
    try:
        return Schedule.from_intervals(bps, pairs, meta=dict(meta))
    except (ScheduleError, TypeError, ValueError) as exc:
        raise InterchangeError(f"{source}: {exc}") from None


def _open(path: Path, mode: str) -> Any:
    if path.suffix == ".gz":
        return gzip.open(path, mode + "t", encoding="utf-8")
    return open(path, mode, encoding="utf-8")


def _dump(obj: dict[str, Any], path: str | os.PathLike[str]) -> None:
    enc = json.JSONEncoder(separators=(",", ":"), allow_nan=False)
    write_atomic(path, enc.iterencode(obj))


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
    """Write ``instance`` as JSON (gzip when ``path`` ends in ``.gz``), through a temporary
    file renamed over ``path`` when complete."""
    _dump(instance_to_dict(instance), path)


def load_instance(path: str | os.PathLike[str]) -> Instance:
    """Read an instance written by :func:`save_instance` (or by any tool)."""
    d, src = _load(path)
    return instance_from_dict(d, source=src)


def save_schedule(schedule: Schedule, path: str | os.PathLike[str], *,
                  form: str = "segments") -> None:
    """Write ``schedule`` as JSON (gzip when ``path`` ends in ``.gz``).

    ``form="segments"`` (default) writes the sparse segment columns, whose size follows the
    number of segments; ``form="intervals"`` writes one entry per interval listing every active
    flow.  The text is streamed from the arrays (see :func:`schedule_json_chunks`) into a
    temporary file in the same folder, renamed over ``path`` only when complete: an interrupted
    write leaves ``path`` as it was.
    """
    _check_form(form)
    write_atomic(path, schedule_json_chunks(schedule, form=form))


def load_schedule(path: str | os.PathLike[str]) -> Schedule:
    """Read a schedule in either form, written by :func:`save_schedule` (or by any tool)."""
    d, src = _load(path)
    return schedule_from_dict(d, source=src)
