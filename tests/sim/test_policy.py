"""The open policy interface (:mod:`coflowopt.sim.policy`): a compiled ``key`` and a Python
``rerank`` on the compiled engine, against the reference engine and a hand-worked example."""

from __future__ import annotations

import numba
import numpy as np
import pytest
from hypothesis import given, settings
from strategies import instances, least_remaining

from coflowopt import CoflowSpec, Instance, Tolerance, ValidSchedule, build_instance, validate
from coflowopt.sim import order_schedule
from coflowopt.sim.policy import CompiledKey, compiled_key
from coflowopt.sim.stepper import Stepper


@numba.njit
def least_sent(s, c):
    """A non-clairvoyant key: least bytes sent first (reads ``sent`` only)."""
    tot = 0.0
    for i in range(s.ptr[c], s.ptr[c + 1]):
        tot += s.sent[s.order[i]]
    return tot


@numba.njit
def heaviest_first(s, c):
    """Largest weight first, then the widest (reads weight and width)."""
    return -s.weight[c] * 1000.0 - s.width[c]


def least_remaining_callback(view) -> np.ndarray:
    c = view.coflows
    rem = np.bincount(view.flow_coflow, weights=view.remaining,
                      minlength=view.coflow_width.shape[0])
    return c[np.lexsort((c, view.admitted[c], rem[c]))]


def _two_on_one_port() -> Instance:
    # A: 3 units at t=0; B: 1 unit released at 1, same ports; unit capacity
    return build_instance(1, coflows=[CoflowSpec([(0, 0, 3.0)]),
                                      CoflowSpec([(0, 0, 1.0)], release=1.0)])


def test_least_remaining_hand_worked() -> None:
    # at t=1 A has 2 left and B 1: B goes first (1..2), A finishes at 4; a fixed arrival
    # order (A before B) would finish A at 3 and B at 4
    inst = _two_on_one_port()
    for kw in ({"key": least_remaining}, {"rerank": least_remaining_callback}):
        for engine in ("fast", "reference"):
            v = validate(inst, order_schedule(inst, engine=engine, **kw))
            assert v.coflow_completion.tolist() == [4.0, 2.0], (kw, engine)
    v = validate(inst, order_schedule(inst, priority=[0.0, 1.0]))
    assert v.coflow_completion.tolist() == [3.0, 4.0]


def test_a_key_reads_static_fields() -> None:
    inst = build_instance(2, coflows=[CoflowSpec([(0, 0, 1.0)], weight=1.0),
                                      CoflowSpec([(0, 0, 1.0), (1, 1, 1.0)], weight=2.0),
                                      CoflowSpec([(0, 1, 1.0)], weight=2.0)])
    # weights 2, 2, 1: the wider of the weight-2 coflows (1) first, then 2, then 0
    v = order_schedule(inst, key=heaviest_first, check=Tolerance())
    by_order = validate(inst, order_schedule(inst, [1, 2, 0]))
    assert v.coflow_completion.tolist() == by_order.coflow_completion.tolist()


@settings(max_examples=40, deadline=None)
@given(inst=instances(max_ports=4, max_coflows=7))
def test_key_and_rerank_match_the_reference_engine(inst: Instance) -> None:
    ref = validate(inst, order_schedule(inst, rerank=least_remaining_callback,
                                        engine="reference"))
    ref_key = validate(inst, order_schedule(inst, key=least_remaining, engine="reference"))
    fast_key = order_schedule(inst, key=least_remaining, check=Tolerance())
    fast_cb = order_schedule(inst, rerank=least_remaining_callback, check=Tolerance())
    assert isinstance(fast_key, ValidSchedule) and fast_key.schedule is None
    for got in (ref_key, fast_key, fast_cb):
        np.testing.assert_allclose(got.coflow_completion, ref.coflow_completion, rtol=1e-9,
                                   atol=1e-9)


@settings(max_examples=30, deadline=None)
@given(inst=instances(max_ports=3, max_coflows=6))
def test_a_blind_key_matches_the_reference_engine(inst: Instance) -> None:
    ref = validate(inst, order_schedule(inst, key=least_sent, clairvoyant=False,
                                        engine="reference"))
    got = order_schedule(inst, key=least_sent, clairvoyant=False, check=Tolerance())
    np.testing.assert_allclose(got.coflow_completion, ref.coflow_completion, rtol=1e-9,
                               atol=1e-9)


