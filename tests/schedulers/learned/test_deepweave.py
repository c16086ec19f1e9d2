"""The deepweave scheduler on the base install: the shipped checkpoint loads without torch,
schedules DAG workloads through the run service (validated), same seed same schedule."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import coflowopt
from coflowopt.model import CoflowSpec, JobSpec, build_instance
from coflowopt.schedulers.learned.checkpoint import load_checkpoint, save_checkpoint
from coflowopt.schedulers.learned.deepweave import (
    DeepWeaveParams,
    deepweave_checkpoint_info,
    deepweave_priorities,
)
from coflowopt.schedulers.learned.features import job_batches
from coflowopt.schedulers.learned.network import DeepWeaveConfig, forward, init_params
from coflowopt.schedulers.registry import UnsupportedInstance, get
from coflowopt.sim.drive import order_schedule
from coflowopt.validate import validate
from coflowopt.workloads.dags import ggen_fan_in_fan_out, tpcds_like

PARAMS = [{}, {"converter": "aligned"}, {"rerank": "events"}, {"across": "global"},
          {"converter": "aligned", "across": "global"}]


def _workloads():
    return [tpcds_like(3, ports=6, seed=1),
            ggen_fan_in_fan_out(2, ports=6, nodes=(4, 16), seed=2, arrival_rate=1e-3)]


@pytest.mark.parametrize("k", range(len(PARAMS)))
def test_runs_validated_on_dag_workloads(k):
    for inst in _workloads():
        r = coflowopt.run(inst, "deepweave", params=PARAMS[k], seed=0)
        s = r.summary()
        assert s["coflows"] == inst.n_coflows and np.isfinite(s["avg_jct"])


def _v1_checkpoint(path) -> str:
    """A per-job (feature set v1, policy head) checkpoint: the path these tests are about
    (the shipped checkpoint is an instance-wide v2 one since issue 30)."""
    from coflowopt.schedulers.learned.checkpoint import write_placeholder

    return str(write_placeholder(path / "v1.npz", seed=3))


def test_greedy_streams_and_is_the_shared_order_path(tmp_path):
    """converter='greedy' = the per-job priorities (numpy forward), jobs by arrival then
    priority, through order_schedule: equal completion times to that composition by hand."""
    inst = ggen_fan_in_fan_out(2, ports=6, nodes=(4, 16), seed=2, arrival_rate=1e-3)
    ck = _v1_checkpoint(tmp_path)
    r = coflowopt.run(inst, "deepweave", seed=0, params={"checkpoint": ck})
    assert r.streamed
    params, cfg, _ = load_checkpoint(ck)
    keys = []
    for b in job_batches(inst):
        pri = forward(params, cfg, b)
        keys += [(inst.job_release[b.job], b.job, -p, int(c))
                 for p, c in zip(pri, b.coflows, strict=True)]
    order = [k[3] for k in sorted(keys)]
    want = validate(inst, order_schedule(inst, order=order))
    np.testing.assert_allclose(r.valid.coflow_completion, want.coflow_completion)


def test_same_seed_same_schedule():
    inst = tpcds_like(2, ports=6, seed=5)
    for prm in ({"converter": "aligned"}, {"rerank": "events"}):
        a = coflowopt.run(inst, "deepweave", params=prm, seed=3, keep_schedule=True)
        b = coflowopt.run(inst, "deepweave", params=prm, seed=3, keep_schedule=True)
        assert a.schedule == b.schedule


def test_a_jobs_priorities_ignore_other_jobs(tmp_path):
    """Online (feature set v1): a job's static priorities come from its own DAG only."""
    params, cfg, _ = load_checkpoint(_v1_checkpoint(tmp_path))
    one = tpcds_like(1, ports=6, seed=8)
    two = tpcds_like(2, ports=6, seed=8, arrival_rate=1e-3)  # same first job, then another
    n = one.n_coflows
    np.testing.assert_array_equal(deepweave_priorities(one, params, cfg),
                                  deepweave_priorities(two, params, cfg)[:n])


def test_checkpoint_info_and_registry_row():
    info = deepweave_checkpoint_info()
    _, _, meta = load_checkpoint()
    assert info["trained"] == meta["trained"] and info["path"].endswith("deepweave.npz")
    row = get("deepweave")
    # offline: the shipped policy's features read the whole instance, unreleased jobs too
    assert row.family == "learned" and row.kind == "offline" and row.clairvoyant
    assert row.multistage and row.job_objective and row.objective == "average JCT (learned)"
    assert "checkpoint meta" in row.summary
    r = coflowopt.run(tpcds_like(1, ports=4, seed=0), "deepweave")
    assert r.valid.meta["trained"] == meta["trained"]


