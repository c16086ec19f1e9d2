"""Benchmark: write a large schedule in the sparse segment form of the interchange format.

Builds the 40-coflow synthetic instance (``synthetic_trace(40, seed=0)``), runs ``varys`` and
writes its schedule with :func:`coflowopt.save_schedule` (sparse ``segments`` form, streamed).
Reports the file size, the write time, the process's peak RSS after scheduling and after each
write (``resource.getrusage``), the number of segments, and the time and peak RSS of reading the
file back (``--read``).  The interval form (one entry per interval listing every active flow) is
not written unless ``--write-intervals`` is given: its size is computed from the segments (each
segment's ``flow`` and ``rate`` text times the intervals it spans, plus the per-interval frame);
with ``--write-intervals`` the written size is checked against that figure.

    python benchmarks/bench_schedule_file.py [--coflows 40] [--seed 0] [--out DIR] [--gzip]
                                             [--read] [--write-intervals]
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from coflowopt.schedule import Schedule


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def _interval_form_bytes(sched: Schedule) -> int:
    """The exact size of the interval form of ``sched`` without writing it: the text of the
    same breakpoints with every interval empty, plus, per entry, its ``flow`` and ``rate`` as
    the writer formats them (``str``/``repr``) and a comma each, less the trailing commas."""
    from coflowopt.interchange import schedule_json_chunks

    z = np.zeros(0, dtype=np.int64)
    frame = Schedule(sched.breakpoints, z, np.zeros(0), z, z, dict(sched.meta))
    base = sum(len(c) for c in schedule_json_chunks(frame, form="intervals"))
    lens = sched.last - sched.first
    width = (np.fromiter(map(len, map(str, sched.flow.tolist())), np.int64, sched.n_segments)
             + np.fromiter(map(len, map(repr, sched.rate.tolist())), np.int64, sched.n_segments))
    K = sched.n_intervals
    active = np.cumsum(np.bincount(sched.first, minlength=K + 1)
                       - np.bincount(sched.last, minlength=K + 1))[:K]
    return base + int(np.dot(lens, width + 2)) - 2 * int(np.count_nonzero(active))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--coflows", type=int, default=40)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--scheduler", default="varys")
    ap.add_argument("--out", help="folder for the files (default: a temporary folder, removed)")
    ap.add_argument("--gzip", action="store_true", help="also write the sparse form gzipped")
    ap.add_argument("--read", action="store_true", help="read the sparse file back, timing it")
    ap.add_argument("--write-intervals", action="store_true",
                    help="also write the interval form (large: ~2 GB for the default instance)")
    args = ap.parse_args(argv)

    import coflowopt.schedulers as schedulers
    from coflowopt import load_schedule, save_schedule
    from coflowopt.workloads.synthetic import synthetic_trace

    inst = synthetic_trace(args.coflows, seed=args.seed)
    t0 = time.perf_counter()
    sched = schedulers.get(args.scheduler)(inst)
    t_sched = time.perf_counter() - t0
    rss_sched = _rss_mb()
    lens = sched.last - sched.first
    entries = int(lens.sum())
    print(f"instance: {inst}", file=sys.stderr)
    print(f"{args.scheduler}: {sched} in {t_sched:.1f} s; interval-form entries {entries:,}",
          file=sys.stderr)

    tmp = None if args.out else tempfile.TemporaryDirectory()
    folder = Path(args.out or tmp.name)  # type: ignore[union-attr]
    folder.mkdir(parents=True, exist_ok=True)
    rows: list[tuple[str, str, str, str, str]] = []
    try:
        names = ["schedule.json"] + (["schedule.json.gz"] if args.gzip else [])
        for name in names:
            p = folder / name
            t0 = time.perf_counter()
            save_schedule(sched, p)
            dt = time.perf_counter() - t0
            rows.append((f"write sparse `segments` ({name})", f"{p.stat().st_size / 1e6:,.1f} MB",
                         f"{dt:.2f} s", f"{_rss_mb():,.0f} MB", f"{sched.n_segments:,}"))
        # the interval form: its size computed (it is written only with --write-intervals)
        est_bytes = _interval_form_bytes(sched)
        rows.append(("interval `intervals` form (size computed, not written)",
                     f"{est_bytes / 1e6:,.1f} MB", "-", "-", f"{entries:,} entries"))
        if args.write_intervals:
            p = folder / "intervals.json"
            t0 = time.perf_counter()
            save_schedule(sched, p, form="intervals")
            dt = time.perf_counter() - t0
            size = p.stat().st_size
            rows.append(("write interval `intervals` form", f"{size / 1e6:,.1f} MB",
                         f"{dt:.2f} s", f"{_rss_mb():,.0f} MB", f"{entries:,} entries"))
            if size != est_bytes:
                print(f"warning: interval form {size} bytes, computed {est_bytes}",
                      file=sys.stderr)
            os.unlink(p)
        if args.read:
            t0 = time.perf_counter()
            back = load_schedule(folder / "schedule.json")
            dt = time.perf_counter() - t0
            same = all(getattr(back, f).tobytes() == getattr(sched, f).tobytes()
                       for f in ("breakpoints", "flow", "first", "last", "rate"))
            rows.append((f"read back (`load_schedule`, bit-identical: {same})", "-",
                         f"{dt:.2f} s", f"{_rss_mb():,.0f} MB", f"{back.n_segments:,}"))
    finally:
        if tmp is not None:
            tmp.cleanup()

    print(f"\n{args.coflows}-coflow synthetic instance (seed {args.seed}): {inst.n_flows:,} flows, "
          f"{args.scheduler} schedule: {sched.n_intervals:,} intervals, {sched.n_segments:,} "
          f"segments; peak RSS after scheduling {rss_sched:,.0f} MB\n")
    print("| step | file size | time | peak RSS after | segments |")
    print("|---|---:|---:|---:|---:|")
    for r in rows:
        print("| " + " | ".join(r) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