@pytest.mark.parametrize("seed", range(3))
def test_the_stepper_agrees(seed: int) -> None:
    """A third engine: the decision-epoch stepper re-ranked by remaining bytes at every epoch
    (an epoch is an arrival or a departure, as for the key)."""
    from coflowopt.workloads.synthetic import synthetic_trace

    inst = synthetic_trace(25, seed=seed, ports=12, load=0.7)
    st = Stepper(inst)
    st.reset()
    done = False
    while not done:
        rem = np.bincount(inst.flow_coflow, weights=st.state.remaining,
                          minlength=inst.n_coflows)
        _, _, done = st.step(rem)
    want = st.validate().coflow_completion
    got = order_schedule(inst, key=least_remaining, check=Tolerance()).coflow_completion
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9)


def test_a_blind_key_cannot_read_volumes() -> None:
    with pytest.raises(numba.core.errors.TypingError, match="remaining"):
        compiled_key(least_remaining, clairvoyant=False)

    def peek(view):
        return view.remaining

    inst = _two_on_one_port()
    with pytest.raises(PermissionError):
        order_schedule(inst, rerank=peek, clairvoyant=False, check=Tolerance())


def test_plain_python_keys_are_compiled_and_reused() -> None:
    def by_position(s, c):
        return -float(c)

    ck = compiled_key(by_position)
    assert isinstance(ck, CompiledKey) and compiled_key(ck) is ck
    inst = build_instance(2, coflows=[CoflowSpec([(0, 0, 1.0)]), CoflowSpec([(0, 0, 1.0)])])
    v = order_schedule(inst, key=ck, check=Tolerance())
    assert v.coflow_completion.tolist() == [2.0, 1.0]


def test_a_rerank_error_reaches_the_caller() -> None:
    inst = _two_on_one_port()

    def broken(view):
        raise RuntimeError("my policy broke")

    with pytest.raises(RuntimeError, match="my policy broke"):
        order_schedule(inst, rerank=broken, check=Tolerance())
    with pytest.raises(ValueError, match="permutation"):
        order_schedule(inst, rerank=lambda view: view.coflows[:0], check=Tolerance())


def _overtaken_between_departures() -> Instance:
    # A: 4 units on port 1 and two half units on ports 2, 3 (total 5); B: 4.8 units on port 1.
    # At 0, B (4.8) is first; A's two small flows finish at 0.5 (flow completions, no
    # departure), leaving A 4 and B 4.3
    return build_instance(4, coflows=[
        CoflowSpec([(1, 1, 4.0), (2, 2, 0.5), (3, 3, 0.5)]), CoflowSpec([(1, 1, 4.8)])])


def test_every_event_hand_worked() -> None:
    """Re-ordered at every event, A overtakes B at 0.5 and holds port 1: A done at 4.5, B at
    4.5 + 4.3 = 8.8; re-ordered at arrivals and departures only, B keeps port 1 to 4.8 and A
    ends at 8.8.  Both engines, key and callback."""
    inst = _overtaken_between_departures()
    for kw in ({"key": least_remaining}, {"rerank": least_remaining_callback}):
        for engine in ("fast", "reference"):
            every = validate(inst, _stored(order_schedule(inst, every_event=True,
                                                          engine=engine, **kw)))
            np.testing.assert_allclose(every.coflow_completion, [4.5, 8.8], rtol=1e-12)
            once = validate(inst, _stored(order_schedule(inst, engine=engine, **kw)))
            np.testing.assert_allclose(once.coflow_completion, [8.8, 4.8], rtol=1e-12)
    with pytest.raises(ValueError, match="every_event"):
        order_schedule(inst, priority=[0.0, 1.0], every_event=True)


def _stored(out):
    return out.schedule if isinstance(out, ValidSchedule) else out


@pytest.mark.parametrize("seed", range(4))
def test_every_event_compiled_equals_reference(seed: int) -> None:
    from coflowopt.workloads.synthetic import synthetic_trace

    inst = synthetic_trace(20, seed=seed, ports=8, load=0.8)
    fast = order_schedule(inst, key=least_remaining, every_event=True, check=Tolerance())
    ref = validate(inst, order_schedule(inst, key=least_remaining, every_event=True,
                                        engine="reference"))
    np.testing.assert_allclose(fast.coflow_completion, ref.coflow_completion, rtol=1e-9,
                               atol=1e-9)
