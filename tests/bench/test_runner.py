"""The runner: same rows on any executor, resume after a stop or a kill, errors as rows."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pandas as pd
import pytest
from conftest import MARKER_ENV, tiny_suite, write

from coflowopt.bench import (
    VOLATILE_COLUMNS,
    ResultsStore,
    dask_executor,
    expand,
    load_results,
    load_suite,
    run_suite,
    tidy,
    write_report,
)
from coflowopt.cli import main


def _comparable(df: pd.DataFrame) -> pd.DataFrame:
    return df.drop(columns=[c for c in VOLATILE_COLUMNS if c in df]).sort_values("key") \
        .reset_index(drop=True)


def _marks(path: Path) -> list[tuple[int, int]]:
    """``(algorithm seed, n_flows)`` of each call of bench-test-count."""
    if not path.exists():
        return []
    return [tuple(int(v) for v in x.split(":")) for x in path.read_text().split()]


def test_local_pool_and_dask_cluster_give_identical_rows(tmp_path: Path) -> None:
    pytest.importorskip("distributed")
    suite = load_suite(write(tmp_path, tiny_suite()))
    local = run_suite(suite, out=tmp_path / "local", jobs=2)
    assert (local.ran, local.failed, local.remaining) == (6, 0, 0)
    with dask_executor("local", n_workers=2) as ex:
        dask = run_suite(suite, out=tmp_path / "dask", executor=ex)
    assert (dask.ran, dask.failed) == (6, 0)
    inline = run_suite(suite, out=tmp_path / "inline", executor="inline")
    a, b, c = (_comparable(r.results()) for r in (local, dask, inline))
    assert set(a["status"]) == {"ok"} and len(a) == 6
    pd.testing.assert_frame_equal(a, b)
    pd.testing.assert_frame_equal(a, c)
    # the Dask rows ran in other processes than the local pool's
    assert set(local.results()["worker"]).isdisjoint(set(dask.results()["worker"]))


def test_stop_and_resume_does_not_redo_finished_tasks(tmp_path: Path, monkeypatch) -> None:
    marker = tmp_path / "calls.txt"
    monkeypatch.setenv(MARKER_ENV, str(marker))
    text = tiny_suite(schedulers='[[schedulers]]\nname = "bench-test-count"\n')
    suite = load_suite(write(tmp_path, text))
    out = tmp_path / "out"
    first = run_suite(suite, out=out, jobs=2, max_tasks=2)
    assert (first.ran, first.remaining, first.skipped) == (2, 4, 0)
    assert len(_marks(marker)) == 2
    second = run_suite(suite, out=out, jobs=2)
    assert (second.skipped, second.ran, second.remaining) == (2, 4, 0)
    calls = _marks(marker)
    assert len(calls) == 6 and len(set(calls)) == 6  # every task ran exactly once
    df = load_results(out)
    assert sorted(df["key"]) == sorted(t.key for t in expand(suite))
    third = run_suite(suite, out=out, jobs=2)
    assert (third.ran, third.skipped) == (0, 6) and len(_marks(marker)) == 6


def test_killed_run_resumes(tmp_path: Path, monkeypatch) -> None:
    text = tiny_suite(seeds="[0, 1, 2, 3, 4, 5, 6, 7]",
                      workloads='[[workloads]]\nname = "syn"\ngenerator = "synthetic"\n'
                                "params = { n_coflows = 6, ports = 4 }\n",
                      schedulers='[[schedulers]]\nname = "bench-test-count"\n'
                                 "params = { pause = 0.4 }\n")
    path = write(tmp_path, text)
    suite = load_suite(path)
    seed_of = {t.algorithm_seed: t.key for t in expand(suite)}
    out = tmp_path / "out"
    first_marks = tmp_path / "first.txt"
    env = {**os.environ, MARKER_ENV: str(first_marks)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "coflowopt.cli", "bench", str(path), "--out", str(out),
         "--jobs", "1", "--no-plots"], env=env, start_new_session=True,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        give_up = time.monotonic() + 60
        while time.monotonic() < give_up and len(ResultsStore(out).keys) < 2:
            time.sleep(0.05)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    done_before = set(ResultsStore(out).keys)
    assert 2 <= len(done_before) < 8
    second_marks = tmp_path / "second.txt"
    monkeypatch.setenv(MARKER_ENV, str(second_marks))
    again = run_suite(path, out=out, executor="inline")
    assert again.skipped == len(done_before) and again.remaining == 0
    redone = {seed_of[s] for s, _ in _marks(second_marks)}
    assert redone.isdisjoint(done_before)
    df = load_results(out)
    assert sorted(df["key"]) == sorted(seed_of.values()) and set(df["status"]) == {"ok"}


def test_main_process_killed_alone_resumes(tmp_path: Path, monkeypatch) -> None:
    # only the parent is SIGKILLed: its pool workers must die with it (not finish their tasks
    # holding the results folder's lock), and the same command right after resumes
    text = tiny_suite(seeds="[0, 1, 2, 3, 4, 5, 6, 7]",
                      workloads='[[workloads]]\nname = "syn"\ngenerator = "synthetic"\n'
                                "params = { n_coflows = 6, ports = 4 }\n",
                      schedulers='[[schedulers]]\nname = "bench-test-count"\n'
                                 "params = { pause = 1.0 }\n")
    path = write(tmp_path, text)
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "coflowopt.cli", "bench", str(path), "--out", str(out),
           "--jobs", "2", "--no-plots"]
    env = {**os.environ, MARKER_ENV: str(tmp_path / "first.txt")}
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        give_up = time.monotonic() + 90
        while time.monotonic() < give_up and len(ResultsStore(out).keys) < 2:
            time.sleep(0.05)
    finally:
        proc.send_signal(signal.SIGKILL)  # the main process only
        proc.wait()
    done_before = dict(ResultsStore(out).keys)
    assert 2 <= len(done_before) < 8
    again = subprocess.run(cmd, env={**os.environ, MARKER_ENV: str(tmp_path / "second.txt")},
                           capture_output=True, text=True, timeout=180)
    assert again.returncode == 0, again.stderr
    df = load_results(out)
    suite = load_suite(path)
    assert sorted(df["key"]) == sorted(t.key for t in expand(suite))  # none lost, none twice
    assert set(df["status"]) == {"ok"}
    clean = run_suite(path, out=tmp_path / "clean", executor="inline")
    pd.testing.assert_frame_equal(_comparable(df), _comparable(clean.results()))


def test_failing_algorithm_becomes_an_error_row(tmp_path: Path) -> None:
    text = tiny_suite(schedulers='[[schedulers]]\nname = "sequential"\n\n'
                                 '[[schedulers]]\nname = "bench-test-fail"\n\n'
                                 '[[schedulers]]\nname = "bench-test-infeasible"\n')
    run = run_suite(write(tmp_path, text), out=tmp_path / "out", jobs=2)
    assert (run.ran, run.failed, run.remaining) == (18, 12, 0)
    df = run.results()
    ok = df[df["scheduler"] == "sequential"]
    assert len(ok) == 6 and set(ok["status"]) == {"ok"} and ok["avg_cct"].notna().all()
    bad = df[df["scheduler"] == "bench-test-fail"]
    assert set(bad["status"]) == {"error"}
    assert bad["error"].str.contains("ValueError: this algorithm always fails").all()
    assert all((run.out / "errors" / f"{k}.txt").exists() for k in bad["key"])
    inf = df[df["scheduler"] == "bench-test-infeasible"]
    assert set(inf["status"]) == {"infeasible"} and inf["error"].str.contains("capacity").all()
    rep = write_report(run.out)
    assert "## Failed tasks" in rep.markdown and "always fails" in rep.markdown
    assert {p.name for p in rep.files} >= {"summary.md", "bars.png", "cdf_cct.png", "ratios.png"}
    # the error rows are final: a rerun does not redo them unless asked
    assert run_suite(write(tmp_path, text), out=run.out, jobs=2).ran == 0
    retry = run_suite(write(tmp_path, text), out=run.out, executor="inline", retry_errors=True)
    assert retry.ran == 12 and len(load_results(run.out)) == 18


@pytest.mark.parametrize("how", ["process-pool", "threads", "isolated"])
def test_task_past_its_time_limit_becomes_an_error_row(tmp_path: Path, how: str) -> None:
    sleeper = ('[[schedulers]]\nname = "bench-test-sleep"\nparams = { seconds = 60 }\n'
               "timeout = 0.5\n")
    text = tiny_suite(seeds="[0]", extra="isolate = true" if how == "isolated" else "",
                      schedulers='[[schedulers]]\nname = "sequential"\n\n' + sleeper)
    path = write(tmp_path, text)
    if how == "threads":
        with ThreadPoolExecutor(2) as ex:
            run = run_suite(path, out=tmp_path / "out", executor=ex)
    else:
        run = run_suite(path, out=tmp_path / "out", jobs=2)
    df = run.results()
    assert (run.ran, run.failed) == (4, 2)
    slow = df[df["scheduler"] == "bench-test-sleep"]
    assert set(slow["status"]) == {"timeout"}
    assert slow["error"].str.contains("time limit of 0.5 s").all()
    assert set(df.loc[df["scheduler"] == "sequential", "status"]) == {"ok"}


def test_cli_bench_and_report(tmp_path: Path, capsys) -> None:
    path = write(tmp_path, tiny_suite(seeds="[0, 1]"))
    out = tmp_path / "res"
    assert main(["bench", str(path), "--out", str(out), "--jobs", "2"]) == 0
    text = capsys.readouterr().out
    assert "suite tiny: 4 tasks" in text and "mean/LB" in text and "sequential" in text
    assert (out / "results.csv").exists() and (out / "report" / "summary.md").exists()
    assert main(["report", str(out), "--no-plots"]) == 0
    assert "summary.md" in capsys.readouterr().out
    # a rerun resumes: nothing left to do
    assert main(["bench", str(path), "--out", str(out), "--executor", "inline"]) == 0
    assert "4 of 4 tasks were already done" in capsys.readouterr().out


def test_cli_bad_suite_is_an_error_not_a_traceback(tmp_path: Path, capsys) -> None:
    path = write(tmp_path, tiny_suite().replace('generator = "synthetic"\n', "", 1))
    assert main(["bench", str(path), "--out", str(tmp_path / "o")]) == 2
    assert "workloads[0].generator: missing" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_cli_executor_arguments(tmp_path: Path) -> None:
    from coflowopt.bench.cli import _split_executor
    from coflowopt.cli import build_parser

    p = build_parser()
    args = p.parse_args(["bench", "--executor", "dask", "tcp://h:8786", "s.toml"])
    assert _split_executor(args) == ("dask", "tcp://h:8786") and args.suite == "s.toml"
    args = p.parse_args(["bench", "s.toml", "--executor", "dask"])
    assert _split_executor(args) == ("dask", "local")
    args = p.parse_args(["bench", "--dask", "local"])
    assert _split_executor(args) == ("dask", "local") and args.suite is None
    with pytest.raises(ValueError, match="takes no address"):
        _split_executor(p.parse_args(["bench", "s.toml", "--executor", "local", "x"]))


def test_proven_factor_shown_only_beside_its_objective_where_it_holds(tmp_path: Path) -> None:
    # Sincronia's 4 bounds weighted completion with every release 0 in its offline mode: a
    # batch trace shows it there only; the synthetic workload (arrivals over time) never does
    (tmp_path / "batch.txt").write_text("3 2\n1 0 1 0 1 1:2.0\n2 0 1 1 1 2:1.0\n")
    text = ('name = "factors"\nseeds = [0]\nmetrics = ["avg_cct", "weighted_completion"]\n'
            '[[workloads]]\nname = "batch"\ngenerator = "trace"\nparams = { path = "batch.txt" }\n'
            '[[workloads]]\nname = "syn"\ngenerator = "synthetic"\n'
            'params = { n_coflows = 8, ports = 6 }\n'
            '[[schedulers]]\nname = "sincronia"\nparams = { mode = "offline" }\n'
            '[[schedulers]]\nname = "sincronia"\nlabel = "sincronia-online"\n')
    path = write(tmp_path, text)
    run = run_suite(path, out=tmp_path / "out", executor="inline")
    t = tidy(run.results(), load_suite(path))
    assert set(t["metric"]) == {"avg_cct", "weighted_completion"}
    shown = {(r.scheduler, r.workload, r.metric) for r in t.itertuples() if r.factor}
    # the default run is the online re-ordering, which the factor does not cover
    assert shown == {("sincronia", "batch", "weighted_completion")}


def test_cli_bench_lists_failed_tasks_and_exits_nonzero(tmp_path: Path, capsys) -> None:
    text = tiny_suite(seeds="[0]", schedulers='[[schedulers]]\nname = "sequential"\n\n'
                                              '[[schedulers]]\nname = "bench-test-fail"\n'
                                              'params = { message = "boom here" }\n')
    path = write(tmp_path, text)
    assert main(["bench", str(path), "--out", str(tmp_path / "o"), "--executor", "inline",
                 "--no-plots"]) == 1
    err = capsys.readouterr().err
    assert "2 failed tasks" in err and "bench-test-fail/seed 0: error: ValueError: boom here" in err
    # asked to, the same command exits 0 (the failures are still listed)
    assert main(["bench", str(path), "--out", str(tmp_path / "o"), "--executor", "inline",
                 "--no-plots", "--allow-failures"]) == 0
    assert "boom here" in capsys.readouterr().err


def test_a_proven_infeasible_result_is_a_row_not_a_failure(tmp_path: Path, capsys) -> None:
    """CoFair with E = 0.5 (below E_MPS >= 1) proves no schedule meets its deadlines
    (NoFeasibleSchedule): a row with status "infeasible" and the one-line reason, no traceback
    file, not counted as failed; ``coflowopt bench`` exits 0; the report lists it apart from
    the failed tasks."""
    wl = ('[[workloads]]\nname = "syn-12"\ngenerator = "synthetic"\n'
          "params = { n_coflows = 12, ports = 8 }\n")
    text = tiny_suite(seeds="[0, 1]", workloads=wl, schedulers=(
        '[[schedulers]]\nname = "cofair"\nlabel = "cofair-low"\nparams = { E = 0.5 }\n\n'
        '[[schedulers]]\nname = "cofair"\n'))
    path = write(tmp_path, text)
    run = run_suite(path, out=tmp_path / "out", executor="inline")
    assert (run.ran, run.failed) == (4, 0)
    df = run.results()
    low = df[df["scheduler"] == "cofair-low"]
    assert set(low["status"]) == {"infeasible"}
    assert low["error"].str.startswith(
        "NoFeasibleSchedule: cofair: E = 0.5 is below E_MPS = ").all()
    assert not any((run.out / "errors" / f"{k}.txt").exists() for k in low["key"])
    assert set(df[df["scheduler"] == "cofair"]["status"]) == {"ok"}
    rep = write_report(run.out, load_suite(path), plots=False)
    assert "## Infeasible (proven by the scheduler)" in rep.markdown
    assert "## Failed tasks" not in rep.markdown and "2 infeasible" in rep.markdown
    s = rep.summary
    assert set(s[s["scheduler"] == "cofair-low"]["infeasible"]) == {2}
    assert set(s[s["scheduler"] == "cofair-low"]["failed"]) == {0}
    assert main(["bench", str(path), "--out", str(tmp_path / "cli"), "--executor", "inline",
                 "--no-plots"]) == 0
    assert "failed task" not in capsys.readouterr().err


def test_warm_up_record_is_the_callers(tmp_path: Path) -> None:
    # which schedulers a process has warmed up is an object its runner holds, not module
    # state: a task given the record warms up only what it lacks; one without warms up itself
    from coflowopt.bench.runner import Warmup, run_task

    suite = load_suite(write(tmp_path, tiny_suite(schedulers='[[schedulers]]\nname = "varys"\n')))
    first, second = expand(suite)[:2]
    warmup = Warmup()
    rows = [run_task(t, warmup)["row"] for t in (first, second)]
    assert [r["status"] for r in rows] == ["ok", "ok"]
    assert rows[0]["compile_seconds"] >= 0 and "compile_seconds" not in rows[1]
    assert len(warmup.keys) == 1
    alone = run_task(second)["row"]  # no record: warms up before its timed run
    assert alone["status"] == "ok" and alone["compile_seconds"] >= 0
    assert len(Warmup().keys) == 0  # a new record starts empty: nothing shared
    assert {k: v for k, v in alone.items() if k not in VOLATILE_COLUMNS} == \
        {k: v for k, v in rows[1].items() if k not in VOLATILE_COLUMNS}


def test_cold_warm_up_splits_its_compiles_over_two_processes(tmp_path: Path,
                                                               monkeypatch) -> None:
    """Before a local pool starts, a helper process warms up the DAG family and the CoflowSim
    semantics (kernels of their own) while this one warms up the fluid engine's schedulers;
    then this one warms up every scheduler (the helper's half from numba's cache): the same
    record as one process's warm-up.  With one job, no helper."""
    import multiprocessing

    from coflowopt.bench import runner

    text = tiny_suite(seeds="[0]", schedulers=(
        '[[schedulers]]\nname = "varys"\n\n[[schedulers]]\nname = "gdm"\n\n'
        '[[schedulers]]\nname = "sincronia"\n\n'
        '[[schedulers]]\nname = "sebf"\nsemantics = "coflowsim"\n\n'
        '[[schedulers]]\nname = "bench-test-fail"\n'))
    tasks = expand(load_suite(write(tmp_path, text)))
    here, beside = runner._beside_split(tasks)
    assert [t.scheduler.name for t in here] == ["varys", "sincronia"]
    assert [t.scheduler.name for t in beside] == ["gdm", "sebf"]
    if multiprocessing.get_start_method() != "fork":
        pytest.skip("the helper's stand-in below reaches a forked helper only")
    marker = tmp_path / "helper.txt"

    def written_down(ts: list) -> None:  # the (forked) helper's half, instead of compiling
        marker.write_text(" ".join(t.scheduler.name for t in ts))

    monkeypatch.setattr(runner, "_start_worker", written_down)
    serial = runner.Warmup()
    serial.run_tasks(tasks)
    two = runner.Warmup()
    runner._warm_up_beside(two, tasks, 2)
    assert marker.read_text() == "gdm sebf"
    assert two.keys == serial.keys and len(serial.keys) == 4
    marker.unlink()
    one = runner.Warmup()
    runner._warm_up_beside(one, tasks, 1)
    assert not marker.exists() and one.keys == serial.keys
