"""Figures the manual and BENCHMARKS.md state, checked against the code they describe."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_verify_quick_passes_with_the_size_the_manual_states() -> None:
    """``coflowopt verify --quick`` as the manual and BENCHMARKS.md describe it: that many
    instances of that many checks, and none failed."""
    from coflowopt.proofs_check import run_checks

    reports = run_checks(quick=True)
    assert not [r.name for r in reports if r.status == "failed"]
    ran = [r for r in reports if r.status != "skipped"]
    n = sum(r.n for r in reports)
    page = (ROOT / "docs" / "lp.md").read_text()
    said = re.search(r"`--quick` runs ([\d,]+) instances of (\d+) checks", page)
    assert said, "docs/lp.md no longer states the quick mode's size"
    assert (int(said.group(1).replace(",", "")), int(said.group(2))) == (n, len(ran))
    bench = (ROOT / "BENCHMARKS.md").read_text()
    assert f"{n} instances across {len(ran)} checks" in bench


def test_the_docs_name_every_registered_scheduler_as_registered() -> None:
    # the manual once said registered algorithms were "not registered yet"
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        assert "not registered yet" not in page.read_text(), page.name


def _fb2010_row(name: str) -> float:
    bench = (ROOT / "BENCHMARKS.md").read_text()
    table = bench.split("## Single-stage schedulers on the full FB2010 trace")[1]
    row = re.search(rf"^\| {re.escape(name)} \| fast \|(.*)$", table, flags=re.M)
    assert row, f"no {name} row in the fluid FB2010 table"
    cells = [c.strip() for c in row.group(1).split("|")]
    return float(cells[5].replace(",", ""))  # avg CCT ms


@pytest.mark.parametrize("name", ["scf", "lcf"])
def test_the_fluid_fb2010_table_rows_are_their_schedulers(name: str) -> None:
    """``scf`` and ``lcf`` once stood in each other's rows: each row's average CCT is the one
    its scheduler gives (to the table's rounding)."""
    import coflowopt as co
    from coflowopt.workloads import find_fb2010, read_trace

    path = find_fb2010()
    if path is None:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail("the FB2010 trace (shared/data/fb2010) is missing under CI")
        pytest.skip("FB2010 trace not found")
    avg = co.run(read_trace(path), name).summary()["avg_cct"]
    assert abs(avg - _fb2010_row(name)) <= 0.5
