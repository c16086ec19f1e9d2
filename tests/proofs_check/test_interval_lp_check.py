"""The ``interval-lp-certified`` proof check: passes, and fails on a bound that is too high."""

from __future__ import annotations

from dataclasses import replace

import coflowopt.proofs_check.lp_checks as lp_checks
from coflowopt.proofs_check import run_checks


def test_interval_lp_check_passes() -> None:
    (r,) = run_checks(["interval-lp-certified"], quick=True, seed=5)
    assert r.status == "passed" and r.n == 8
    assert r.worst >= 1.0  # OPT / certified bound


def test_interval_lp_check_catches_an_invalid_bound(monkeypatch) -> None:
    real = lp_checks.interval_lower_bound

    def too_high(inst, ip, sp):
        b = real(inst, ip, sp)
        return replace(b, value=2.0 * b.bound.primal_value + 1.0)

    monkeypatch.setattr(lp_checks, "interval_lower_bound", too_high)
    (r,) = run_checks(["interval-lp-certified"], quick=True, count=2, seed=5)
    assert r.status == "failed"
