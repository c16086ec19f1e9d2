"""Hypothesis strategies and tiny named reference instances shared by the tests."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numba
import pytest
from hypothesis import strategies as st

from coflowopt import CoflowSpec, Instance, JobSpec, build_instance
from coflowopt.proofs_check.instances import example2  # the stored reference instance

__all__ = ["example2", "example_e1", "fb2010_prefix", "instances"]


@st.composite
def instances(draw: st.DrawFn, *, max_ports: int = 4, max_coflows: int = 5,
              max_flows: int = 4, releases: bool = True, dags: bool = True,
              integer: bool = False) -> Instance:
    """Small random instances: a few jobs, each a random DAG of coflows."""
    m = draw(st.integers(1, max_ports))
    n_jobs = draw(st.integers(1, max_coflows))
    jobs = []
    budget = max_coflows
    for _ in range(n_jobs):
        if budget == 0:
            break
        k = draw(st.integers(1, min(3, budget) if dags else 1))
        budget -= k
        coflows = []
        for _ in range(k):
            nf = draw(st.integers(1, max_flows))
            vols = (st.integers(1, 6).map(float) if integer
                    else st.floats(0.05, 5.0, allow_nan=False, allow_infinity=False))
            flows = [(draw(st.integers(0, m - 1)), draw(st.integers(0, m - 1)), draw(vols))
                     for _ in range(nf)]
            rel = draw(st.sampled_from([0.0, 0.0, 0.5, 1.0, 2.5])) if releases else 0.0
            coflows.append(CoflowSpec(flows, release=rel,
                                      weight=draw(st.sampled_from([1.0, 0.5, 2.0, 3.0]))))
        edges = []
        if dags:
            for a in range(k):
                for b in range(a + 1, k):
                    if draw(st.booleans()):
                        edges.append((a, b))
        jrel = draw(st.sampled_from([0.0, 0.0, 1.0])) if releases else 0.0
        jobs.append(JobSpec(coflows, edges, release=jrel,
                            weight=draw(st.sampled_from([1.0, 2.0]))))
    return build_instance(m, jobs=jobs)


def example_e1() -> Instance:
    """single-stage spec E1: three coflows on three unit ports (servers S1..S3 as 0..2)."""
    return build_instance(3, coflows=[
        CoflowSpec([(0, 1, 2.0), (1, 2, 2.0)], id="C1"),
        CoflowSpec([(0, 1, 4.0)], id="C2"),
        CoflowSpec([(1, 2, 3.0)], id="C3"),
    ])


@lru_cache(maxsize=1)
def _fb2010() -> Instance | None:
    """The whole FB2010 trace, read once per test session (``None`` without it)."""
    from coflowopt.workloads import find_fb2010, read_trace

    path = find_fb2010()
    return None if path is None else read_trace(path)


@lru_cache(maxsize=4)
def fb2010_prefix(n: int) -> Instance:
    """The first ``n`` coflows of the FB2010 trace (the test is skipped without the trace)."""
    inst = _fb2010()
    if inst is None:
        pytest.skip("FB2010 trace not found (set COFLOWOPT_FB2010)")
    keep = inst.flow_coflow < n
    return Instance.from_arrays(inst.fabric, inst.flow_src[keep], inst.flow_dst[keep],
                                inst.flow_volume[keep], inst.flow_coflow[keep],
                                coflow_release=inst.coflow_release[:n],
                                coflow_id=inst.coflow_id[:n], time_unit=inst.time_unit)


def join_touching_pieces(out: list[tuple[int, int, int]]) -> tuple[Any, Any, Any]:
    """Slot pieces ``(flow, start, length)`` sorted and joined where a flow's piece starts where
    its previous one ends: the run-length form of a slot plan, for the plain-Python references
    of the DAG tests (int64 columns)."""
    import numpy as np

    joined: list[list[int]] = []
    for f, s, n in sorted(out):
        if joined and joined[-1][0] == f and joined[-1][1] + joined[-1][2] == s:
            joined[-1][2] += n
        else:
            joined.append([f, s, n])
    a = np.array(joined, dtype=np.int64).reshape(-1, 3)
    return a[:, 0], a[:, 1], a[:, 2]


@numba.njit
def least_remaining(s, c):
    """A compiled coflow key (:mod:`coflowopt.sim.policy`): least remaining bytes first, the
    coflow's remaining volume."""
    tot = 0.0
    for i in range(s.ptr[c], s.ptr[c + 1]):
        tot += s.remaining[s.order[i]]
    return tot
