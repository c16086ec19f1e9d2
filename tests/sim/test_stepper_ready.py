"""The ready-coflow order shared by the compiled engine and the stepper
(:mod:`coflowopt.sim.ready`): key, then admission time, then position, on a hand-worked
instance, and against a brute-force sort by the tuple on random ones."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as hs

from coflowopt.sim.ready import by_admission, by_key


def _order(active: np.ndarray, admitted: np.ndarray, key: np.ndarray) -> list[int]:
    act = by_admission(active, admitted)
    return by_key(act, key[act]).tolist()


def test_hand_worked_order() -> None:
    # coflows 0..5, 4 not ready; keys 2, 1, 1, 1, 0, 2; admitted 5, 3, 3, 1, 0, 5
    active = np.array([True, True, True, True, False, True])
    admitted = np.array([5.0, 3.0, 3.0, 1.0, 0.0, 5.0])
    key = np.array([2.0, 1.0, 1.0, 1.0, 0.0, 2.0])
    # key 1: coflow 3 (admitted at 1) before 1 and 2 (both at 3: by position); key 2: 0, 5
    assert _order(active, admitted, key) == [3, 1, 2, 0, 5]
    assert by_admission(active, admitted).tolist() == [3, 1, 2, 0, 5]
    assert _order(np.zeros(3, dtype=np.bool_), admitted[:3], key[:3]) == []


@settings(max_examples=40, deadline=None)
@given(hs.lists(hs.tuples(hs.booleans(), hs.integers(0, 3), hs.integers(0, 3)), min_size=1,
                max_size=30))
def test_equals_sort_by_key_admission_position(rows: list[tuple[bool, int, int]]) -> None:
    active = np.array([r[0] for r in rows])
    admitted = np.array([float(r[1]) for r in rows])
    key = np.array([float(r[2]) for r in rows])
    want = sorted((c for c in range(len(rows)) if active[c]),
                  key=lambda c: (key[c], admitted[c], c))
    assert _order(active, admitted, key) == want
