"""Reader and writer for the CoflowSim / coflow-benchmark trace format.

Line 1: ``<num_ports> <num_coflows>``; then one coflow per line::

    <coflow_id> <arrival_ms> <M> <map_1> ... <map_M> <R> <red_1>:<MB_1> ... <red_R>:<MB_R>

The trace gives only what each reducer receives; following CoflowSim, each reducer's MB is split
evenly over the coflow's ``M`` mappers, giving ``M x R`` flows of ``MB_r / M``.  Volumes are in MB,
time in ms, and the default port rate is 1 Gb/s = 0.125 MB/ms.

The FB2010 trace itself carries no license and is not part of this package: get it from the
GitHub repository ``coflow/coflow-benchmark`` (``FB2010-1Hr-150-0.txt``), or point
``COFLOWOPT_FB2010`` at a copy.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np

from coflowopt.model import Fabric, Instance, InstanceError

__all__ = [
    "GBPS_MB_PER_MS",
    "TraceFormatError",
    "find_fb2010",
    "parse_trace",
    "read_trace",
    "require_fb2010",
    "resolve_trace",
    "write_trace",
]

#: 1 Gb/s in MB per ms (10^9 bit/s / 8 / 10^6 B/MB / 1000 ms/s).
GBPS_MB_PER_MS = 0.125

FB2010_NAME = "FB2010-1Hr-150-0.txt"


class TraceFormatError(InstanceError):
    """A malformed trace line; names the file, the 1-based line number and the field."""

    def __init__(self, path: str, line: int, field: str, message: str):
        self.path, self.line, self.field = path, line, field
        super().__init__(f"{path}:{line}: field {field}: {message}")


def _int(tok: str, path: str, line: int, field: str) -> int:
    try:
        return int(tok)
    except ValueError:
        raise TraceFormatError(path, line, field, f"expected an integer, got {tok!r}") from None


def parse_trace(
    text: str,
    *,
    path: str = "<string>",
    capacity: float = GBPS_MB_PER_MS,
    round_to_mappers: bool = False,
    batch: bool = False,
) -> Instance:
    """Parse trace text into an :class:`~coflowopt.Instance` (MB, ms, one job per coflow).

    ``round_to_mappers``: round each reducer's MB up to a multiple of ``M`` first, as CoflowSim
    does (FB2010 is already a multiple everywhere, so it changes nothing there).
    ``batch``: drop the arrivals, every coflow released at 0 (the offline, batch form of the
    trace; the arrivals are still parsed and checked).
    """
    lines = text.splitlines()
    if not lines or not lines[0].strip():
        raise TraceFormatError(path, 1, "header", "empty file; expected '<ports> <coflows>'")
    head = lines[0].split()
    if len(head) != 2:
        raise TraceFormatError(path, 1, "header",
                               f"expected '<ports> <coflows>', got {lines[0].strip()!r}")
    m = _int(head[0], path, 1, "num_ports")
    n = _int(head[1], path, 1, "num_coflows")
    if m < 1:
        raise TraceFormatError(path, 1, "num_ports", f"must be >= 1, got {m}")
    if n < 0:
        raise TraceFormatError(path, 1, "num_coflows", f"must be >= 0, got {n}")
    body = lines[1:]
    while body and not body[-1].strip():
        body.pop()
    # a blank line inside the body is reported where it is, not as a count mismatch at the end
    blank = next((k for k, raw in enumerate(body) if not raw.strip()), None)
    if blank is not None:
        raise TraceFormatError(path, blank + 2, "coflow", "blank line; expected a coflow")
    if len(body) != n:
        where = 1 + min(len(body), n) + (1 if len(body) > n else 0)
        raise TraceFormatError(path, where, "num_coflows",
                               f"header declares {n} coflows, file has {len(body)} lines")
    ids = np.empty(n, dtype=np.int64)
    arrival = np.empty(n, dtype=np.float64)
    maps: list[np.ndarray] = []
    reds: list[np.ndarray] = []
    mbs: list[np.ndarray] = []
    seen: dict[int, int] = {}
    for k, raw in enumerate(body):
        ln = k + 2
        tok = raw.split()
        if len(tok) < 3:
            raise TraceFormatError(path, ln, "coflow", f"too few fields ({len(tok)})")
        cid = _int(tok[0], path, ln, "coflow_id")
        if cid in seen:
            raise TraceFormatError(path, ln, "coflow_id",
                                   f"duplicate id {cid} (first on line {seen[cid]})")
        seen[cid] = ln
        ids[k] = cid
        t = _int(tok[1], path, ln, "arrival_ms")
        if t < 0:
            raise TraceFormatError(path, ln, "arrival_ms", f"must be >= 0, got {t}")
        arrival[k] = t
        nm = _int(tok[2], path, ln, "M")
        if nm < 1:
            raise TraceFormatError(path, ln, "M", f"need at least one mapper, got {nm}")
        if len(tok) < 4 + nm:
            raise TraceFormatError(path, ln, "M",
                                   f"declares {nm} mappers but the line has {len(tok) - 3} "
                                   "tokens after it")
        try:
            mp = np.array(tok[3:3 + nm], dtype=np.int64)
        except ValueError:
            bad = next(i for i, x in enumerate(tok[3:3 + nm]) if not x.lstrip("-").isdigit())
            raise TraceFormatError(path, ln, f"map_loc_{bad + 1}",
                                   f"expected a port index, got {tok[3 + bad]!r}") from None
        nr = _int(tok[3 + nm], path, ln, "R")
        if nr < 1:
            raise TraceFormatError(path, ln, "R", f"need at least one reducer, got {nr}")
        rest = tok[4 + nm:]
        if len(rest) != nr:
            raise TraceFormatError(path, ln, "R",
                                   f"declares {nr} reducers, line has {len(rest)} reducer fields")
        rp = np.empty(nr, dtype=np.int64)
        mb = np.empty(nr, dtype=np.float64)
        for r, item in enumerate(rest):
            loc, sep, size = item.partition(":")
            if not sep:
                raise TraceFormatError(path, ln, f"red_loc_{r + 1}",
                                       f"expected '<port>:<MB>', got {item!r}")
            rp[r] = _int(loc, path, ln, f"red_loc_{r + 1}")
            try:
                mb[r] = float(size)
            except ValueError:
                raise TraceFormatError(path, ln, f"MB_{r + 1}",
                                       f"expected a number, got {size!r}") from None
            if not math.isfinite(mb[r]) or mb[r] < 0:
                raise TraceFormatError(path, ln, f"MB_{r + 1}",
                                       f"must be finite and >= 0, got {size!r}")
        for what, arr in (("map_loc", mp), ("red_loc", rp)):
            bad = np.flatnonzero((arr < 0) | (arr >= m))
            if bad.size:
                i = int(bad[0])
                raise TraceFormatError(path, ln, f"{what}_{i + 1}",
                                       f"port {arr[i]} out of range 0..{m - 1}")
            uniq, first = np.unique(arr, return_index=True)
            if uniq.size != arr.size:
                i = int(np.setdiff1d(np.arange(arr.size), first)[0])
                raise TraceFormatError(path, ln, f"{what}_{i + 1}",
                                       f"port {arr[i]} repeated within coflow {cid}")
        if round_to_mappers:
            mb = np.ceil(mb / nm) * nm
        maps.append(mp)
        reds.append(rp)
        mbs.append(mb)

    # expand every coflow to its M x R flows in one vectorized pass
    n_map = np.array([a.size for a in maps], dtype=np.int64)
    n_red = np.array([a.size for a in reds], dtype=np.int64)
    width = n_map * n_red
    total = int(width.sum())
    coflow = np.repeat(np.arange(n, dtype=np.int64), width)
    if total:
        map_all = np.concatenate(maps)
        red_all = np.concatenate(reds)
        mb_all = np.concatenate(mbs)
        map_off = np.repeat(np.cumsum(n_map) - n_map, width)
        red_off = np.repeat(np.cumsum(n_red) - n_red, width)
        local = np.arange(total) - np.repeat(np.cumsum(width) - width, width)
        # reducer-major within a coflow: flows of reducer r are contiguous
        r_idx = local // n_map[coflow]
        m_idx = local % n_map[coflow]
        src = map_all[map_off + m_idx]
        dst = red_all[red_off + r_idx]
        vol = mb_all[red_off + r_idx] / n_map[coflow]
    else:
        src = dst = np.zeros(0, dtype=np.int64)
        vol = np.zeros(0)
    if batch:
        arrival = np.zeros(n)
    return Instance.from_arrays(
        Fabric.uniform(m, capacity), src, dst, vol, coflow,
        coflow_id=ids, coflow_release=arrival, n_coflows=n, job_release=arrival,
        time_unit="ms",
    )


def read_trace(
    path: str | os.PathLike[str],
    *,
    capacity: float = GBPS_MB_PER_MS,
    round_to_mappers: bool = False,
    batch: bool = False,
) -> Instance:
    """Read a coflow-benchmark trace file (see :func:`parse_trace`; ``batch``: every release
    0)."""
    p = Path(path)
    try:
        text = p.read_text()
    except FileNotFoundError:
        raise FileNotFoundError(
            f"{p}: trace not found (the FB2010 trace is in the GitHub repository "
            "coflow/coflow-benchmark; set COFLOWOPT_FB2010 to its path)"
        ) from None
    return parse_trace(text, path=str(p), capacity=capacity, round_to_mappers=round_to_mappers,
                       batch=batch)


def _fmt_mb(x: float) -> str:
    return repr(float(x))


def reducer_total(per_flow: float, n_map: int) -> float:
    """The reducer MB ``x`` with ``x / n_map == per_flow``, preferring a whole number."""
    guess = per_flow * n_map
    r = float(round(guess))
    if r / n_map == per_flow:
        return r
    if guess / n_map == per_flow:
        return guess
    lo = hi = guess
    for _ in range(64):
        lo, hi = math.nextafter(lo, -math.inf), math.nextafter(hi, math.inf)
        for c in (lo, hi):
            if c / n_map == per_flow:
                return c
    raise ValueError(f"no reducer total maps to per-flow volume {per_flow!r} over {n_map}")


def format_trace(instance: Instance) -> str:
    """The instance as trace text.

    Only instances the format can express are written: one job per coflow, integer coflow ids
    and integer release times (ms), and every coflow a full mapper x reducer bipartite pattern
    with each reducer's volume split evenly (what :func:`read_trace` produces).  Anything else
    raises ``ValueError`` naming the coflow, rather than writing a trace that reads back
    differently.
    """
    inst = instance
    if inst.coflow_id.dtype.kind not in "iu":
        raise ValueError("format_trace: coflow ids must be integers")
    lines = [f"{inst.ports} {inst.n_coflows}"]
    release = inst.release
    for c in range(inst.n_coflows):
        cid = int(inst.coflow_id[c])
        f = inst.flows_of(c)
        t = float(release[c])
        if t != int(t):
            raise ValueError(f"format_trace: coflow {cid}: arrival {t} is not a whole ms")
        if f.size == 0:
            raise ValueError(f"format_trace: coflow {cid} has no flows")
        src, dst, vol = inst.flow_src[f], inst.flow_dst[f], inst.flow_volume[f]
        maps = list(dict.fromkeys(src.tolist()))
        reds = list(dict.fromkeys(dst.tolist()))
        nm = len(maps)
        if f.size != nm * len(reds):
            raise ValueError(f"format_trace: coflow {cid} is not a full mapper x reducer pattern "
                             f"({f.size} flows, {nm} mappers, {len(reds)} reducers)")
        fields = [str(cid), str(int(t)), str(nm), *map(str, maps), str(len(reds))]
        for r in reds:
            sel = dst == r
            if set(src[sel].tolist()) != set(maps):
                raise ValueError(f"format_trace: coflow {cid}: reducer {r} does not receive "
                                 "from every mapper")
            v = vol[sel]
            if not np.all(v == v[0]):
                raise ValueError(f"format_trace: coflow {cid}: reducer {r} is not split evenly "
                                 "over the mappers")
            fields.append(f"{r}:{_fmt_mb(reducer_total(float(v[0]), nm))}")
        lines.append(" ".join(fields))
    return "\n".join(lines) + "\n"


def write_trace(instance: Instance, path: str | os.PathLike[str]) -> None:
    """Write ``instance`` in the trace format (see :func:`format_trace`)."""
    Path(path).write_text(format_trace(instance))


def _fb2010_candidates() -> list[Path]:
    out = []
    for start in (Path.cwd(), Path(__file__).resolve().parent):
        for d in (start, *start.parents):
            out.append(d / "shared" / "data" / "fb2010" / FB2010_NAME)
    return out


def find_fb2010() -> Path | None:
    """Locate the FB2010 trace: ``$COFLOWOPT_FB2010``, else ``shared/data/fb2010/`` in or above
    the working directory or this package.  ``None`` when absent (:func:`require_fb2010`
    raises instead, saying where it looked)."""
    env = os.environ.get("COFLOWOPT_FB2010")
    if env:
        p = Path(env)
        return p if p.is_file() else None
    for cand in _fb2010_candidates():
        if cand.is_file():
            return cand
    return None


def require_fb2010() -> Path:
    """:func:`find_fb2010`, or :class:`FileNotFoundError` naming every place it looked."""
    found = find_fb2010()
    if found is not None:
        return found
    env = os.environ.get("COFLOWOPT_FB2010")
    looked = ([f"$COFLOWOPT_FB2010 = {env} (not a file)"] if env else
              ["$COFLOWOPT_FB2010 (unset)"] + [str(c.parent) for c in _fb2010_candidates()])
    raise FileNotFoundError(
        f"FB2010 trace not found; looked at: {'; '.join(looked)}. Get {FB2010_NAME} from the "
        "GitHub repository coflow/coflow-benchmark and set COFLOWOPT_FB2010 to its path")


def resolve_trace(path: str | os.PathLike[str]) -> Path:
    """The one resolver of a trace argument: an existing file as given; ``"fb2010"`` or the
    trace's own file name (``FB2010-1Hr-150-0.txt``) not present here: the located trace
    (:func:`require_fb2010`); anything else missing: :class:`FileNotFoundError` naming it."""
    p = Path(path)
    if p.is_file():
        return p
    if str(path).lower() == "fb2010" or p.name == FB2010_NAME:
        return require_fb2010()
    raise FileNotFoundError(f"{path}: no such file")
