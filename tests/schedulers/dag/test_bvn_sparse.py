"""The sparse ``"hk"`` Birkhoff-von Neumann peel of BNA (Shafiee and Ghaderi, IEEE/ACM ToN 2021,
Sec. III-C, Algorithm 1): a hand-worked decomposition with an augmenting path, a permutation
matrix, ``k = 1``, a padded square, and the decomposition and real-first invariants on seeded
random integer matrices (checked here by plain numpy, independently of the kernels)."""

from __future__ import annotations

import numpy as np
import pytest

from coflowopt.schedulers.dag.bna import augment, birkhoff_von_neumann, bna_items

# Line sums all 2, no fill.  Hand-worked "hk": row 0 takes its first free column 0, row 1 its
# first free column 1; row 2's columns 0 and 1 are both taken, so its path goes through
# column 0 to row 0, which moves to its free column 2.  Every matched entry is 1, so all reach
# 0 after one slot and the second matching is again first-free-column: 0->0, 1->2, 2->1.
REROUTE = np.array([[1, 0, 1], [0, 1, 1], [1, 1, 0]])


def _check_decomposition(D: np.ndarray) -> None:
    """Sum back to the augmented matrix, perfect matchings on the support, positive durations,
    ``eff`` = the largest line sum, at most ``k^2 - 2k + 2`` matchings."""
    k = D.shape[0]
    E = int(max(D.sum(axis=0).max(), D.sum(axis=1).max())) if D.size else 0
    A = augment(D)
    assert (A >= D).all()
    assert (A.sum(axis=0) == E).all() and (A.sum(axis=1) == E).all()
    perms, durs = birkhoff_von_neumann(D, "hk")
    assert int(durs.sum()) == E and (durs >= 1).all()
    assert len(durs) <= max(1, k * k - 2 * k + 2)
    rest = A.copy()
    rows = np.arange(k)
    for perm, dur in zip(perms, durs, strict=True):
        assert np.array_equal(np.sort(perm), rows)          # a perfect matching
        assert (rest[rows, perm] >= dur).all()              # on the (remaining) support
        rest[rows, perm] -= dur
    assert not rest.any()                                    # sum dur * P(perm) = A


def _check_pieces(src: np.ndarray, dst: np.ndarray, amt: np.ndarray) -> None:
    """Each item's pieces cover its amount within ``[0, eff)``; no port serves two pieces in
    one slot (a port is a row or a column of the matrix)."""
    item, start, length, eff = bna_items(src, dst, amt, rule="hk")
    rs = np.bincount(src, weights=amt)
    cs = np.bincount(dst, weights=amt)
    assert eff == int(max(rs.max(), cs.max()))
    assert (length >= 1).all() and (start >= 0).all() and (start + length <= eff).all()
    assert np.array_equal(np.bincount(item, weights=length, minlength=amt.size), amt)
    for port in (src, dst):
        busy = np.zeros((int(port.max()) + 1, eff), dtype=int)
        for i, s, n in zip(item.tolist(), start.tolist(), length.tolist(), strict=True):
            busy[port[i], s:s + n] += 1
        assert busy.max() <= 1


def test_reroute_hand_worked() -> None:
    perms, durs = birkhoff_von_neumann(REROUTE, "hk")
    assert perms.tolist() == [[2, 1, 0], [0, 2, 1]]
    assert durs.tolist() == [1, 1]
    _check_decomposition(REROUTE)


def test_reroute_pieces_hand_worked() -> None:
    """One item per positive cell (row-major): the first matching serves (0,2), (1,1), (2,0)
    in slot 0, the second (0,0), (1,2), (2,1) in slot 1."""
    src, dst = np.nonzero(REROUTE)
    item, start, length, eff = bna_items(src, dst, REROUTE[src, dst], rule="hk")
    assert eff == 2
    got = sorted(zip(item.tolist(), start.tolist(), length.tolist(), strict=True))
    # items: 0 (0,0), 1 (0,2), 2 (1,1), 3 (1,2), 4 (2,0), 5 (2,1)
    assert got == [(0, 1, 1), (1, 0, 1), (2, 0, 1), (3, 1, 1), (4, 0, 1), (5, 1, 1)]