def test_own_checkpoint_and_size_limit(tmp_path):
    cfg = DeepWeaveConfig(v_max=4)
    path = tmp_path / "small.npz"
    save_checkpoint(path, init_params(cfg, 1), cfg, {"trained": True, "seed": 1})
    inst = build_instance(4, jobs=[JobSpec([CoflowSpec([(0, 1, 1.0)]),
                                            CoflowSpec([(1, 2, 2.0)])], starts_after=[(0, 1)],
                                           id="small")])
    r = coflowopt.run(inst, "deepweave", params={"checkpoint": str(path)})
    assert r.valid.meta["trained"] is True
    big = tpcds_like(1, ports=4, seed=0, critical_path=5)
    with pytest.raises(ValueError, match=r"job 0 has \d+ coflows, more than the checkpoint's "
                                         r"v_max = 4"):
        coflowopt.run(big, "deepweave", params={"checkpoint": str(path)})
    with pytest.raises(FileNotFoundError, match=r"missing\.npz"):
        coflowopt.run(inst, "deepweave", params={"checkpoint": str(tmp_path / "missing.npz")})


def test_refusals_and_parameter_checks():
    job = JobSpec([CoflowSpec([(0, 1, 1.0)], id="a"), CoflowSpec([(1, 0, 1.0)], id="b")],
                  finishes_before=[(0, 1)], id="J")
    inst = build_instance(2, jobs=[job])
    with pytest.raises(UnsupportedInstance, match="Finishes-Before"):
        coflowopt.run(inst, "deepweave")
    with pytest.raises(ValueError, match="rerank"):
        DeepWeaveParams(converter="aligned", rerank="events")
    with pytest.raises(Exception, match="converter"):
        DeepWeaveParams(converter="sideways")


def test_works_with_torch_hidden():
    """The base install: torch cannot be imported, the shipped checkpoint still schedules a
    DAG through the run service, and importing coflowopt loads no torch."""
    code = textwrap.dedent("""
        import sys
        sys.modules["torch"] = None  # any import of torch now fails
        import coflowopt
        from coflowopt.workloads.dags import tpcds_like
        inst = tpcds_like(2, ports=6, seed=1)
        for prm in ({}, {"converter": "aligned"}, {"rerank": "events"}):
            r = coflowopt.run(inst, "deepweave", params=prm, seed=0)
            assert r.summary()["coflows"] == inst.n_coflows
        print("ok")
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
    probe = subprocess.run([sys.executable, "-c", "import sys, coflowopt; "
                            "from coflowopt.schedulers.registry import get; "
                            "get('deepweave').params_class; "
                            "print('torch' in sys.modules)"],
                           capture_output=True, text=True, timeout=300)
    assert probe.stdout.strip() == "False", probe.stderr


@pytest.mark.parametrize("across", ["arrival", "global"])
def test_events_on_the_stepper_equal_the_reference_engine(across):
    """rerank='events' on the compiled stepper = the same re-ranking as a Python callback on the
    reference engine (a second, independent event loop) = the callback on the open compiled
    engine: equal completion times, validated."""
    for inst in (tpcds_like(2, ports=5, seed=3, arrival_rate=1e-3),
                 ggen_fan_in_fan_out(2, ports=5, nodes=(4, 12), seed=4, arrival_rate=1e-3)):
        a = coflowopt.run(inst, "deepweave", params={"rerank": "events", "across": across,
                                                     "engine": "stepper"})
        b = coflowopt.run(inst, "deepweave", params={"rerank": "events", "across": across,
                                                     "engine": "reference"})
        c = coflowopt.run(inst, "deepweave", params={"rerank": "events", "across": across,
                                                     "engine": "fast"})
        assert a.valid.meta["engine"] == "stepper" and a.valid.meta["steps"] > 0
        assert c.valid.meta["engine"] == "fast"
        np.testing.assert_allclose(a.valid.coflow_completion, b.valid.coflow_completion,
                                   rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(c.valid.coflow_completion, b.valid.coflow_completion,
                                   rtol=1e-9, atol=1e-9)


def test_events_with_a_constant_policy_is_the_static_order(tmp_path):
    """A checkpoint whose network outputs one constant for every node: every epoch's ranking is
    the tie rule (job arrival, then position), so the events run equals order_schedule on that
    static order (composed by hand)."""
    cfg = DeepWeaveConfig()
    params = {k: (v if k.startswith("norm.") else np.zeros_like(v))
              for k, v in init_params(cfg, 0).items()}
    inst = tpcds_like(2, ports=5, seed=6, arrival_rate=1e-3)
    want = validate(inst, order_schedule(inst, order=np.lexsort(
        (np.arange(inst.n_coflows), inst.coflow_job, inst.job_release[inst.coflow_job]))))
    path = tmp_path / "zero.npz"
    save_checkpoint(path, params, cfg, {"trained": False, "seed": 0})
    r = coflowopt.run(inst, "deepweave", params={"checkpoint": str(path), "rerank": "events"})
    np.testing.assert_allclose(r.valid.coflow_completion, want.coflow_completion)


def test_shipped_checkpoint_is_trained_and_says_how():
    info = deepweave_checkpoint_info()
    assert info["trained"] is True and info["iterations"] > 0
    for k in ("seed", "workload", "ports", "wall_time_s", "eval_mean_jct",
              "sincronia_mean_jct", "eval_untrained_mean_jct"):
        assert k in info, k
