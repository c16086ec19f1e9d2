"""Lower bounds: the spec's worked example, brute force, and never above a valid schedule."""

import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import example2, instances

from coflowopt import Instance, build_instance, validate
from coflowopt import bounds as B
from coflowopt import metrics as M
from coflowopt.schedulers import sequential


def test_example2_bounds() -> None:
    # dag-coflows spec Example 2: sum_j w_j (rho_j + max(T_j, Delta_j)) = 15, makespan bound 6
    inst = example2()
    assert B.job_completion_bound(inst).tolist() == [5.0, 5.0]
    assert B.weighted_jct_bound(inst) == 15.0
    assert B.makespan_bound(inst) == 6.0


def test_smith_hand_worked() -> None:
    # one port, sizes 1, 2, 3 with weights 1, 1, 6: WSPT order 3 (ratio .5), 1, 2 ->
    # completions 3, 4, 6 -> 6*3 + 1*4 + 1*6 = 28
    inst = build_instance(1, coflows=[[(0, 0, 1.0)], [(0, 0, 2.0)], [(0, 0, 3.0)]])
    w = np.array([1.0, 1.0, 6.0])
    assert B.smith_port_bound(inst, w) == 28.0


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 5), st.integers(1, 4)), min_size=1, max_size=5))
def test_smith_equals_brute_force_on_one_port(jobs: list[tuple[int, int]]) -> None:
    # a single port with no releases is 1||sum w C: the best sequential order is optimal
    inst = build_instance(1, coflows=[[(0, 0, float(p))] for p, _ in jobs])
    w = np.array([float(x) for _, x in jobs])
    best = min(
        float(np.dot(w, validate(inst, sequential(inst, order=list(order))).coflow_completion))
        for order in itertools.permutations(range(len(jobs)))
    )
    assert abs(B.smith_port_bound(inst, w) - best) < 1e-9


@settings(max_examples=80, deadline=None)
@given(instances())
def test_bounds_below_a_valid_schedule(inst: Instance) -> None:
    v = validate(inst, sequential(inst))
    lb = B.lower_bounds(inst)
    assert lb["weighted_completion"] <= M.weighted_completion(v) + 1e-9
    assert lb["sum_cct"] <= M.cct(v).sum() + 1e-9
    assert lb["weighted_jct"] <= M.weighted_jct(v) + 1e-9
    assert lb["makespan"] <= v.coflow_completion.max() + 1e-9
    assert np.all(B.coflow_completion_bound(inst) <= v.coflow_completion + 1e-9)


def test_lp_bound_is_certified_and_below_the_optimum() -> None:
    # two unit coflows on one port, one coflow per job: OPT = 1 + 2 = 3 for weighted CCT and
    # weighted JCT alike (either order); Smith on the one port gives 3, the job bound 2
    inst = build_instance(1, coflows=[[(0, 0, 1.0)], [(0, 0, 1.0)]])
    rows = B.all_bounds(inst, lp=True)
    lp_rows = [b for b in rows if b.name == "interval LP"]
    assert {b.objective for b in lp_rows} == {"weighted_completion", "sum_completion",
                                             "weighted_jct"}
    for b in lp_rows:
        assert b.certified and 0 < b.value <= 3.0 and b.seconds >= 0
    plain, with_lp = B.lower_bounds(inst), B.lower_bounds(inst, lp=True)
    assert plain["weighted_completion"] == 3.0 and plain["weighted_jct"] == 2.0
    assert with_lp["weighted_completion"] == 3.0
    assert 2.0 < with_lp["weighted_jct"] <= 3.0  # the LP beats the job bound here


def test_lp_bound_improves_on_dag_jobs() -> None:
    inst = example2()
    plain, with_lp = B.lower_bounds(inst), B.lower_bounds(inst, lp=True)
    assert set(plain) == set(with_lp)
    for k in plain:
        assert with_lp[k] >= plain[k]
    seq = validate(inst, sequential(inst))
    assert with_lp["weighted_jct"] <= M.weighted_jct(seq) + 1e-9


def test_bound_command(capsys, tmp_path) -> None:
    from coflowopt.cli import main
    from coflowopt.interchange import save_instance

    path = tmp_path / "two.json"
    save_instance(build_instance(1, coflows=[[(0, 0, 1.0)], [(0, 0, 2.0)]]), path)
    assert main(["bound", str(path)]) == 0
    out = capsys.readouterr().out
    assert "interval LP" in out and "certified" in out and "per-port Smith" in out
    assert "sum of CCTs (C - r) >= 4.000" in out  # one port, sizes 1 and 2: 1 + 3 by hand
    assert main(["bound", str(path), "--no-lp"]) == 0
    assert "interval LP" not in capsys.readouterr().out
    assert main(["bound", str(path), "--batch"]) == 2


def test_bench_rows_use_the_certified_lp_bound(tmp_path, monkeypatch) -> None:
    import pandas as pd

    from coflowopt.bench import load_suite, run_suite, summarize, tidy, to_markdown
    from coflowopt.bench.runner import LP_BOUND_ENV

    suite_toml = ('name = "lb"\nseeds = [0]\nmetrics = ["weighted_completion"]\n'
                  '[[workloads]]\nname = "syn"\ngenerator = "synthetic"\n'
                  'params = { n_coflows = 12, ports = 6 }\n'
                  '[[schedulers]]\nname = "sequential"\n')
    (tmp_path / "s.toml").write_text(suite_toml)
    suite = load_suite(tmp_path / "s.toml")
    plain = run_suite(suite, out=tmp_path / "plain", executor="inline").results()
    monkeypatch.setenv(LP_BOUND_ENV, "60")
    with_lp = run_suite(suite, out=tmp_path / "lp", executor="inline").results()
    assert isinstance(with_lp, pd.DataFrame) and bool(with_lp["lb_lp"].iloc[0])
    a = float(plain["lb_weighted_completion"].iloc[0])
    b = float(with_lp["lb_weighted_completion"].iloc[0])
    assert a <= b <= float(with_lp["weighted_completion"].iloc[0])
    text = to_markdown(summarize(tidy(with_lp, suite), suite), suite, with_lp)
    assert "certified interval-LP bound included" in text
