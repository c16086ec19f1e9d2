"""DMA's merge executed run by run (``merge_stream.run_merged``) against the merged plan
executed whole (``slots.run_plan`` streamed, ``plan_to_schedule`` stored): the validator must
end in the same state, breakpoint for breakpoint."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import pytest

from coflowopt.model import Fabric, Instance
from coflowopt.proofs_check.instances import random_dag_jobs
from coflowopt.schedulers.dag import merge_stream, slots
from coflowopt.schedulers.dag.dma import DMAParams, dma_cut, resolve_cut, run_dma
from coflowopt.schedulers.dag.gdm import GDMParams, GDMRTParams, gdm_plan, run_gdm, run_gdm_rt
from coflowopt.schedulers.dag.rooted import DMARTParams, dma_rt_plan, run_dma_rt
from coflowopt.schedulers.dag.slots import plan_to_schedule, run_plan, slot_demand
from coflowopt.sim.sink import RateSink
from coflowopt.validate import StreamValidator, validate
from coflowopt.workloads import dags
from coflowopt.workloads.dags import CoflowClassMix


class _Kept(StreamValidator):
    """A validator that stays reachable after the run, with its final breakpoints."""

    made: ClassVar[list[_Kept]] = []

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        _Kept.made.append(self)


def _instances() -> list:
    rng = np.random.default_rng(23)
    out = [random_dag_jobs(rng, jobs=(2, 5), per_job=(1, 4), max_coflows=10, releases=False)
           for _ in range(10)]
    mix = CoflowClassMix.single(1, 4, 1, 6)
    out += [dags.layered_dags(4, ports=5, layers=(2, 3), width=(1, 3), seed=s, mix=mix)
            for s in range(3)]
    # ports of rate 0.1: a port's load, a sum of +-0.1 over the changes, then rounds with
    # their order, so the validator's loads also check the order of the changes at a time
    return out + [_on_rate(inst, 0.1) for inst in out[:6]]


def _on_rate(inst: Instance, rate: float) -> Instance:
    return Instance.from_arrays(
        Fabric.uniform(inst.ports, rate), inst.flow_src, inst.flow_dst, inst.flow_volume,
        inst.flow_coflow, coflow_job=inst.coflow_job, n_jobs=inst.n_jobs,
        starts_after=inst.starts_after)


def _final(run, monkeypatch: pytest.MonkeyPatch, module) -> _Kept:
    _Kept.made.clear()
    monkeypatch.setattr(module, "StreamValidator", _Kept)
    out = run()
    assert len(_Kept.made) == 1 and out.streamed
    return _Kept.made[0]


@pytest.mark.parametrize(("quantum", "batch", "span"),
                         [(1.0, 1 << 20, 1 << 31), (0.3, 1, 1 << 31), (0.7, 4, 3),
                          (1.0, 1 << 20, 1)])
def test_same_validator_state_as_the_whole_plan(quantum: float, batch: int, span: int,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Volumes that are not multiples of the quantum cut segments short inside a slot; a
    buffer of 5 changes makes the sweep hand over many buffers, and a piece of one flow
    often ends where its next one starts (joined across runs).  Batches of one run (a key
    or more), of 4 keys or 3 slots, and of one slot (every run begins a new batch before
    it) pass the changes on at every kind of batch end."""
    monkeypatch.setattr(merge_stream, "_BUF", 5)
    monkeypatch.setattr(merge_stream, "_BATCH", batch)
    monkeypatch.setattr(merge_stream, "_SPAN", span)
    for i, inst in enumerate(_instances()):
        p = DMAParams(quantum=quantum, rule="hk")
        new = _final(lambda inst=inst, p=p, i=i: run_dma(inst, p, RateSink.streaming(), seed=i),
                     monkeypatch, merge_stream)
        cut = dma_cut(inst, np.arange(inst.n_jobs), slot_demand(inst, quantum),
                      rng=np.random.default_rng(i), beta=p.beta, rule="hk")
        plan = resolve_cut(inst, cut, rule="hk")
        old = _final(lambda inst=inst, plan=plan: run_plan(
            inst, plan, quantum=quantum, sink=RateSink.streaming()), monkeypatch, slots)
        assert np.array_equal(new.breakpoints, old.breakpoints), i
        for a, b in zip(new.state, old.state, strict=True):
            assert np.array_equal(a, b), i
        stored = validate(inst, plan_to_schedule(inst, plan, quantum=quantum))
        got = new.result()
        assert np.array_equal(got.flow_start, stored.flow_start)
        assert np.array_equal(got.flow_completion, stored.flow_completion)
        assert got.end == stored.end == old.breakpoints[-1]


def test_origin_and_meta(monkeypatch: pytest.MonkeyPatch) -> None:
    """A later origin shifts every breakpoint as ``run_plan`` shifts it; the run's ``slots``
    is the merged plan's makespan."""
    inst = _instances()[3]
    cut = dma_cut(inst, np.arange(inst.n_jobs), slot_demand(inst, 0.3),
                  rng=np.random.default_rng(4), rule="hk")
    plan = resolve_cut(inst, cut, rule="hk")
    new = _final(lambda: merge_stream.run_merged(inst, cut, quantum=0.3, origin=7.25,
                                                 sink=RateSink.streaming()),
                 monkeypatch, merge_stream)
    old = _final(lambda: run_plan(inst, plan, quantum=0.3, origin=7.25,
                                  sink=RateSink.streaming()), monkeypatch, slots)
    assert new.breakpoints[0] >= 7.25
    assert np.array_equal(new.breakpoints, old.breakpoints)
    for a, b in zip(new.state, old.state, strict=True):
        assert np.array_equal(a, b)
    assert cut.total == plan.makespan
    out = run_dma(inst, DMAParams(quantum=0.3, rule="hk"), RateSink.streaming(), seed=4)
    assert out.meta["slots"] == plan.makespan


