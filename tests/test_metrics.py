"""Metrics against hand-computed values."""

import numpy as np
import pytest

from coflowopt import CoflowSpec, JobSpec, Schedule, build_instance, validate
from coflowopt import metrics as M

TWO = build_instance(2, coflows=[CoflowSpec([(0, 0, 2.0), (0, 1, 2.0)], id="A", weight=2.0),
                                 CoflowSpec([(1, 1, 3.0)], id="B", release=1.0)])
OK = Schedule.from_intervals([0, 1, 3, 5, 7], [{0: 1.0}, {0: 0.5, 2: 1.0}, {1: 1.0}, {2: 0.5}])


def test_hand_worked_schedule() -> None:
    v = validate(TWO, OK)
    # f0 done at 3, f1 at 5, f2 (released at 1) at 7
    assert M.fct(v).tolist() == [3.0, 5.0, 6.0]
    assert M.cct(v).tolist() == [5.0, 6.0]
    # isolation: A needs 4 on ingress 0, B needs 3 -> slowdown 5/4 and 6/3
    assert M.slowdown(v).tolist() == [1.25, 2.0]
    assert M.weighted_completion(v) == 2 * 5 + 1 * 7
    assert M.weighted_completion(v, relative=True) == 2 * 5 + 1 * 6
    # progress 1/S = (0.8, 0.5): (1.3)^2 / (2 (0.64 + 0.25)) = 1.69 / 1.78
    s = M.summary(v)
    assert s["jain_progress"] == pytest.approx(1.69 / 1.78)
    assert s["avg_cct"] == 5.5 and s["makespan"] == 7.0 and s["max_slowdown"] == 2.0


def test_jains_index_and_percentiles() -> None:
    assert M.jains_index(np.array([1.0, 1.0, 1.0])) == 1.0
    assert M.jains_index(np.array([1.0, 0.0, 0.0, 0.0])) == 0.25
    p = M.percentiles(np.array([1.0, 2.0, 3.0, 4.0]), (50, 100))
    assert p == {"p50": 2.5, "p100": 4.0}


def test_jobs_and_deadlines() -> None:
    inst = build_instance(1, jobs=[
        JobSpec([CoflowSpec([(0, 0, 1.0)]), CoflowSpec([(0, 0, 2.0)])], [(0, 1)],
                id="j0", deadline=3.0, weight=2.0),
        JobSpec([CoflowSpec([(0, 0, 1.0)])], id="j1", release=1.0, deadline=3.5),
    ])
    # j0's chain in [0,1) and [1,3); j1 in [3,4): misses its deadline 3.5
    s = Schedule.from_intervals([0, 1, 3, 4], [{0: 1.0}, {1: 1.0}, {2: 1.0}])
    v = validate(inst, s)
    assert M.jct(v).tolist() == [3.0, 3.0]
    assert M.deadline_misses(v).tolist() == [False, True]
    assert M.weighted_jct(v) == 2 * 3 + 1 * 4
    assert M.summary(v)["deadline_miss_rate"] == 0.5