def test_fill_and_two_matchings_hand_worked() -> None:
    """``[[2, 1], [0, 1]]``: eff 3; the north-west fill adds 1 at (1, 0) and 1 at (1, 1);
    identity for 2 slots, then the swap for 1.  Real-first: (0,0) in [0, 2), (0,1) in [2, 3),
    (1,1) in [0, 1) (its other matched slot is dummy traffic)."""
    D = np.array([[2, 1], [0, 1]])
    assert augment(D).tolist() == [[2, 1], [1, 2]]
    perms, durs = birkhoff_von_neumann(D, "hk")
    assert perms.tolist() == [[0, 1], [1, 0]] and durs.tolist() == [2, 1]
    item, start, length, eff = bna_items(np.array([0, 0, 1]), np.array([0, 1, 1]),
                                         np.array([2, 1, 1]), rule="hk")
    assert eff == 3
    assert sorted(zip(item.tolist(), start.tolist(), length.tolist(), strict=True)) == [
        (0, 0, 2), (1, 2, 1), (2, 0, 1)]


def test_permutation_matrix_is_one_matching() -> None:
    perm = np.array([3, 0, 4, 1, 2])
    D = np.zeros((5, 5), dtype=int)
    D[np.arange(5), perm] = 7
    perms, durs = birkhoff_von_neumann(D, "hk")
    assert perms.tolist() == [perm.tolist()] and durs.tolist() == [7]


def test_one_by_one() -> None:
    perms, durs = birkhoff_von_neumann(np.array([[5]]), "hk")
    assert perms.tolist() == [[0]] and durs.tolist() == [5]
    item, start, length, eff = bna_items(np.array([4, 4]), np.array([9, 9]), np.array([2, 3]),
                                         rule="hk")
    assert eff == 5
    assert sorted(zip(item.tolist(), start.tolist(), length.tolist(), strict=True)) == [
        (0, 0, 2), (1, 2, 3)]


def test_padded_square() -> None:
    """Items on 2 source and 4 destination ports: a 4 x 4 matrix with two zero rows."""
    src = np.array([0, 0, 1, 1, 0])
    dst = np.array([0, 1, 2, 3, 3])
    amt = np.array([3, 1, 2, 2, 1])
    D = np.zeros((4, 4), dtype=int)
    np.add.at(D, (src, dst), amt)
    _check_decomposition(D)
    _check_pieces(src, dst, amt)


@pytest.mark.parametrize("k", [1, 2, 3, 5, 8, 13, 30])
def test_random_matrices(k: int) -> None:
    rng = np.random.default_rng(1000 + k)
    for _ in range(6):
        D = rng.integers(0, 6, size=(k, k)) * (rng.random((k, k)) < 0.4)
        _check_decomposition(D)
        n = int(rng.integers(1, 3 * k + 2))
        src = rng.integers(0, k, n)
        dst = rng.integers(0, k, n)
        amt = rng.integers(1, 5, n)
        _check_pieces(src, dst, amt)


def test_run_shaped_items() -> None:
    """Runs of DMA: many items of one length on a sparse k x k pattern (k = 60), a shared pair
    served in item order."""
    rng = np.random.default_rng(7)
    src = rng.integers(0, 60, 70)
    dst = rng.integers(0, 60, 70)
    amt = np.full(70, 3)
    _check_pieces(src, dst, amt)
    src2 = np.r_[src, src[:1]]
    dst2 = np.r_[dst, dst[:1]]
    item, start, _, _ = bna_items(src2, dst2, np.full(71, 3), rule="hk")
    assert start[item == 0].min() < start[item == 70].min()


@pytest.mark.parametrize("spread", [1, 8, 40, 10_000])
def test_ranks_match_unique(spread: int) -> None:
    """``_ranks`` (a pass over the value range, or a sort when the range is wide) against
    ``np.unique``'s inverse, on values ``spread`` times as wide as they are many."""
    from coflowopt.schedulers.dag.bna import _ranks

    rng = np.random.default_rng(spread)
    for n in (1, 2, 5, 30, 200, 900):
        x = rng.integers(0, spread * n + 1, n) + int(rng.integers(0, 50))
        r, k = _ranks(x)
        u, inv = np.unique(x, return_inverse=True)
        assert k == u.size and np.array_equal(r, inv)
