"""The event skeleton's pieces (coflowopt.sim.events) against independent references: the heaps
against sorting and ``heapq`` on random data with ties, admission against a hand-worked DAG,
and the loop steps (stop and progress, recording a rate change) against what they must write."""

from __future__ import annotations

import heapq

import numpy as np
import pytest

from coflowopt.model import CoflowSpec, JobSpec, build_instance
from coflowopt.sim.events import (
    STOPPED,
    admission_heap,
    admission_inputs,
    admit_next,
    buffer_full,
    heap_pop,
    heap_push,
    heap_top,
    iheap_pop,
    iheap_pop_at,
    iheap_push,
    iheap_push_at,
    indexed_delete,
    indexed_pop_min_all,
    indexed_set,
    indexed_set_many,
    next_breakpoint,
    progress_or_stop,
    record_rate,
    release_successors,
)
from coflowopt.sim.kernel import CTL_DONE, CTL_EVENTS, CTL_STATUS, CTL_STOP, CTL_TIME, new_control
from coflowopt.sim.segstore import CHUNK, new_store


@pytest.mark.parametrize("seed", range(4))
def test_heap_pops_in_key_then_value_order(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = 200
    keys = rng.integers(0, 8, n).astype(np.float64)  # many ties on the key
    vals = rng.permutation(n).astype(np.int64)
    hk, hv = np.empty(n), np.empty(n, dtype=np.int64)
    size = 0
    for k, v in zip(keys, vals, strict=True):
        size = heap_push(hk, hv, size, k, v)
    got = []
    while size:
        assert heap_top(hk, size) == hk[0]
        got.append((hk[0], hv[0]))
        size = heap_pop(hk, hv, size)
    assert got == sorted(zip(keys.tolist(), vals.tolist(), strict=True))
    assert heap_top(hk, 0) == np.inf


@pytest.mark.parametrize("seed", range(4))
def test_integer_heap_matches_heapq_under_mixed_pushes_and_pops(seed: int) -> None:
    rng = np.random.default_rng(seed)
    h = np.empty(500, dtype=np.int64)
    size = 0
    ref: list[int] = []
    for _ in range(500):
        if ref and rng.random() < 0.4:
            assert h[0] == heapq.heappop(ref)
            size = iheap_pop(h, size)
        else:
            v = int(rng.integers(0, 20))  # duplicates
            heapq.heappush(ref, v)
            size = iheap_push(h, size, v)
        assert size == len(ref)
        if ref:
            assert h[0] == ref[0]


@pytest.mark.parametrize("seed", range(4))
def test_heaps_sharing_one_array_against_heapq(seed: int) -> None:
    # three integer heaps at offsets 0, 50 and 120 of one array (the backfill's per-pair
    # heaps): each behaves as heapq, and none touches another's entries
    rng = np.random.default_rng(seed)
    bases, cap = [0, 50, 120], [50, 70, 30]
    h = np.full(150, -7, dtype=np.int64)
    refs: list[list[int]] = [[], [], []]
    sizes = [0, 0, 0]
    for _ in range(600):
        k = int(rng.integers(0, 3))
        if refs[k] and (len(refs[k]) == cap[k] or rng.random() < 0.4):
            assert h[bases[k]] == heapq.heappop(refs[k])
            sizes[k] = iheap_pop_at(h, bases[k], sizes[k])
        else:
            v = int(rng.integers(0, 20))
            heapq.heappush(refs[k], v)
            sizes[k] = iheap_push_at(h, bases[k], sizes[k], v)
        for j in range(3):
            assert sizes[j] == len(refs[j])
            assert sorted(h[bases[j]:bases[j] + sizes[j]].tolist()) == sorted(refs[j])
            if refs[j]:
                assert h[bases[j]] == refs[j][0]


@pytest.mark.parametrize("seed", range(4))
def test_indexed_heap_against_a_dictionary(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n_items = 30
    hk, heap = np.empty(n_items), np.empty(n_items, dtype=np.int64)
    where = np.full(n_items, -1, dtype=np.int64)
    size = 0
    ref: dict[int, float] = {}
    for _ in range(400):
        f = int(rng.integers(0, n_items))
        if rng.random() < 0.3:
            size = indexed_delete(hk, heap, where, size, f)
            ref.pop(f, None)
        else:
            k = float(rng.integers(0, 5))  # ties, broken by the item
            size = indexed_set(hk, heap, where, size, f, k)
            ref[f] = k
        assert size == len(ref)
        for i in range(size):
            assert where[heap[i]] == i and hk[i] == ref[int(heap[i])]
        if ref:
            assert (hk[0], heap[0]) == min((k, f) for f, k in ref.items())
    assert all(where[f] == -1 for f in range(n_items) if f not in ref)


@pytest.mark.parametrize("seed", range(4))
def test_bulk_set_and_pop_all_minima_against_a_dictionary(seed: int) -> None:
    """indexed_set_many (few: one at a time; many: heapify) and indexed_pop_min_all (few:
    pops; many: compaction) against a dictionary: every item of the smallest key comes out,
    the rest stays a valid indexed heap."""
    rng = np.random.default_rng(seed)
    n_items = 40
    hk, heap = np.empty(n_items, dtype=np.int64), np.empty(n_items, dtype=np.int64)
    where = np.full(n_items, -1, dtype=np.int64)
    out, place = np.empty(n_items, dtype=np.int64), np.empty(n_items, dtype=np.int64)
    size = 0
    ref: dict[int, int] = {}
    for _ in range(300):
        if rng.random() < 0.6:
            cnt = int(rng.integers(1, n_items))
            items = rng.choice(n_items, size=cnt, replace=False).astype(np.int64)
            keys = rng.integers(0, 6, size=cnt).astype(np.int64)  # many ties
            size = indexed_set_many(hk, heap, where, size, items, keys, cnt)
            ref.update(zip(items.tolist(), keys.tolist(), strict=True))
        else:
            size, c = indexed_pop_min_all(hk, heap, where, size, out, place)
            if ref:
                kmin = min(ref.values())
                want = sorted(f for f, k in ref.items() if k == kmin)
                assert sorted(out[:c].tolist()) == want
                for f in want:
                    del ref[f]
            else:
                assert c == 0
        assert size == len(ref)
        for i in range(size):
            assert where[heap[i]] == i and hk[i] == ref[int(heap[i])]
            if i:
                p = (i - 1) // 2
                assert (hk[p], heap[p]) < (hk[i], heap[i])
        assert all(where[f] == -1 for f in range(n_items) if f not in ref)


def _dag_instance():
    # job 0: coflows 0 (release 1), 1 (release 0), 2 (release 0.5), 3 (release 5), with
    # Starts-After 0 -> 2, 1 -> 2, 2 -> 3; job 1: coflow 4 (release 2), independent
    job = JobSpec([CoflowSpec([(0, 1, 1.0)], release=1.0), CoflowSpec([(0, 1, 1.0)]),
                   CoflowSpec([(1, 0, 1.0)], release=0.5), CoflowSpec([(1, 1, 1.0)], release=5.0)],
                  starts_after=[(0, 2), (1, 2), (2, 3)])
    return build_instance(2, jobs=[job, JobSpec([CoflowSpec([(0, 0, 1.0)])], release=2.0)])


def test_admission_on_a_hand_worked_dag() -> None:
    n_pred, succ_ptr, succ, rel, t0 = admission_inputs(_dag_instance())
    assert n_pred.tolist() == [0, 0, 2, 1, 0]
    assert rel.tolist() == [1.0, 0.0, 0.5, 5.0, 2.0] and t0 == 0.0
    ak, av, na = admission_heap(n_pred, rel)
    assert na == 3  # the coflows without predecessors: 0, 1 and 4

    def admit(t: float) -> list[int]:
        nonlocal na
        out = []
        while True:
            c, na = admit_next(ak, av, na, t)
            if c < 0:
                return out
            out.append(int(c))

    assert admit(0.5) == [1]
    assert admit(1.0) == [0]
    # 1 completes at 1.5: 2 still waits for 0
    na = release_successors(1, 1.5, succ_ptr, succ, n_pred, rel, ak, av, na)
    assert na == 1 and n_pred[2] == 1
    # 0 completes at 3: 2 (released at 0.5) is admissible at once, before 4's turn is over
    na = release_successors(0, 3.0, succ_ptr, succ, n_pred, rel, ak, av, na)
    assert (ak[0], av[0]) == (2.0, 4)
    assert admit(3.0) == [4, 2]
    # 2 completes at 4: 3 enters at its release 5, not at 4
    na = release_successors(2, 4.0, succ_ptr, succ, n_pred, rel, ak, av, na)
    assert admit(4.9) == []
    assert heap_top(ak, na) == 5.0
    assert admit(5.0) == [3]
    assert na == 0 and heap_top(ak, na) == np.inf


def test_next_breakpoint_records_later_times_only() -> None:
    bps = np.empty(1)
    bps[0] = 0.0
    bps, kk, t, tol = next_breakpoint(bps, 0, 0.0, 2.0)
    assert (kk, t) == (1, 2.0) and bps.size >= 2 and bps[1] == 2.0  # grown
    assert tol == pytest.approx(2e-14)
    bps, kk, t, tol = next_breakpoint(bps, kk, t, 2.0)  # the same time: no new breakpoint
    assert (kk, t) == (1, 2.0)


def test_progress_or_stop_publishes_and_obeys_the_stop_flag() -> None:
    ctl = new_control(10.0, 7)
    assert not progress_or_stop(ctl, 3.5, 1.0, 2, 9)
    assert (ctl[CTL_TIME], ctl[CTL_DONE], ctl[CTL_EVENTS], ctl[CTL_STATUS]) == (2.5, 2, 9, 0)
    ctl[CTL_STOP] = 1.0
    assert progress_or_stop(ctl, 4.0, 1.0, 3, 10)
    assert ctl[CTL_STATUS] == 1.0 and ctl[CTL_TIME] == 3.0
    assert STOPPED != 0


def test_record_rate_stores_the_closed_segment_or_streams_the_change() -> None:
    buf_i, buf_d, chunks_i, chunks_d = new_store()
    # stored: the segment (flow, first, last; old rate), nothing for a zero rate or length
    ns = record_rate(False, buf_i, buf_d, chunks_i, chunks_d, 0, 3, 0, 2, 1.5, 0.5)
    assert ns == 1 and buf_i[:, 0].tolist() == [3, 0, 2] and buf_d[0] == 1.5
    ns = record_rate(False, buf_i, buf_d, chunks_i, chunks_d, ns, 3, 2, 2, 0.5, 0.0)
    ns = record_rate(False, buf_i, buf_d, chunks_i, chunks_d, ns, 1, 0, 2, 0.0, 1.0)
    assert ns == 1 and not buffer_full(False, ns)
    # streamed: the change (flow, breakpoint; new rate) in the validator's buffer
    ns = record_rate(True, buf_i, buf_d, chunks_i, chunks_d, 0, 4, 0, 1, 1.5, 0.25)
    assert ns == 1 and buf_i[:2, 0].tolist() == [4, 1] and buf_d[0] == 0.25
    assert buffer_full(True, CHUNK) and not buffer_full(True, CHUNK - 1)