def test_needs_a_streaming_sink_and_one_port_rate() -> None:
    inst = _instances()[0]
    cut = dma_cut(inst, np.arange(inst.n_jobs), slot_demand(inst), rng=np.random.default_rng(0),
                  rule="hk")
    with pytest.raises(ValueError, match="must stream"):
        merge_stream.run_merged(inst, cut, sink=RateSink.store())
    mixed = Instance.from_arrays(
        Fabric(inst.ports, np.r_[2.0, np.ones(inst.ports - 1)], np.ones(inst.ports)),
        inst.flow_src, inst.flow_dst, inst.flow_volume, inst.flow_coflow,
        coflow_job=inst.coflow_job, n_jobs=inst.n_jobs, starts_after=inst.starts_after)
    with pytest.raises(ValueError, match="port in 0 has 2"):
        merge_stream.run_merged(mixed, cut, sink=RateSink.streaming())


def test_gdm_groups_joined(monkeypatch: pytest.MonkeyPatch) -> None:
    """G-DM's groups follow each other (idle slots between them when a release waits): their
    runs joined and swept give the validator the state ``run_plan`` gives on G-DM's plan."""
    rng = np.random.default_rng(5)
    insts = [random_dag_jobs(rng, jobs=(3, 6), per_job=(1, 3), max_coflows=10, releases=True)
             for _ in range(6)]
    for i, inst in enumerate(insts):
        p = GDMParams(quantum=0.7, rule="hk")
        new = _final(lambda inst=inst, p=p, i=i: run_gdm(inst, p, RateSink.streaming(), seed=i),
                     monkeypatch, merge_stream)
        plan, _, _ = gdm_plan(inst, p, np.random.default_rng(i))
        old = _final(lambda inst=inst, plan=plan: run_plan(
            inst, plan, quantum=0.7, sink=RateSink.streaming()), monkeypatch, slots)
        assert np.array_equal(new.breakpoints, old.breakpoints), i
        for a, b in zip(new.state, old.state, strict=True):
            assert np.array_equal(a, b), i
    cut = dma_cut(insts[0], np.arange(insts[0].n_jobs), slot_demand(insts[0]),
                  rng=np.random.default_rng(0), rule="hk")
    with pytest.raises(ValueError, match="before part 0 ends"):
        merge_stream.join_runs([(cut, 0), (cut, cut.total - 1)])
    assert merge_stream.join_runs([]) is None


def _same_as_plan(inst: Instance, streamed, plan, quantum: float, i: int,
                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The streamed run's final validator state and breakpoints equal ``run_plan``'s on
    ``plan``."""
    new = _final(streamed, monkeypatch, merge_stream)
    old = _final(lambda: run_plan(inst, plan, quantum=quantum, sink=RateSink.streaming()),
                 monkeypatch, slots)
    assert np.array_equal(new.breakpoints, old.breakpoints), i
    for a, b in zip(new.state, old.state, strict=True):
        assert np.array_equal(a, b), i


@pytest.mark.parametrize("l_I", [1, 2, "sqrt"])
def test_rooted_trees_streamed(l_I: int | str, monkeypatch: pytest.MonkeyPatch) -> None:
    """DMA-RT and G-DM-RT merge their DMA-SRT plans as DMA does: streamed, the validator ends
    in the state ``run_plan`` gives on their plans (fan-in and fan-out trees, jobs released
    over time for G-DM-RT, ports of rate 0.1 for the order of the changes at a time)."""
    mix = CoflowClassMix.single(1, 3, 1, 5)
    for i in range(6):
        kind = "fan-in" if i % 2 else "fan-out"
        off = dags.rooted_trees(3 + i % 3, ports=4, kind=kind, nodes=(1, 6), seed=40 + i,
                                mix=mix)
        rel = dags.rooted_trees(3 + i % 3, ports=4, kind=kind, nodes=(1, 6), seed=50 + i,
                                mix=mix, arrival_rate=0.2)
        if i >= 4:
            off, rel = _on_rate(off, 0.1), _on_rate(rel, 0.1)
        pr = DMARTParams(quantum=0.7, l_I=l_I, rule="hk")
        plan = dma_rt_plan(off, np.arange(off.n_jobs), slot_demand(off, 0.7),
                           rng=np.random.default_rng(i), l_I=l_I, rule="hk")
        _same_as_plan(off, lambda off=off, pr=pr, i=i: run_dma_rt(
            off, pr, RateSink.streaming(), seed=i), plan, 0.7, i, monkeypatch)
        out = run_dma_rt(off, pr, RateSink.streaming(), seed=i)
        assert out.meta["slots"] == plan.makespan
        pg = GDMRTParams(quantum=0.7, l_I=l_I, rule="hk")
        plan, _, _ = gdm_plan(rel, pg, np.random.default_rng(i), rooted=True)
        _same_as_plan(rel, lambda rel=rel, pg=pg, i=i: run_gdm_rt(
            rel, pg, RateSink.streaming(), seed=i), plan, 0.7, i, monkeypatch)
        out = run_gdm_rt(rel, pg, RateSink.streaming(), seed=i)
        assert out.meta["makespan_slots"] == plan.makespan
