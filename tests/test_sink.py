"""The one rate sink (:mod:`coflowopt.sim.sink`): every scheduler has one signature and returns
one outcome; none picks a tolerance or validates its own output."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import numpy as np
import pytest

import coflowopt as co
from coflowopt.schedulers import get
from coflowopt.schedulers.registry import registry
from coflowopt.sim.sink import Outcome, RateSink
from coflowopt.workloads.dags import layered_dags
from coflowopt.workloads.synthetic import synthetic_trace

PKG = Path(co.__file__).resolve().parent


def _imported_names(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            names.update(a.name for a in node.names)
    return names


def test_no_scheduler_imports_tolerance() -> None:
    bad = [str(p.relative_to(PKG)) for p in (PKG / "schedulers").rglob("*.py")
           if "Tolerance" in _imported_names(p)]
    assert bad == []


def test_every_entry_has_the_one_signature() -> None:
    seen = 0
    for info in registry(None).values():
        params = inspect.signature(info.impl).parameters
        names = list(params)
        assert names[:3] == ["instance", "params", "sink"], (info.name, names)
        assert params["seed"].kind is inspect.Parameter.KEYWORD_ONLY, info.name
        assert params["progress"].kind is inspect.Parameter.KEYWORD_ONLY, info.name
        assert "check" not in params, info.name
        seen += 1
    assert seen >= 30


@pytest.mark.parametrize("name", ["varys", "sincronia", "fair", "gdm", "sequential"])
def test_streamed_and_stored_outcomes_agree(name: str) -> None:
    info = get(name)
    inst = (layered_dags(3, ports=4, seed=2) if name == "gdm"
            else synthetic_trace(12, ports=6, seed=3))
    p = info.make_params(None)
    stored = info.impl(inst, p, RateSink.store(), seed=0)
    streamed = info.impl(inst, p, RateSink.streaming(co.Tolerance()), seed=0)
    assert isinstance(stored, Outcome) and stored.valid is None
    assert isinstance(streamed, Outcome)
    ref = co.validate(inst, stored.schedule).coflow_completion
    got = (streamed.valid if streamed.streamed
           else co.validate(inst, streamed.schedule)).coflow_completion
    assert np.allclose(got, ref, rtol=1e-12, atol=1e-12)
    if info.streams:
        assert streamed.streamed and streamed.schedule is None


def test_outcome_holds_exactly_one() -> None:
    inst = synthetic_trace(3, ports=3, seed=0)
    s = get("fifo")(inst)
    with pytest.raises(ValueError, match="exactly one"):
        Outcome(None, None)
    with pytest.raises(ValueError, match="exactly one"):
        Outcome(s, co.validate(inst, s))
    assert RateSink.store().check is None
    assert RateSink.streaming().check == co.Tolerance()


def test_the_public_call_returns_the_stored_schedule() -> None:
    inst = synthetic_trace(5, ports=4, seed=1)
    s = get("varys")(inst)
    assert isinstance(s, co.Schedule) and s.meta["scheduler"] == "varys"


def test_coflowsim_outcome_names_its_instance_and_tolerance() -> None:
    """A CoflowSim entry's rates are of the rounded instance, validated with the mode's
    finishing rule; stored and streamed give the same completions."""
    from coflowopt.sim.coflowsim import coflowsim

    inst = synthetic_trace(10, ports=5, seed=2)
    info = get("sebf", "coflowsim")
    p = info.make_params(None)
    stored = info.impl(inst, p, RateSink.store())
    streamed = info.impl(inst, p, RateSink(True, None))
    ref = coflowsim(inst, "sebf", params=p)
    assert stored.instance is not None and stored.tolerance == ref.tolerance
    assert np.array_equal(stored.instance.flow_volume, ref.instance.flow_volume)
    v = co.validate(stored.instance, stored.schedule, stored.tolerance)
    assert streamed.streamed
    assert np.allclose(v.coflow_completion, streamed.valid.coflow_completion, rtol=1e-12)
