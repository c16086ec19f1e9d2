"""The sparse BSSI order (online Sincronia's re-ranking) against the dense one it replaces:
the same order, bit for bit, on random loads with ties, empty rows and zero entries."""

from __future__ import annotations

import numpy as np
import pytest

from coflowopt.orders import bssi_order, bssi_sparse_order


def _sparse(p: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rows, cols = np.nonzero(p >= 0.0)  # every entry, zeros included (a coflow's idle port)
    keep = (p[rows, cols] > 0.0) | (cols % 3 == 0)
    rows, cols = rows[keep], cols[keep]
    rptr = np.zeros(p.shape[0] + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=p.shape[0]), out=rptr[1:])
    return rptr, cols.astype(np.int64), p[rows, cols].copy()


@pytest.mark.parametrize("seed", range(40))
def test_sparse_bssi_is_the_dense_order(seed) -> None:
    rng = np.random.default_rng(seed)
    n, P = int(rng.integers(1, 30)), int(rng.integers(1, 25))
    p = rng.integers(0, 4, size=(n, P)).astype(float)  # small integers: many ties
    p[rng.random((n, P)) < 0.5] = 0.0
    if seed % 5 == 0:
        p[rng.integers(0, n)] = 0.0  # a row with no load
    w = rng.integers(1, 4, size=n).astype(float)
    rptr, rcol, rval = _sparse(p)
    assert np.array_equal(bssi_sparse_order(rptr, rcol, rval, P, w), bssi_order(p, w))


@pytest.mark.parametrize("seed", range(12))
def test_sparse_bssi_on_wide_rows_in_any_column_order(seed) -> None:
    """Rows over many of up to 300 columns, each row's entries shuffled (the engine lists a
    coflow's ports as its flows first use them): the max tree is renewed once per inner node
    at each step, whatever the order of the selected row's columns."""
    rng = np.random.default_rng(100 + seed)
    n, P = int(rng.integers(2, 40)), int(rng.integers(40, 300))
    p = rng.integers(0, 5, size=(n, P)).astype(float)
    p[rng.random((n, P)) < rng.uniform(0.2, 0.9)] = 0.0
    w = rng.integers(1, 5, size=n).astype(float)
    rptr, rcol, rval = _sparse(p)
    for j in range(n):
        perm = rng.permutation(rptr[j + 1] - rptr[j]) + rptr[j]
        rcol[rptr[j]:rptr[j + 1]] = rcol[perm]
        rval[rptr[j]:rptr[j + 1]] = rval[perm]
    assert np.array_equal(bssi_sparse_order(rptr, rcol, rval, P, w), bssi_order(p, w))
