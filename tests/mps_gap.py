"""Seed 306 of ``benchmarks/bench_cofair.py``'s small generator, written out by hand: the
instance where ``E_MPS = 21/19`` is below ``E* = 5/4`` (issue 26, item 1).

Three coflows on 5 ports (unit capacity; flow: sender -> receiver: volume):
C0 = {4->0: 1}; C1 = {0->3: 8, 4->2: 13}; C2 = {1->1: 1, 0->1: 13, 4->1: 5}.
Isolation times ``C^0`` = 1, 13, 19.

By hand:

- MPS (ascending ``C^0``: C0, C1, C2) prefix makespans 1, 14 (sender 4), 21 (sender 0), so
  ``E_MPS = max(1/1, 14/13, 21/19) = 21/19``.
- ``E* >= 5/4``: let ``D1 = 13 E``, ``D2 = 19 E``.  Sender 4 must carry C0 and C1's 14 units
  by ``D1``, so C2's flow 4->1 sends at most ``D1 - 14`` before ``D1`` and at least
  ``19 - D1`` after it; receiver 1 is free ``D2 - D1`` after ``D1``, so C2's flows 0->1 and
  1->1 send at most ``D2 - 19`` after ``D1`` and C2's 0->1 at least ``32 - D2`` before it.
  Sender 0 then carries ``8 + 32 - D2`` by ``D1``: ``D1 + D2 >= 40``, i.e. ``32 E >= 40``.
- ``E* <= 5/4``: :func:`witness` meets ``D = 1.25, 16.25, 23.75`` (slowdowns 1, 1.25, 1.25).
"""

from __future__ import annotations

from coflowopt import CoflowSpec, Instance, Schedule, build_instance

E_MPS = 21 / 19
E_STAR = 5 / 4


def seed306() -> Instance:
    return build_instance(5, coflows=[
        CoflowSpec([(4, 0, 1.0)], id="C0"),
        CoflowSpec([(0, 3, 8.0), (4, 2, 13.0)], id="C1"),
        CoflowSpec([(1, 1, 1.0), (0, 1, 13.0), (4, 1, 5.0)], id="C2")])


def witness() -> Schedule:
    """A schedule meeting ``E = 5/4`` (flows numbered as listed, all at rate 1): C0 on
    [0, 1]; C1's 4->2 on [1, 14], its 0->3 on [8.25, 16.25]; C2's 1->1 on [8.25, 9.25], its
    0->1 on [0, 8.25] and [19, 23.75], its 4->1 on [14, 19]."""
    t = [0.0, 1.0, 8.25, 9.25, 14.0, 16.25, 19.0, 23.75]
    flow = [0, 2, 1, 3, 4, 4, 5]
    first = [0, 1, 2, 2, 0, 6, 4]
    last = [1, 4, 5, 3, 2, 7, 6]
    return Schedule.from_segments(t, flow, [1.0] * 7, first, last)
