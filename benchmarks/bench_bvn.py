"""Old vs new ``"hk"`` BNA of ``coflowopt.schedulers.dag.bna`` (Shafiee and Ghaderi, IEEE/ACM ToN
2021, Sec. III-C, Algorithm 1): identity and time of the sparse peel against the dense one.

The old module is read from git (``--old-rev``, default the commit before the sparse peel) into
a temporary folder and loaded with numba's disk cache off, next to the installed package.

1. ``--random N``: ``items_hk`` (``_items_hk`` before it was public) of both on ``N`` seeded
   random runs (``k`` up to 230, a few to four items per row, one length per run or mixed
   lengths); asserts the same pieces ``(item, start, length)`` after
   :func:`~coflowopt.schedulers.dag.bna.merge_pieces` and the same ``eff``, and sums each
   one's time.
2. ``--dma TRACE [-s NAME]``: runs ``coflowopt run --trace TRACE -s NAME`` with
   ``resolve_runs_hk`` wrapped: every call goes to both, the numbers of pieces and the next
   run must agree and the pieces, sorted, must be equal; reports the calls, runs and the time
   of each (the command's own result is the old one's).
3. ``--inside TRACE [-s NAME]``: the installed package only; the seconds spent inside
   ``resolve_runs_hk`` and the runs it resolved.

    python benchmarks/bench_bvn.py --random 3000
    python benchmarks/bench_bvn.py --dma /tmp/scale/all12/traces/jobs-offline-1x-s0.json.gz
    python benchmarks/bench_bvn.py --inside TRACE -s gdm-bf
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
import types
from pathlib import Path
from typing import Any

import numpy as np

OLD_REV = "1ded3f9"
ROOT = Path(__file__).resolve().parent.parent


def load_old(rev: str) -> types.ModuleType:
    """The ``bna`` module at ``rev``, compiled without the disk cache (a throwaway module)."""
    src = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:coflowopt/schedulers/dag/bna.py"],
                         check=True, capture_output=True, text=True).stdout
    path = Path(tempfile.mkdtemp(prefix="bna_old_")) / "bna_old.py"
    path.write_text(src.replace("cache=True", "cache=False"))
    mod = types.ModuleType("bna_old")
    mod.__file__ = str(path)
    sys.modules["bna_old"] = mod
    exec(compile(path.read_text(), str(path), "exec"), mod.__dict__)
    return mod


def _same(a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
    from coflowopt.schedulers.dag.bna import merge_pieces
    pa, pb = merge_pieces(*a[:3]), merge_pieces(*b[:3])
    return a[3] == b[3] and all(np.array_equal(x, y) for x, y in zip(pa, pb, strict=True))


def random_runs(n: int, seed: int = 0, rev: str = OLD_REV) -> dict[str, Any]:
    from coflowopt.schedulers.dag import bna
    old = load_old(rev)
    rng = np.random.default_rng(seed)
    warm = (np.array([0, 1]), np.array([1, 0]), np.array([1, 2]))
    old_hk = getattr(old, "items_hk", None) or old._items_hk
    old_hk(*warm), bna.items_hk(*warm)
    t_old = t_new = 0.0
    for i in range(n):
        k = int(rng.integers(1, 231)) if i % 4 else int(rng.integers(1, 12))
        m = int(rng.integers(1, 4 * k + 2))
        src, dst = rng.integers(0, k, m), rng.integers(0, k, m)
        amt = np.full(m, int(rng.integers(1, 60))) if i % 2 else rng.integers(1, 30, m)
        t = time.perf_counter()
        a = old_hk(src, dst, amt)
        t_old += time.perf_counter() - t
        t = time.perf_counter()
        b = bna.items_hk(src, dst, amt)
        t_new += time.perf_counter() - t
        if not _same(a, b):
            raise AssertionError(f"run {i}: pieces differ (k={k}, items={m})")
    out = {"runs": n, "identical": True, "old_s": round(t_old, 3), "new_s": round(t_new, 3)}
    print(out, flush=True)
    return out


def _run_cli(trace: str, name: str) -> None:
    from coflowopt import cli
    sys.argv = ["coflowopt", "run", "--trace", trace, "-s", name, "--no-progress"]
    try:
        cli.main()
    except SystemExit:
        pass


def dma_identity(trace: str, name: str, rev: str = OLD_REV) -> dict[str, Any]:
    from coflowopt.schedulers.dag import bna, dma
    old = load_old(rev)
    stats = {"calls": 0, "runs": 0, "old_s": 0.0, "new_s": 0.0}

    def both(*args: Any) -> Any:
        t = time.perf_counter()
        a = old.resolve_runs_hk(*args)
        stats["old_s"] += time.perf_counter() - t
        t = time.perf_counter()
        b = bna.resolve_runs_hk(*args)
        stats["new_s"] += time.perf_counter() - t
        if a[3:] != b[3:]:
            raise AssertionError(f"call {stats['calls']}: (pieces, next run) {a[3:]} != {b[3:]}")
        m = a[3]
        oa = np.lexsort((a[1][:m], a[0][:m]))
        ob = np.lexsort((b[1][:m], b[0][:m]))
        for x, y in zip(a[:3], b[:3], strict=True):
            if not np.array_equal(x[:m][oa], y[:m][ob]):
                raise AssertionError(f"call {stats['calls']}: pieces differ")
        stats["calls"] += 1
        stats["runs"] += int(a[4]) - int(args[7])
        return a

    dma.resolve_runs_hk = both
    _run_cli(trace, name)
    out = {"trace": trace, "scheduler": name, "identical": True,
           **{k: round(v, 3) if isinstance(v, float) else v for k, v in stats.items()}}
    print(out, flush=True)
    return out


def inside(trace: str, name: str) -> dict[str, Any]:
    from coflowopt.schedulers.dag import dma
    inner = dma.resolve_runs_hk
    stats = {"calls": 0, "runs": 0, "seconds": 0.0}

    def timed(*args: Any) -> Any:
        t = time.perf_counter()
        out = inner(*args)
        stats["seconds"] += time.perf_counter() - t
        stats["calls"] += 1
        stats["runs"] += int(out[4]) - int(args[7])
        return out

    dma.resolve_runs_hk = timed
    _run_cli(trace, name)
    out = {"trace": trace, "scheduler": name, **stats, "seconds": round(stats["seconds"], 3)}
    print(out, flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--random", type=int, default=0, help="random runs to compare")
    ap.add_argument("--dma", help="trace: compare old and new inside a whole run")
    ap.add_argument("--inside", help="trace: time inside resolve_runs_hk (installed package)")
    ap.add_argument("-s", "--scheduler", default="dma")
    ap.add_argument("--old-rev", default=OLD_REV)
    a = ap.parse_args()
    if a.random:
        random_runs(a.random, rev=a.old_rev)
    if a.dma:
        dma_identity(a.dma, a.scheduler, rev=a.old_rev)
    if a.inside:
        inside(a.inside, a.scheduler)


if __name__ == "__main__":
    main()
