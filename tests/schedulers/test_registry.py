"""The registry: one explicit table, lazy entries, parameter dataclasses, refusals."""

from __future__ import annotations

import dataclasses

import pytest

from coflowopt import CoflowSpec, JobSpec, ParamsError, build_instance, run
from coflowopt.schedulers import SchedulerInfo, UnsupportedInstance, get, registry


def _dag():
    return build_instance(2, jobs=[JobSpec([CoflowSpec([(0, 1, 1.0)]),
                                            CoflowSpec([(1, 0, 1.0)])],
                                           starts_after=[(0, 1)], id="j7")])


def test_every_entry_resolves_and_has_a_params_dataclass() -> None:
    for key, info in registry(None).items():
        assert callable(info.impl), key
        assert dataclasses.is_dataclass(info.params_class), key
        info.make_params({})  # the defaults are valid


def test_both_semantics_listed_with_families() -> None:
    allr = registry(None)
    assert "varys" in allr and "coflowsim:sebf" in allr
    assert {i.family for i in allr.values()} >= {"single", "baseline"}
    # CoflowSim's eight schedulers, and A-SEBF in its semantics (spec §10.4)
    assert set(registry("coflowsim")) == {"sebf", "dark", "fifo", "scf", "ncf", "lcf", "fair",
                                          "pfp", "a-sebf"}


def test_names_are_case_insensitive_and_aliases_resolve() -> None:
    assert get("VARYS") is get("varys")
    assert get("Varys", "coflowsim") is get("sebf", "coflowsim")
    assert get("AALO", "coflowsim").name == "dark"
    with pytest.raises(KeyError, match="unknown scheduler 'nope'"):
        get("nope")


def test_unknown_and_mistyped_parameters_name_the_field() -> None:
    with pytest.raises(ParamsError, match=r"varys\.alocation: unknown parameter"):
        get("varys").make_params({"alocation": "madd"})
    with pytest.raises(ParamsError, match=r"aalo\.queues: expected int, got 'ten'"):
        get("aalo").make_params({"queues": "ten"})
    with pytest.raises(ParamsError, match=r"sincronia\.mode: expected one of 'online', 'offline'"):
        get("sincronia").make_params({"mode": "both"})
    with pytest.raises(ParamsError, match=r"schedulers\[2\]\.params\.first"):
        get("a-sebf").make_params({"first": [1]}, where="schedulers[2].params")
    # an int where a float is declared is taken, and lists become tuples
    p = get("aalo").make_params({"first": 3, "thresholds": [1, 2]})
    assert p.first == 3.0 and p.thresholds == (1.0, 2.0)
    with pytest.raises(ParamsError):
        get("sebf", "coflowsim").make_params({"quantum": 8})


def test_lazy_entry_that_fails_to_import_names_itself() -> None:
    info = SchedulerInfo("ghost", "coflowopt_no_such_module:run", None, "online", False,
                         "plugin", "a missing module")
    with pytest.raises(ImportError, match="scheduler 'ghost': cannot import "
                                          "coflowopt_no_such_module"):
        _ = info.impl


def test_unsupported_pairs_are_refused_before_running() -> None:
    dag = _dag()
    why = get("sebf", "coflowsim").refusal(dag)
    assert why is not None and "single-stage" in why and "j7" in why and "\n" not in why
    with pytest.raises(UnsupportedInstance, match="single-stage"):
        run(dag, "sebf", semantics="coflowsim")
    assert get("varys").refusal(dag) is None  # the simulator honours Starts-After


def test_public_call_returns_a_schedule_and_run_validates_it() -> None:
    inst = _dag()
    sched = get("varys")(inst)
    res = run(inst, "varys", keep_schedule=True)
    assert res.valid.schedule is not None
    assert res.valid.coflow_completion.tolist() == [1.0, 2.0]  # hand-worked: 1 unit each
    assert sched.n_segments == res.valid.schedule.n_segments
    assert res.params == get("varys").params_class()


def test_the_proven_factor_applies_only_where_its_assumptions_hold() -> None:
    sinc = get("sincronia")
    batch = build_instance(2, coflows=[CoflowSpec([(0, 1, 1.0)]), CoflowSpec([(1, 0, 2.0)])])
    released = build_instance(2, coflows=[CoflowSpec([(0, 1, 1.0)]),
                                          CoflowSpec([(1, 0, 2.0)], release=1.0)])
    off = {"mode": "offline"}  # the paper's algorithm; the default mode is online
    assert sinc.factor_for("weighted_completion", batch, off) == "4"
    assert sinc.factor_for("weighted_completion", batch) is None
    assert sinc.factor_for("avg_cct", batch, off) is None  # not the objective it bounds
    assert sinc.factor_for("weighted_completion", released, off) is None  # releases > 0
    assert sinc.factor_for("weighted_completion", _dag(), off) is None  # not single-stage
    assert get("varys").factor_for("avg_cct", batch) is None  # no factor at all


def test_factors_carry_their_provenance_tag(capsys) -> None:
    """[R]: the paper states the factor; [C]: ours (dag-coflows 6.5: the BF rule is our
    reconstruction, its guarantee our argument).  A new field with a default: an entry built
    without it is [R]."""
    from coflowopt.cli import main
    from coflowopt.schedulers.registry import FACTOR_LEGEND

    assert get("sincronia").factor_label == "4 [R]"
    assert get("dma-srt").factor_label == "O(sqrt(mu) h(m,mu)) [R]"
    assert get("gdm-bf").factor_label == "O(mu g(m)) [C]"
    assert get("gdm-rt-bf").factor_source == "C"
    assert get("varys").factor_label == "-"  # no factor, no tag
    plain = SchedulerInfo("x", "m:f", None, "online", False, "plugin", "s", factor="2")
    assert plain.factor_source == "R" and plain.factor_label == "2 [R]"
    with pytest.raises(ValueError, match="factor_source must be one of"):
        SchedulerInfo("x", "m:f", None, "online", False, "plugin", "s", factor_source="S")
    assert main(["schedulers"]) == 0
    out = capsys.readouterr().out
    assert "O(mu g(m)) [C]" in out and out.rstrip().endswith(FACTOR_LEGEND)
    assert "[R] recovered from the paper, [C] reconstructed by us" in FACTOR_LEGEND


def test_numpy_arrays_are_taken_for_sequence_parameters() -> None:
    import numpy as np

    p = get("sequential").make_params({"order": np.array([1, 0])})
    assert p.order == (1, 0) and all(type(x) is int for x in p.order)


def only_two_coflows(instance):  # a structural support test, loaded lazily by the entry below
    return None if instance.n_coflows == 2 else f"needs 2 coflows, got {instance.n_coflows}"


def test_a_structural_support_test_refuses_in_one_line() -> None:
    info = SchedulerInfo("two-only", "coflowopt.schedulers.baselines:run_sequential",
                         "coflowopt.schedulers.baselines:SequentialParams", "offline", True,
                         "plugin", "test entry", supports=f"{__name__}:only_two_coflows")
    one = build_instance(2, coflows=[CoflowSpec([(0, 1, 1.0)])])
    two = build_instance(2, coflows=[CoflowSpec([(0, 1, 1.0)]), CoflowSpec([(1, 0, 2.0)])])
    assert info.refusal(two) is None
    why = info.refusal(one)
    assert why == "two-only cannot run this instance: needs 2 coflows, got 1"
    with pytest.raises(UnsupportedInstance, match="needs 2 coflows"):
        run(one, info)
    assert run(two, info).valid.coflow_completion.max() == pytest.approx(3.0)  # one after another
