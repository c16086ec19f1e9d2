"""Progress as ``coflowopt run`` shows it: the values a run reports are monotone and end at
their total, and the bar ends full (issue 28: a bar at 24% a second before the end)."""

from __future__ import annotations

import io
import sys
from argparse import Namespace
from types import SimpleNamespace

import pytest

import coflowopt as co
from coflowopt.workloads.synthetic import synthetic_trace


@pytest.fixture(scope="module")
def inst():
    return synthetic_trace(80, seed=5, ports=30)


@pytest.mark.parametrize("name", ["varys", "fair", "aalo"])
def test_progress_values_are_monotone_and_end_at_total(inst, name) -> None:
    seen: list[tuple[float, float]] = []
    co.run(inst, name, progress=lambda done, total: seen.append((done, total)))
    assert seen
    done = [d for d, _ in seen]
    total = [t for _, t in seen]
    assert done == sorted(done) and total == sorted(total)  # neither goes back
    assert all(d <= t for d, t in seen)
    assert seen[-1][0] == seen[-1][1] > 0  # the last call says complete


def test_the_bar_ends_full_and_shows_no_time_left(monkeypatch) -> None:
    from coflowopt.cli_run import _progress_bar

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    term = Terminal()
    monkeypatch.setattr(sys, "stderr", term)
    big = SimpleNamespace(n_flows=10**6)
    with _progress_bar("fair", big, Namespace(no_progress=False)) as tick:
        for done, total in [(1.0, 10.0), (4.0, 10.0), (12.0, 12.0)]:
            tick(done, total)
    shown = term.getvalue()
    assert "100%" in shown and "<" not in shown and "remaining" not in shown
