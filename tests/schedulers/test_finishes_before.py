"""Finishes-Before edges: every registry entry either honours them (its schedule passes the
validator on instances built to break a scheduler that ignores them) or refuses the instance
before any work, in one line naming the job and the coflow (issue 26, item 4)."""

from __future__ import annotations

import dataclasses

import pytest

import coflowopt as co
from coflowopt.model import CoflowSpec, Instance, JobSpec, build_instance
from coflowopt.schedulers import UnsupportedInstance
from coflowopt.schedulers.registry import register, registry, unregister


def _instances() -> dict[str, Instance]:
    """Three cases where ignoring the edge a -> b (b may not finish before a) breaks it."""
    return {
        # the successor b comes first by position and is tiny; its predecessor a is large
        "reversed": build_instance(3, jobs=[JobSpec(
            [CoflowSpec([(0, 1, 1.0)], id="b"), CoflowSpec([(0, 0, 4.0), (1, 1, 2.0)], id="a")],
            finishes_before=[(1, 0)], id="J0")]),
        # the predecessor is released after the successor could have finished
        "late": build_instance(3, jobs=[JobSpec(
            [CoflowSpec([(0, 0, 2.0)], id="a", release=3.0), CoflowSpec([(1, 1, 1.0)], id="b")],
            finishes_before=[(0, 1)], id="J0")]),
        # on disjoint ports, with a Starts-After edge too and a second job
        "mixed": build_instance(3, jobs=[
            JobSpec([CoflowSpec([(0, 0, 5.0)], id="a"), CoflowSpec([(1, 1, 1.0)], id="b"),
                     CoflowSpec([(2, 1, 1.0)], id="c")],
                    starts_after=[(1, 2)], finishes_before=[(0, 1)], id="J0"),
            JobSpec([CoflowSpec([(2, 2, 1.0)], id="d")], id="J1")]),
    }


def _boom(*args: object, **kwargs: object) -> None:
    raise AssertionError("the scheduler ran on an instance it should have refused")


@pytest.mark.parametrize("key", sorted(registry(None)))
def test_every_entry_honours_or_refuses(key: str) -> None:
    info = registry(None)[key]
    for label, inst in _instances().items():
        if info.finishes_before:
            res = co.run(inst, info, seed=0)  # raises InfeasibleSchedule if an edge is broken
            assert res.valid is not None, (key, label)
            continue
        stub = dataclasses.replace(info, _impl=_boom)  # any call of the algorithm fails
        with pytest.raises(UnsupportedInstance) as exc:
            co.run(inst, stub, seed=0)
        msg = str(exc.value)
        assert "\n" not in msg and msg.startswith(info.name), msg
        assert "'J0'" in msg or "J0" in msg, msg  # names the job


def test_finishes_before_refusal_names_job_and_coflow() -> None:
    inst = _instances()["reversed"]
    why = registry()["varys"].refusal(inst)
    assert why == ("varys cannot run this instance: it does not honour Finishes-Before edges, "
                   "and job 'J0' has one (into coflow 'b')")
    # the Starts-After support is unchanged: the same jobs without the edge run
    plain = build_instance(3, jobs=[JobSpec([CoflowSpec([(0, 1, 1.0)], id="b"),
                                             CoflowSpec([(0, 0, 4.0)], id="a")],
                                            starts_after=[(1, 0)], id="J0")])
    assert registry()["varys"].refusal(plain) is None


def test_plugin_declares_finishes_before() -> None:
    inst = _instances()["late"]
    seq = registry()["sequential"]

    @register("test-fb-yes", kind="offline", clairvoyant=True, finishes_before=True)
    def fb_yes(instance: Instance, *, seed: object = None) -> co.Schedule:
        return seq(instance)

    @register("test-fb-no", kind="offline", clairvoyant=True)
    def fb_no(instance: Instance, *, seed: object = None) -> co.Schedule:
        return seq(instance)

    try:
        assert registry()["test-fb-yes"].refusal(inst) is None
        assert "does not honour Finishes-Before" in registry()["test-fb-no"].refusal(inst)
    finally:
        unregister("test-fb-yes")
        unregister("test-fb-no")
