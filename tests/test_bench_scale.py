"""``benchmarks/bench_scale.py``'s table: issue 28's targets at 10x, judged on hand-made rows."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _module():
    spec = importlib.util.spec_from_file_location("bench_scale",
                                                  ROOT / "benchmarks" / "bench_scale.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _row(name: str, size: float, wall: float, rss: float, status: str = "ok") -> dict:
    return {"scheduler": name, "size": size, "flows": int(1000 * size), "status": status,
            "wall_s": wall, "rss_mb": rss, "cpu_s": wall - 0.5, "counters": {"events": 7}}


def test_misses_each_target_alone_and_at_its_edge() -> None:
    m = _module()
    one = _row("a", 1, 4.0, 300)
    assert m.misses(one, _row("a", 10, 60.0, 2999)) == []          # exactly 15x: met
    assert m.misses(one, _row("a", 10, 60.4, 1000)) == ["15.1x > 15x"]
    assert m.misses(_row("a", 1, 8.0, 300), _row("a", 10, 90.0, 1000)) == ["90 s >= 90 s"]
    assert m.misses(one, _row("a", 10, 40.0, 3000)) == ["3000 MB >= 3000 MB"]
    assert m.misses(_row("a", 1, 6.0, 300), _row("a", 10, 120.0, 3100)) == [
        "20.0x > 15x", "120 s >= 90 s", "3100 MB >= 3000 MB"]


def test_table_judges_only_a_finished_1x_and_10x_pair() -> None:
    m = _module()
    rows = [_row("met", 1, 4.0, 300), _row("met", 10, 50.0, 1500),
            _row("slow", 1, 4.0, 300), _row("slow", 10, 95.0, 1500),
            _row("cut", 1, 4.0, 300), _row("cut", 10, 900.0, 0, status="timeout"),
            _row("small", 1, 4.0, 300), _row("small", 2, 9.0, 400),
            # a later row of the same scheduler and size replaces the earlier one
            _row("again", 1, 9.0, 300), _row("again", 10, 99.0, 900),
            _row("again", 10, 80.0, 900)]
    lines = {ln.split(" | ")[0][2:]: ln for ln in m.table(rows, [1.0, 2.0, 10.0], False)
             .splitlines()[2:]}
    assert lines["met"].endswith("| 12.5x (10x) | 49.5 | 1.10 | met |")
    assert lines["slow"].endswith("| 23.8x > 15x; 95 s >= 90 s |")
    assert lines["cut"].endswith("| not finished (timeout) |")
    assert lines["small"].endswith("| - |")
    assert lines["again"].endswith("| 8.9x (10x) | 79.5 | 0.95 | met |")
    with_counters = m.table(rows, [1.0, 10.0]).splitlines()
    assert with_counters[0].endswith("| counters (largest finished) |")
    assert with_counters[2].endswith("| events=7 |")
